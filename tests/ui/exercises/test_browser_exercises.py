"""End to end, in headless Chromium: a learner walks lesson 2's and lesson 4's exercises: predicts,
is wrong once and sees the answer revealed, solves a make-it-happen task, goes on by Next, and
reloads the page with the progress kept (the URL)."""

from __future__ import annotations

import pytest
from browser_support import OPEN_SECONDS, App  # fixtures: conftest's pytest_plugins
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from attnviz.lessons.exercises import get_exercise

pytestmark = [pytest.mark.browser, pytest.mark.slow]
VARIANT = 41  # the numbers both lessons draw (`?variant=`)


def _open_lesson(app: App, number: int, title: str, query: str = f"?variant={VARIANT}") -> None:
    app.open(f"{app.url}/lesson-{number}{query}", charts=1)
    heading = app.page.get_by_role("heading", name=f"{number}. {title}")
    expect(heading).to_be_visible(timeout=OPEN_SECONDS * 1000)
    app.page.get_by_role("heading", name="Exercises").scroll_into_view_if_needed()


def _tab(app: App, name: str, exercise: str) -> None:
    """Opens an exercise's tab and waits for the run it starts to draw that exercise (only the
    open tab's exercise is drawn), so the next click lands on a widget that stays."""
    app.page.get_by_role("tab", name=name).click()
    expect(app.page.get_by_role("tab", name=name)).to_have_attribute(
        "aria-selected", "true", timeout=OPEN_SECONDS * 1000
    )
    expect(app.page.locator(f"[class*='st-key-ex_answer_{exercise}']").first).to_be_visible(
        timeout=OPEN_SECONDS * 1000
    )
    _idle(app, f"exercise {exercise} drawn")


def _choose(app: App, key: str, option: str) -> None:
    """Picks an option of a select box; opens it again if a rerun closed it before it showed."""
    for _ in range(3):
        _idle(app, f"the page before {key}")
        app.page.locator(f".st-key-{key}").click()
        choice = app.page.get_by_role("option", name=option, exact=True)
        try:
            choice.wait_for(timeout=5_000)
        except PlaywrightTimeout:
            app.page.keyboard.press("Escape")
            continue
        choice.click()
        return
    raise AssertionError(f"the select box {key} never showed its option {option!r}")


def _idle(app: App, what: str) -> None:
    app.wait_until("(page) => page.idle()", None, what, OPEN_SECONDS)


def _told(app: App, text: str) -> None:
    expect(app.page.get_by_text(text, exact=False).first).to_be_visible(timeout=OPEN_SECONDS * 1000)


def test_a_learner_walks_lessons_2_and_4(app: App):
    # lesson 2, exercise 2a: the slider left at 0.5, committed: wrong, the weights revealed
    _open_lesson(app, 2, "Softmax turns scores into weights")
    guess = get_exercise("2a")
    variant = guess.make(VARIANT)
    assert abs(guess.solution(variant) - 0.5) > 0.1  # so 0.5 is a wrong guess
    assert "The query's weights" not in app.read("(page) => page.titles()")  # hidden till then
    app.page.get_by_role("button", name="Commit my guess").first.click()
    app.wait_for_chart("The query's weights")
    _told(app, guess.check(variant, 0.5).message.split("**")[0])
    expect(app.page.get_by_role("button", name="Commit my guess").first).to_be_disabled()
    # 2b: a query of the learner's own that puts 0.9 on the key
    _tab(app, "2. Put 0.9 on one key", "2b")
    make = get_exercise("2b")
    box = app.page.locator(".st-key-ex_answer_2b_Q textarea")
    box.fill(make.solution(make.make(VARIANT))["Q"])
    box.press("Control+Enter")
    _told(app, "Solved")
    _idle(app, "the solved exercise")
    app.wait_until(
        "(page, v) => window.location.search.includes('done=2b')"
        " && window.location.search.includes('variant=' + v)", str(VARIANT),
        "the solved exercise in the URL", OPEN_SECONDS,
    )  # fmt: skip
    # on to lesson 4 by Next: the progress and the numbers go along
    app.page.get_by_role("link", name="Next: Why divide by √d_k").first.click()
    expect(app.page.get_by_role("heading", name="3. Why divide by √d_k")).to_be_visible(
        timeout=OPEN_SECONDS * 1000
    )
    app.wait_until(  # the lesson opened writes the session's progress into its URL
        "() => window.location.search.includes('done=2b')", None, "the progress in the URL",
        OPEN_SECONDS,
    )  # fmt: skip
    app.page.get_by_role("link", name="Next: Masks: causal, padding, −∞ or −1e9").first.click()
    expect(
        app.page.get_by_role("heading", name="4. Masks: causal, padding, −∞ or −1e9")
    ).to_be_visible(timeout=OPEN_SECONDS * 1000)
    app.page.get_by_role("heading", name="Exercises").scroll_into_view_if_needed()
    # 4b: predict what a fully masked row adds up to: wrong, then told and shown
    _tab(app, "2. Does a fully masked row sum to 1?", "4b")
    app.page.get_by_text("It adds up to 1", exact=True).click()
    app.page.locator(".st-key-ex_check_4b button").click()
    predict = get_exercise("4b")
    _told(app, predict.check(predict.make(VARIANT), "It adds up to 1").message[:40])
    # 4d: the controls set so that the fully masked row gives zeros, not NaN
    _tab(app, "4. A fully masked row without NaN", "4d")
    solution = get_exercise("4d").solution(get_exercise("4d").make(VARIANT))
    _choose(app, "ex_answer_4d_causal", solution["causal"])
    _idle(app, "the causal mask set")
    padding = app.page.locator(".st-key-ex_answer_4d_padding input")
    padding.fill(str(solution["padding"]))
    padding.press("Enter")
    _idle(app, "the padding set")
    _choose(app, "ex_answer_4d_mask_value", solution["mask_value"])
    _told(app, "Solved")
    _idle(app, "4d solved")
    # a reload keeps the progress: the URL carries it
    app.page.reload()
    app.page.get_by_role("heading", name="Exercises").wait_for(timeout=OPEN_SECONDS * 1000)
    _told(app, "1 of 4 done")
    assert "done=2b.4d" in app.page.url
    expect(app.page.get_by_role("tab", name="4. A fully masked row without NaN ✓")).to_be_visible()
    assert app.exceptions() == 0 and app.errors == []
