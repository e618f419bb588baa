"""End to end, the trained models in headless Chromium: training in Learn, the model view's
head map, the lessons from the start page to the last, and `attnviz view` of your own model.

Fixtures, the `App` helper and the labels live in `browser_support.py`.
"""

from __future__ import annotations

import numpy as np
import pytest
from app_support import grid_blocks
from browser_support import (  # fixtures: conftest's pytest_plugins
    WAIT_SECONDS,
    App,
    close,
)
from playwright.sync_api import expect

from attnviz.ui.frame.server_config import WARM_UP_ENV

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_learn_trains_a_tiny_model_and_the_probe_attention_changes(app: App):
    # Reverse, 500 pairs, 3 epochs: a few seconds. The probe heatmap is redrawn after every
    # epoch; the slider under it goes back to earlier epochs, down to the untrained model.
    query = "learn?task=reverse&learn_model=Train&learn_epochs=3&learn_pairs=500"
    app.open(f"{app.url}/{query}", charts=0)
    app.page.get_by_role("button", name="Train").click()
    expect(app.page.get_by_text("Trained 3 epochs")).to_have_count(1, timeout=180_000)
    # the model's tabs are drawn by the last run after training: the slider stays put from here
    expect(app.page.get_by_role("tab", name="Translate")).to_have_count(1, timeout=60_000)
    last = app.weights(app.wait_for_title_starting("Epoch 3: "))  # epoch 3's probe heatmap
    slider = app.page.get_by_role("slider", name="Probe attention after epoch (0 = untrained)")
    slider.focus()
    slider.press("Home")  # it keeps its value across reruns: it has a key
    first = app.weights(app.wait_for_title_starting("Epoch 0: "))
    assert len(last) >= 1 and len(first[0]) == len(last[0])  # same input, other epochs
    assert not close(last[: len(first)], first[: len(last)], tol=1e-3)  # attention moved
    assert app.exceptions() == 0 and app.errors == []


def test_model_view_click_on_a_head_enlarges_it(app: App):
    # The shipped dates Transformer: every head of the three attentions. The enlarged head
    # starts as the best-aligned cross head; clicking another square of the cross head map
    # enlarges that head: its heatmap, title and weights.
    app.open(f"{app.url}/?mode=Learn&learn_arch=Transformer&learn_tview=Model+view", charts=8)
    first = app.wait_for_title_starting("cross · ")  # the enlarged head
    squares = app.page.locator(".st-key-mv_map_cross path.point")
    expect(squares).to_have_count(8, timeout=WAIT_SECONDS * 1000)  # the cross head map
    target = next(i for i in range(8) if f"layer {i // 4} · head {i % 4}" not in first)
    head = f"layer {target // 4} · head {target % 4}"
    app.click_point(app.page.locator(".st-key-mv_map_cross"), target, head)
    title = f"cross · {head}"
    app.wait_for_chart(title)  # enlarged
    enlarged = np.array(app.weights(title), dtype=float)
    grid = app.page.locator(".st-key-mv-grid-cross .js-plotly-plot")
    joined = grid.evaluate(
        "(d) => d._fullData.filter(t => t.coloraxis === 'coloraxis')[0].z"
        ".map(r => Array.from(r, x => Number.isFinite(x) ? x : 0))"
    )  # the grid's one heatmap: every head's block
    thumbnail = grid_blocks(joined, 2, 4)[target // 4, target % 4]
    assert np.allclose(enlarged, thumbnail, atol=1e-6)  # the same head
    assert np.allclose(enlarged.sum(axis=1), 1, atol=1e-5)
    assert app.exceptions() == 0 and app.errors == []


def test_a_newcomer_walks_the_lessons_from_the_start_page_to_the_last(app: App):
    # The start page's way in, then Next, lesson after lesson: each has its own URL and shows
    # its page prepared (a chart, or Learn's Train button before anything is trained).
    from attnviz.lessons import LESSONS

    app.open(f"{app.url}/", charts=1)  # the start page: one query's weights
    assert "Weights of the query “sat”" in app.chart_titles()
    app.page.get_by_role("link", name=f"Lessons: {len(LESSONS)} steps").click()
    for lesson in LESSONS:
        heading = app.page.get_by_role("heading", name=f"{lesson.number}. {lesson.title}")
        expect(heading).to_be_visible(timeout=WAIT_SECONDS * 1000)
        app.wait_until(
            "(page, slug) => page.idle() && window.location.pathname.endsWith('/' + slug)",
            lesson.slug, f"{lesson.slug}'s page",
        )  # fmt: skip
        if lesson.setup.get("source") == "Train":
            expect(app.page.get_by_role("button", name="Train")).to_be_visible()
        else:
            app.wait_for_charts(1)
        assert app.exceptions() == 0 and app.alerts() == [], lesson.slug
        if lesson.number < len(LESSONS):
            following = LESSONS[lesson.number]
            app.page.get_by_role("link", name=f"Next: {following.title}").first.click()
    expect(app.page.get_by_role("link", name="Next:")).to_have_count(0)  # the end of the path
    assert app.errors == []


@pytest.fixture(scope="module")
def your_model_url(chromium_path, tmp_path_factory):
    """`attnviz view` of a tiny GPT-2 preset (written here), as its own server."""
    import sys

    from user_models import gpt2_preset

    from deploy import servers

    folder = gpt2_preset(tmp_path_factory.mktemp("view") / "gpt2")
    port = servers.free_port()
    command = [sys.executable, "-m", "attnviz.cli", "view", str(folder), "--port", str(port),
               "--host", "127.0.0.1"]  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    # without the warm-up, as the session's server (`app_url`): it would build every shipped
    # model (~20 s of CPU) beside this test's browser, and this page uses none of them
    no_warm_up = {WARM_UP_ENV: "0"}
    server = servers.wait_healthy(
        servers.spawn("attnviz-view", command, servers.ROOT, url, no_warm_up)
    )
    try:
        yield url, folder
    finally:
        server.stop()


def test_your_model_click_a_head_then_open_it_step_by_step(open_app, your_model_url):
    # `attnviz view` of a GPT-2 preset: its heads on the typed text; a click on a square of the
    # head map enlarges that head, whose weights are inspect's; step by step in the explorer
    # gives them again.
    import attnviz
    from attnviz.heads.model_text import text_inputs
    from attnviz.heads.user_model import load_model

    url, folder = your_model_url
    text = "the cat sat on the mat"
    user = load_model(folder)
    calls = attnviz.inspect(user.model, text_inputs(user, text).inputs).calls
    # the first page of a server just started: it loads the model and runs it (slow under load)
    address = f"{url}/model?model_text={text.replace(' ', '+')}"
    app = open_app().open(address, charts=4, timeout=3 * WAIT_SECONDS)
    app.wait_for_chart("self · layer 1 · head 0")  # the last layer's head 0 first
    expect(app.page.get_by_text("Next token", exact=True)).to_be_visible()
    app.click_point(app.page.locator(".st-key-mv_map_self"), 1, "layer 0 · head 1")
    expected = calls[0].weights[0, 1].tolist()
    app.wait_for_weights(expected, title="self · layer 0 · head 1", tol=1e-5)
    app.page.get_by_role(
        "button", name="Open this head step by step in the Matrices explorer"
    ).click()
    app.wait_for_weights(expected, tol=1e-5)  # the explorer's "Attention weights"
    assert "/matrices" in app.location()
    assert app.exceptions() == 0 and app.alerts() == [] and app.errors == []
