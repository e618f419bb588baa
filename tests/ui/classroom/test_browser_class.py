"""A class end to end, in Chromium, over two replicas behind nginx that share one Redis (issue
#42): the teacher on a 1280 × 720 projector and three students on 390 px phones, each in a
browser context of its own, two students placed on replica r1 and one on r2 by nginx's cookie
(the teacher on r2).

The teacher starts a class from lesson 1's presenter view; the students join by the link's code;
the teacher moves the class to exercise 1b and asks its question; the students answer (two the
key that holds, one another); the projector counts 3 of 3 and draws how many picked each key;
Reveal reaches every phone. Then r1 is killed (SIGKILL): its students' pages open a new websocket
through nginx to r2 by themselves and are still in the class with their answers (a reloaded page
shows its own answer's verdict, from the store alone), and follow the teacher's next question.
Then Redis is killed and started again: the answers it acknowledged before are all there, and an
answer sent after the restart counts. The right key is worked out here in float64 numpy from the
question's numbers; every wait is for a condition in the page, never a sleep.

Needs Debian's Chromium, nginx and redis-server (`redis_support`, `browser_support`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser_support import OPEN_SECONDS, WAIT_SECONDS, App
from playwright.sync_api import expect
from redis_support import ClusterWithRedis

from attnviz.classroom import Classroom
from attnviz.classroom.answers import read_record
from attnviz.classroom.redis_store import RedisStore
from attnviz.lessons import LESSONS
from attnviz.lessons.exercises import get_exercise

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROJECTOR = {"width": 1280, "height": 720}  # the teacher's desktop, on the projector
PHONE = {"width": 390, "height": 844}  # px: a phone's screen (as tests/ui/test_browser_phone.py)
LESSON, EXERCISE = 1, "1b"  # "Which key wins?": pick one of three keys
TEACHER_ON = "r2"  # the replica the teacher's page stays on
PLACED = ("r1", "r1", "r2")  # each student's replica, by nginx's cookie
NICKNAMES = ("Ada", "", "Cy")
VICTIM = "r1"
RECONNECT_S = 60  # most time a page may take to open its new websocket (a failure bound)
ROOM_CHART = "How the room answered"
BARS = """(page, title) => {
  const div = page.chart(title);
  const bars = div && div._fullData[0];
  return bars ? Object.fromEntries(Array.from(bars.x, (x, i) => [x, Number(bars.y[i])])) : null;
}"""  # the bar chart `title`'s height per option
PAGE_HEIGHT = """() => Math.max(window.innerHeight, ...Array.from(
  document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]'),
  e => e.scrollHeight))"""
TO_TOP = """() => document.querySelectorAll(
  '[data-testid="stMain"], [data-testid="stAppViewContainer"]').forEach(e => e.scrollTo(0, 0))"""
TWO_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


@dataclass
class Student:
    """One student's phone: its page, the replica its cookie names, its nickname."""

    app: App
    placed: str
    nickname: str

    def sees(self, text: str, timeout: float = WAIT_SECONDS) -> None:
        """Wait until the phone shows `text` (a part of an element's text)."""
        see(self.app, text, timeout)


def see(app: App, text: str, timeout: float = WAIT_SECONDS) -> None:
    """Wait until the page shows `text` (a part of an element's text)."""
    expect(app.page.get_by_text(text).first).to_be_visible(timeout=timeout * 1000)


def served_by(app: App) -> str:
    """The replica nginx sends this browser's requests to now (its response header)."""
    response = app.page.context.request.get(f"{app.url}/_stcore/health")
    return response.headers.get("x-attnviz-replica", "")


def right_key(room: Classroom, code: str) -> tuple[str, str]:
    """The asked question's answer label and its key that holds, worked out in float64 numpy from
    the numbers the class's seed draws: the largest dot score q_i · k_j of the query asked."""
    _, variant = room.question(room.state(code))
    q, k, i = variant.data["q"], variant.data["k"], variant.data["query"]
    scores = np.asarray(q, np.float64)[i] @ np.asarray(k, np.float64).T  # (3,) query i's scores
    return variant.answer.label, f"key {int(np.argmax(scores))}"


@pytest.fixture
def devices(browser, tabs, request, tmp_path: Path) -> Iterator[list[Any]]:
    """The pages the test opens (`devices.append(page)`): on a failure each is screenshotted
    into the test's tmp dir; at the end the phones' contexts are closed, the teacher's tab
    handed back."""
    pages: list[Any] = []
    yield pages
    report = getattr(request.node, "rep_call", None)
    for n, page in enumerate(pages):
        if report is not None and report.failed:
            with contextlib.suppress(Exception):
                page.screenshot(path=str(tmp_path / f"failed-{n}.png"), full_page=True)
        if n == 0 and not (report is not None and report.failed):
            tabs.give_back(page)
        else:
            tabs.discard(page)


def _teacher(tabs, cluster: ClusterWithRedis, devices: list[Any]) -> tuple[App, str]:
    """The teacher's projector on lesson 1's presenter view: Start a class; its code."""
    page = tabs.take()
    devices.append(page)
    page.set_viewport_size(PROJECTOR)
    page.context.add_cookies([cluster.cookie_for(TEACHER_ON)])
    teacher = App(page, cluster.url).open(f"{cluster.url}/lesson-{LESSON}?present=true", charts=1)
    see(teacher, f"{LESSON}. {LESSONS[LESSON - 1].title}")
    teacher.page.get_by_role("button", name="Start a class").click()
    teacher.wait_until(
        "(page) => page.idle() && page.query('class').length === 1 && page.query('class')[0]",
        None, "the class's code in the teacher's link",
    )  # fmt: skip
    code = teacher.query()["class"][0]
    see(teacher, f"{cluster.url}/class?code={code}")  # the join link, through nginx
    expect(teacher.page.get_by_text(code, exact=True).first).to_be_visible()  # the code, large
    qr = teacher.page.locator('[data-testid="stImage"] img')  # the QR code, drawn
    expect(qr).to_have_count(1)
    assert qr.evaluate("img => img.complete && img.naturalWidth") > 0
    assert served_by(teacher) == TEACHER_ON
    return teacher, code


def _students(browser, cluster: ClusterWithRedis, code: str, devices: list[Any]) -> list[Student]:
    """Three phones open the join link at once, each on its replica, and join."""
    students = []
    for placed, nickname in zip(PLACED, NICKNAMES, strict=True):
        context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
        context.set_default_timeout(WAIT_SECONDS * 1000)
        context.add_cookies([cluster.cookie_for(placed)])
        devices.append(context.new_page())
        app = App(devices[-1], cluster.url).start_loading(f"{cluster.url}/class?code={code}")
        students.append(Student(app, placed, nickname))
    for student in students:
        join = student.app.page.get_by_role("button", name="Join the class")
        join.wait_for(timeout=OPEN_SECONDS * 1000)
        field = student.app.page.get_by_label("The class's code, from the projector", exact=True)
        expect(field).not_to_have_value("")  # from the link; waited for, not read once: the
        # button may show before the field's value does
        student.app.page.get_by_label("Your nickname (optional)", exact=True).fill(student.nickname)
        join.click()
    for student in students:
        student.sees(f"Class {code} · lesson {LESSON}", OPEN_SECONDS)
        student.sees("Waiting for the teacher's question")
        assert served_by(student.app) == student.placed
        assert student.app.query()["me"]  # the student's own link: back in after a reload
    students[0].sees(f"You are in as {NICKNAMES[0]}.")
    return students


def _choose_target(teacher: App, option: str, tries: int = 3) -> None:
    """Pick where the class goes, as a person does: open the list, and open it again if a rerun
    of the page closed it before the option could be picked."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    box = teacher.page.get_by_role("combobox", name="Where the class goes", exact=True)
    choice = teacher.page.get_by_role("option", name=option, exact=True)
    for _ in range(tries):
        box.click()
        try:
            choice.click(timeout=5000)
            return
        except PlaywrightTimeout:
            teacher.page.keyboard.press("Escape")
    raise AssertionError(f"could not pick {option!r} in {tries} tries")


def _answer(student: Student, label: str, pick: str, timeout: float = WAIT_SECONDS) -> None:
    """The student picks `pick` and sends it; the page says it is in."""
    student.app.choose(label, pick)
    student.app.page.get_by_role("button", name="Send my answer").click()
    student.sees(f"Your answer is in: {pick}.", timeout)


def _room(teacher: App, answered: int, bars: dict[str, int]) -> None:
    """Wait until the projector counts `answered` of 3 and draws `bars` (answers per key)."""
    see(teacher, f"{answered} of 3 answered")
    teacher.wait_until(
        f"(page, [title, bars]) => JSON.stringify(({BARS})(page, title)) === JSON.stringify(bars)",
        [ROOM_CHART, bars], f"the room's answers {bars}",
    )  # fmt: skip


def _shoot(app: App, path: Path) -> Path:
    """A picture of the whole page (the viewport made as tall as the page for it: Streamlit
    scrolls its main block, not the document); the viewport as it was after."""
    size = app.page.viewport_size
    app.page.evaluate(TO_TOP)
    height = app.page.evaluate(PAGE_HEIGHT)
    app.page.set_viewport_size({"width": size["width"], "height": min(height, 8000)})
    app.page.evaluate(TWO_FRAMES)  # the charts laid out for the new height
    app.page.screenshot(path=str(path))
    app.page.set_viewport_size(size)
    print(f"screenshot: {path}")
    return path


def test_a_class_across_replicas_survives_a_lost_replica_and_a_redis_restart(
    browser, tabs, cluster_with_redis: ClusterWithRedis, devices, tmp_path: Path
):
    cluster = cluster_with_redis
    room = Classroom(RedisStore.from_url(cluster.store.url))  # what the store holds
    teacher, code = _teacher(tabs, cluster, devices)
    students = _students(browser, cluster, code, devices)
    see(teacher, "3 joined")
    # The teacher moves the class to exercise 1b: every phone shows it, then asks its question.
    _choose_target(teacher, f"Exercise {EXERCISE}: {get_exercise(EXERCISE).title}")
    ask = teacher.page.get_by_role("button", name="Ask this question")
    expect(ask).to_be_enabled()  # the buttons drawn again, for the exercise chosen
    teacher.page.get_by_role("button", name="Move the class here").click()
    for student in students:
        student.sees(f"The teacher is at exercise {EXERCISE}.")
    ask.click()
    for student in students:
        student.sees(f"Question 1: {get_exercise(EXERCISE).title}")
    label, right = right_key(room, code)
    wrong = f"key {(int(right[-1]) + 1) % 3}"
    picks = (right, wrong, right)
    for student, pick in zip(students, picks, strict=True):  # the first check imports Keras
        _answer(student, label, pick, OPEN_SECONDS)
    _room(teacher, 3, {f"key {j}": picks.count(f"key {j}") for j in range(3)})
    # Reveal: on the projector and on every phone, each with its own answer's verdict.
    teacher.page.get_by_role("button", name="Reveal the answer").click()
    see(teacher, "2 of 3 answers hold")
    see(teacher, f"The answer: {right}")
    for student, pick in zip(students, picks, strict=True):
        student.sees(f"The answer: {right}")
        student.sees(f"Right: {right}" if pick == right else "Not this time")
        expect(student.app.page.get_by_role("button", name="Send my answer")).to_have_count(0)
    teacher.page.screenshot(path=str(tmp_path / "projector-revealed-720.png"))  # as shown
    _shoot(teacher, tmp_path / "projector-revealed.png")
    _shoot(students[1].app, tmp_path / "phone-revealed.png")

    _lose_a_replica(cluster, room, code, teacher, students, picks, right)
    _restart_redis(cluster, room, code, teacher, students, label, picks, right)
    for app in (teacher, *(s.app for s in students)):
        assert app.exceptions() == 0 and app.alerts() == [] and app.errors == []


def _lose_a_replica(cluster, room, code, teacher, students, picks, right) -> None:
    """r1 dies: its students' pages reconnect through nginx to r2, still in the class with their
    answers (a reload shows the own answer's verdict from the store), and follow the next
    question; the projector still counts 3 of 3."""
    moved = [s for s in students if s.placed == VICTIM]
    with contextlib.ExitStack() as reconnections:
        for student in moved:
            reconnections.enter_context(student.app.page.expect_websocket(
                lambda socket: socket.url.endswith("/_stcore/stream"),
                timeout=RECONNECT_S * 1000,
            ))  # fmt: skip
        cluster.kill_replica(VICTIM)
    assert all(served_by(s.app) == TEACHER_ON for s in students)
    reloaded = moved[-1]  # answered the wrong key
    reloaded.app.page.reload()
    reloaded.sees(f"Class {code} · lesson {LESSON}", OPEN_SECONDS)
    reloaded.sees(f"The answer: {right}")
    reloaded.sees("Not this time")  # its own answer, read from the store by r2
    state = room.state(code)
    assert (len(room.members(code)), room.tally(state).answered) == (3, 3)
    see(teacher, "3 of 3 answered")
    see(teacher, "2 of 3 answers hold")


def _restart_redis(cluster, room, code, teacher, students, label, picks, right) -> None:
    """Question 2 is asked; two answers are acknowledged; Redis is killed and started again:
    they are still counted, the first question's answers are all kept, and a third answer sent
    after the restart counts."""
    teacher.page.get_by_role("button", name="Ask this question").click()
    for student in students:  # r1's students too, on r2 now
        student.sees(f"Question 2: {get_exercise(EXERCISE).title}")
    before, after = (students[0], students[2]), students[1]
    for student in before:
        _answer(student, label, right)
    _room(teacher, 2, {f"key {j}": 2 * (right == f"key {j}") for j in range(3)})
    cluster.restart_redis(crash=True)
    assert _stored(room, code, 1, students) == list(picks)  # question 1's, all kept
    assert _stored(room, code, 2, students) == [right, None, right]
    _answer(after, label, picks[1])
    counts = {f"key {j}": 2 * (right == f"key {j}") + (picks[1] == f"key {j}") for j in range(3)}
    _room(teacher, 3, counts)
    assert _stored(room, code, 2, students) == [right, picks[1], right]


def _stored(room: Classroom, code: str, question: int, students: list[Student]) -> list:
    """Each student's answer to `question` as the store holds it (None: none), by the member
    id in the student's own link."""
    held = room.store.answers(code, question)
    members = [student.app.query()["me"][0] for student in students]
    return [json.loads(read_record(held[m])[0]) if m in held else None for m in members]
