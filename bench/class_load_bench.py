"""Class load: a class in the room on 2 replicas behind nginx with Redis. 200 students (`--quick`:
40) join a teacher's class; the teacher makes 5 moves and asks 5 questions; the room answers.

As in the load section (`load_bench`), every client is a Streamlit session spoken to over its
websocket as its page would speak (`pages.StreamlitSession`), with no browser: the figures
measure the servers. Each first asks nginx for its cookie, as a browser does, and sticks to the
replica nginx gave it (new visitors go to the replicas in turn). A page's timers are kept as the
browser keeps them: an `st.fragment(run_every=…)` makes the server send `auto_rerun`, and the
page then asks for that fragment's run at that interval (a full run clears the timers and
registers them again), so a page that polls (the projector) costs what it costs in a browser.
A student's page does not poll: the server runs it again when its class moves on
(`attnviz/ui/classroom/watch.py`), and the client takes those runs as a phone does.

- The teacher: `/lesson-3?present=true` (the presenter view), driven through its own widgets:
  "Start a class", then per round "Where the class goes" + "Move the class here", the same box
  + "Ask this question", "Reveal the answer" (in the projector's fragment), finally "End the
  class". The same session is the projector: its fragment polls the class as the projector's
  page does, and "k of n answered" is read from what that page receives. So the answer's time to
  the projector is what the room sees, the projector's own polling included.
- The students: `/class?code=…` (the join link), the join form submitted with the code and, for
  every other student, a nickname. They then follow: each teacher action is shown on a page
  when the caption, question heading or revealed answer arrives. Within 20 s of a question,
  each picks a random answer valid for the question's widget (an option of the radio, a
  slider's value on its grid, a typed number), then presses "Send my answer" (two runs, as a
  phone does); one student in ten sends a second, different answer a little later (the
  answer replaces the first).

Figures:
- CPU of each replica (user + system of its process, `/proc`) in an idle window: all students
  in the class, the teacher's projector open, nothing happening. Beside it, the same sessions on
  the join form (a page without a class), measured in the same run before they join. Memory:
  each replica's resident set (VmRSS) after the rounds, beside the join form's.
- Move → shown: from the teacher's press (its rerun request sent) to the arrival at each
  student of the page showing the new place; the same for a question asked and the reveal.
  Beside the move, the floor's (`floor_class.py`, run after the class on its own 2 replicas,
  nginx and Redis, with as many phones arriving the same way): the least Streamlit app that
  pushes a teacher's move to every phone, 5 moves, from the press to each phone's new step.
- Answer → projector: from a student's press of Send to the arrival at the projector of the
  first count read after that answer was acknowledged (the count of a run the projector asked
  for after the student's page said "Your answer is in"): a count surely including it.
- Answers lost or counted twice: after each question, the store's answers (read from Redis as
  the projector's page reads them) are compared with each student's last acknowledged answer,
  and the projector's last count with the number of students who answered.
- Errors: runs that end otherwise, tracebacks, error boxes, a refused answer, a page that never
  shows an action (within 30 s).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnviz.ui.classroom.watch import WATCH_SECONDS
from bench.pages import StreamlitSession
from bench.report import Figure, failed, progress
from deploy import servers

STUDENTS, QUICK_STUDENTS = 200, 40
REPLICAS = 2
IDLE_S, QUICK_IDLE_S = 30.0, 10.0  # the idle windows' length
SETTLE_S = 5.0  # after the last join (or open), before an idle window starts
RAMP_S = 10.0  # the students arrive (and join) spread over this time
LESSON = 3  # the teacher's lesson: its exercises 3a (a number), 3b (a slider), 3c (one of two)
ROUNDS = (("3a", "3c"), ("3b", "3b"), ("3c", "3a"), ("", "3c"), ("3a", "3b"))  # (move, ask)
ANSWER_WITHIN_S = 20.0  # every student answers within this time of seeing the question
SECOND_ANSWER = 0.1  # the share of students who change their answer once
SHOW_TIMEOUT_S = 30.0  # most time a page may take to show an action (else an error)
TIMEOUT_S = 60.0  # most time a run may take
TARGET_IDLE_SHARE = 0.20  # of one core, per replica
TARGET_P95_S = 2.0
WARM_UP_TIMEOUT_S = 300.0
JOIN, SEND = "Join the class", "Send my answer"
CODE_BOX, NICKNAME_BOX = "The class's code, from the projector", "Your nickname (optional)"
TARGET_BOX = "Where the class goes"
_COUNT = re.compile(r"^### (\d+) of (\d+) answered")
_QUESTION = re.compile(r"^#### Question (\d+):")
_TEXTS = ("markdown", "heading", "alert", "text")  # elements whose body a page shows as text


@dataclass
class Run:
    """One run a page asked for: when, and what it showed."""

    sent: float  # perf_counter when the request was sent
    texts: list[str] = field(default_factory=list)  # the bodies of its text elements
    ended: float = 0.0  # arrival of its script_finished
    status: str = ""  # its ScriptFinishedStatus name
    done: asyncio.Event = field(default_factory=asyncio.Event)


class Page(StreamlitSession):
    """A session that keeps its page's timers (`auto_rerun`), the widgets it was sent (with their
    fragment) and, stamped on arrival, the texts it showed; one run at a time, as a page waits
    for its run before the next (a poll while a run is going is skipped)."""

    def __init__(self, socket: Any, query: str, base: str, page: str = "") -> None:
        super().__init__(socket, query, base, page)  # the reader starts at the next await
        self.shown: list[tuple[float, str]] = []  # (arrival, text), every text element
        self.elements: dict[str, tuple[str, Any, str]] = {}  # label -> (kind, proto, fragment)
        self.values: dict[str, Any] = {}  # widget id -> WidgetState the page keeps sending
        self.problems: list[str] = []  # tracebacks, error boxes, failed polls
        self.polls = 0  # fragment runs its timers asked for
        self.runs = 0  # runs that ended (asked for by the page, or started by the server)
        self.interval = 0.0  # the last timer's interval (s)
        self.on_text: Callable[[float, str, Run | None], None] | None = None
        self._timers: dict[str, asyncio.Task] = {}
        self._lock = asyncio.Lock()
        self._run: Run | None = None
        self._closed = False
        self.replicas: list[servers.Server] = []  # the teacher's: the replicas a round measures

    def _arrive(self, arrived: float, msg: Any) -> None:
        self._see(arrived, msg, msg.WhichOneof("type"))

    def _ended(self) -> None:
        self._closed = True
        if self._run is not None:
            self._run.done.set()

    def _see(self, arrived: float, msg: Any, kind: str) -> None:
        from streamlit.proto.Alert_pb2 import Alert
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            what = element.WhichOneof("type")
            proto = getattr(element, what)
            if getattr(proto, "label", ""):
                self.elements[proto.label] = (what, proto, msg.delta.fragment_id)
            if what == "exception":
                self.problems.append(f"traceback: {proto.message[:150]}")
            elif what == "alert" and proto.format == Alert.ERROR:
                self.problems.append(f"error box: {proto.body[:150]}")
            if what in _TEXTS:
                self.shown.append((arrived, proto.body))
                if self._run is not None:
                    self._run.texts.append(proto.body)
                if self.on_text is not None:
                    self.on_text(arrived, proto.body, self._run)
        elif kind == "auto_rerun":
            self._cancel([msg.auto_rerun.fragment_id])
            self.interval = msg.auto_rerun.interval
            timer = self._poll(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
            self._timers[msg.auto_rerun.fragment_id] = asyncio.create_task(timer)
        elif kind == "stop_auto_rerun":
            self._cancel(msg.stop_auto_rerun.fragment_ids)
        elif kind == "new_session" and not msg.metadata.run.fragment_ids:
            self._cancel(list(self._timers))  # a full run: its fragments register again
            self.elements.clear()  # ... and it draws the page anew
        elif kind == "new_session" and self._run is None:  # a run the server started: the
            self.elements.clear()  # class moved on and its fragment, where a student's
            # widgets are, is drawn anew (the browser drops the ones it no longer draws)
        elif kind == "script_finished":
            self.runs += 1
            status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
            early = msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN
            if self._run is not None and not early:
                self._run.ended, self._run.status = arrived, status
                self._run.done.set()

    def _cancel(self, fragments: list[str]) -> None:
        for fragment in fragments:
            timer = self._timers.pop(fragment, None)
            if timer is not None:
                timer.cancel()

    async def _poll(self, fragment: str, interval: float) -> None:
        """The page's timer: every `interval` s from now, ask for the fragment's run."""
        start = time.perf_counter()
        for tick in range(1, 1_000_000):
            await asyncio.sleep(max(0.0, start + tick * interval - time.perf_counter()))
            if self._lock.locked():
                continue  # a run is going: the server would fold this one into it
            try:
                await self.request([], fragment, auto=True)
                self.polls += 1
            except Exception as error:  # noqa: BLE001 - the page's problem, counted
                self.problems.append(f"poll: {type(error).__name__}: {str(error)[:120]}")
                return

    async def idle(self) -> None:
        """Return once no run of this page is going."""
        async with self._lock:
            return

    def widget(self, label: str) -> tuple[str, Any, str]:
        """(kind, proto, fragment id) of the widget `label` last drawn."""
        if label not in self.elements:
            raise RuntimeError(f"no widget {label!r} on {self.url}")
        return self.elements[label]

    async def request(self, changes: list[Any], fragment: str = "", auto: bool = False) -> Run:
        """Ask for a run (of `fragment`, if given) with the `changes` (WidgetState protos; a
        trigger is sent once, a value from then on, as a page does); its end.

        Raises:
            RuntimeError: if the run ends otherwise than successfully.
            ConnectionError: if the websocket closed.
        """
        from streamlit.proto.BackMsg_pb2 import BackMsg

        async with self._lock:
            triggers = [c for c in changes if c.WhichOneof("value") == "trigger_value"]
            self.values.update({c.id: c for c in changes if c not in triggers})
            back = BackMsg()
            state = back.rerun_script
            state.query_string, state.page_script_hash = self.query, self._page
            if not self._page:
                state.page_name = self._page_name
            state.widget_states.widgets.extend([*self.values.values(), *triggers])
            state.cached_message_hashes.extend(self._cached_now)
            state.context_info.timezone, state.context_info.locale = "UTC", "en-US"
            state.context_info.url = self.url
            state.fragment_id, state.is_auto_rerun = fragment, auto
            self._cached_now = []
            self._run = run = Run(time.perf_counter())
            await self._socket.send(back.SerializeToString())
            await asyncio.wait_for(run.done.wait(), TIMEOUT_S)
            self._run = None
        if not run.status:
            raise ConnectionError("the websocket closed")
        if not run.status.endswith("SUCCESSFULLY"):
            raise RuntimeError(f"run ended with {run.status}")
        return run

    async def close(self) -> None:
        self._cancel(list(self._timers))
        await super().close()


def _state(label: str, page: Page, **value: Any) -> Any:
    """The WidgetState of `page`'s widget `label` with `value` (e.g. string_value="…")."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=page.widget(label)[1].id)
    for name, v in value.items():
        if name == "double_array_value":
            state.double_array_value.data.extend(v)
        else:
            setattr(state, name, v)
    return state


def _after(page: Page, since: float, wanted: Callable[[str], bool]) -> float | None:
    """The arrival of the first text `page` showed after `since` that is `wanted`, or None."""
    return next((t for t, text in page.shown if t > since and wanted(text)), None)


# ---- the people ---------------------------------------------------------------------------


@dataclass
class Student:
    """One phone: its page, its replica, its member id and the answers it sent."""

    user: int
    page: Page
    replica: str
    nickname: str
    rng: random.Random
    member: str = ""
    sent: dict[int, list[tuple[Any, float, float]]] = field(default_factory=dict)
    # question -> (answer as the store decodes it, Send pressed, "answer is in" arrived)


@dataclass
class Projector:
    """The counts the teacher's projector showed: (arrival, request sent, question, count)."""

    counts: list[tuple[float, float, int, int]] = field(default_factory=list)
    question: int = 0  # the question heading last shown

    def see(self, arrived: float, text: str, run: Run | None) -> None:
        if found := _QUESTION.match(text):
            self.question = int(found.group(1))
        elif (found := _COUNT.match(text)) and run is not None:
            self.counts.append((arrived, run.sent, self.question, int(found.group(1))))


@dataclass
class Tally:
    """What one run of the class measured."""

    students: int
    per_replica: dict[str, int] = field(default_factory=dict)  # students on each replica
    cpu: dict[str, dict[str, float]] = field(default_factory=dict)  # window -> replica -> share
    rss_mb: dict[str, dict[str, float]] = field(default_factory=dict)  # window -> replica -> MB
    delays_s: dict[str, list[float]] = field(default_factory=dict)  # "move", "ask", ... -> s
    run_cpu_ms: dict[str, list[float]] = field(default_factory=dict)  # "move", ... -> the
    # replicas' CPU ms per student from each press until every phone showed it (`_run_cpu`)
    answers: int = 0  # answers sent and acknowledged
    lost: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    watch_s: float = 0.0  # how often a server reads the versions of its students' classes
    floor_moves_s: list[float] = field(default_factory=list)  # the floor app's move → phone
    projector_s: float = 0.0  # the projector's poll interval (its fragment's auto_rerun)
    runs: int = 0  # runs of the students' pages in the idle window (polls or server-started)
    idle_s: float = 0.0  # the idle windows' length
    notes: list[str] = field(default_factory=list)


# ---- the run ------------------------------------------------------------------------------


def _replica(cookie: str) -> str:
    """The replica nginx's cookie names ("r1", "r2"), "" without one."""
    from deploy.cluster import COOKIE

    found = re.search(rf"{COOKIE}=(r\d+)", cookie)
    return found.group(1) if found else ""


def _warmed_up(server: servers.Server) -> None:
    """Wait for the replica's warm-up to end (its log line), as a deployed server does."""
    from attnviz.ui.app.warmup import FINISHED

    deadline = time.monotonic() + WARM_UP_TIMEOUT_S
    while FINISHED not in server.log.read_text(errors="replace"):
        if time.monotonic() > deadline or server.died():
            raise RuntimeError(f"no {FINISHED!r} in {server.log}")
        time.sleep(0.2)


async def _teacher(base: str) -> tuple[Page, str]:
    """The teacher's page on the lesson's presenter view, a class started; its code."""
    page = await Page.open(base, "present=true", TIMEOUT_S, f"lesson-{LESSON}")
    await page.request([])
    await page.request([_state("Start a class", page, trigger_value=True)])
    code = dict(p.split("=", 1) for p in page.query.split("&") if "=" in p).get("class", "")
    if not code:
        raise RuntimeError(f"no class in the teacher's link after Start: {page.query}")
    return page, code


async def _open(base: str, code: str, user: int, tally: Tally) -> Student:
    """A student opens the join link (arrivals spread over `RAMP_S`)."""
    rng = random.Random(user)
    await asyncio.sleep(RAMP_S * rng.random())
    page = await Page.open(base, f"code={code}", TIMEOUT_S, "class")
    await page.request([])
    nickname = f"student {user}" if user % 2 else ""
    return Student(user, page, _replica(page.cookie), nickname, rng)


async def _join(student: Student, code: str) -> None:
    """The join form submitted (the code as the link filled it in, the nickname)."""
    page = student.page
    await asyncio.sleep(RAMP_S * student.rng.random())
    run = await page.request([
        _state(CODE_BOX, page, string_value=code),
        _state(NICKNAME_BOX, page, string_value=student.nickname),
        _state(JOIN, page, trigger_value=True),
    ])  # fmt: skip
    if not any(t.startswith(f"Class {code}") for t in run.texts):
        raise RuntimeError(f"student {student.user} not in the class after joining: {run.texts}")
    student.member = dict(p.split("=", 1) for p in page.query.split("&")).get("me", "")


def _cpu(replicas: list[servers.Server]) -> list[float]:
    return [r.cpu_s() for r in replicas]


async def _idle(replicas: list[servers.Server], seconds: float) -> tuple[dict, dict]:
    """Each replica's share of one core over `seconds` of nothing happening, and its RSS."""
    await asyncio.sleep(SETTLE_S)
    before, start = _cpu(replicas), time.perf_counter()
    await asyncio.sleep(seconds)
    after, spent = _cpu(replicas), time.perf_counter() - start
    names = [f"r{i + 1}" for i in range(len(replicas))]
    share = {n: (a - b) / spent for n, a, b in zip(names, after, before, strict=True)}
    return share, {n: r.rss_mb() for n, r in zip(names, replicas, strict=True)}


async def _press(teacher: Page, target: str, button: str) -> tuple[float, list[float]]:
    """The teacher picks `target` in the box (a run), then presses `button`: its press time,
    and the replicas' CPU seconds just before it (`_cpu`, from `teacher.replicas`)."""
    _, box, _ = teacher.widget(TARGET_BOX)
    option = next(o for o in box.options if (o.startswith(f"Exercise {target}:") if target
                                             else not o.startswith("Exercise")))  # fmt: skip
    await teacher.request([_state(TARGET_BOX, teacher, string_value=option)])
    cpu = _cpu(teacher.replicas)
    run = await teacher.request([_state(button, teacher, trigger_value=True)])
    return run.sent, cpu


def _run_cpu(teacher: Page, before: list[float], students: int, what: str, tally: Tally) -> None:
    """The replicas' CPU since `before` (the press), per student whose page showed `what`: what
    a phone's run after the teacher's action costs the servers (the teacher's own run and the
    projector's polls in that time included)."""
    spent = sum(_cpu(teacher.replicas)) - sum(before)
    tally.run_cpu_ms.setdefault(what, []).append(1000 * spent / max(students, 1))


async def _shown(students: list[Student], since: float, wanted: Callable[[str], bool],
                 what: str, tally: Tally) -> None:  # fmt: skip
    """Wait until every student's page showed a `wanted` text after `since`; the delays."""
    deadline = time.perf_counter() + SHOW_TIMEOUT_S
    waiting = list(students)
    while waiting and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
        waiting = [s for s in waiting if _after(s.page, since, wanted) is None]
    tally.errors += [f"student {s.user} did not show the {what} in {SHOW_TIMEOUT_S:.0f} s"
                     for s in waiting]  # fmt: skip
    tally.delays_s.setdefault(what.split()[0], []).extend(
        t - since for s in students if (t := _after(s.page, since, wanted)) is not None
    )


def _pick(kind: str, proto: Any, rng: random.Random, avoid: Any = None) -> tuple[str, Any, Any]:
    """A random answer valid for the widget: (WidgetState field, its value, the answer as the
    store decodes it)."""
    if kind == "radio":
        options = [o for o in proto.options if o != avoid] or list(proto.options)
        choice = rng.choice(options)
        return "string_value", choice, choice
    if kind == "slider":
        low, high, step = proto.min, proto.max, proto.step
        value = round(low + step * rng.randrange(int(round((high - low) / step)) + 1), 10)
        value = value if value != avoid else low
        return "double_array_value", [value], value
    if kind == "text_input":
        text = f"{rng.uniform(-5, 5):.2f}"
        return "string_value", text, text
    raise RuntimeError(f"the bench answers no {kind} widget")


async def _answer(student: Student, question: int, asked: float, tally: Tally) -> None:
    """Within `ANSWER_WITHIN_S` of the question: a random valid answer set, then Send; one in
    ten students changes it a little later."""
    page, rng = student.page, student.rng
    times = sorted(rng.uniform(1.0, ANSWER_WITHIN_S - 2) for _ in range(
        2 if rng.random() < SECOND_ANSWER else 1))  # fmt: skip
    previous = None
    for at in times:
        await asyncio.sleep(max(0.0, asked + at - time.perf_counter()))
        await _drawn(page, SEND)  # the question's run has drawn its answer widget and Send
        label, (kind, proto, fragment) = _answer_widget(page)
        name, value, decoded = _pick(kind, proto, rng, previous)
        try:
            await page.request([_state(label, page, **{name: value})], fragment)
            run = await page.request([_state(SEND, page, trigger_value=True)], fragment)
        except Exception as error:  # noqa: BLE001 - counted, the others go on
            tally.errors.append(f"student {student.user} q{question}: {type(error).__name__}: "
                                f"{str(error)[:120]}")  # fmt: skip
            return
        if not any(t.startswith("Your answer is in:") for t in run.texts):
            tally.errors.append(f"student {student.user} q{question}: answer not taken: "
                                f"{[t[:100] for t in run.texts]}")  # fmt: skip
            continue
        student.sent.setdefault(question, []).append((decoded, run.sent, run.ended))
        previous = value[0] if name == "double_array_value" else value


async def _drawn(page: Page, label: str) -> None:
    """Wait (up to `SHOW_TIMEOUT_S`) until the page has drawn the widget `label`."""
    deadline = time.perf_counter() + SHOW_TIMEOUT_S
    while label not in page.elements and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    await page.idle()


def _answer_widget(page: Page) -> tuple[str, tuple[str, Any, str]]:
    """The answer widget of the question on the page: the one in Send's fragment."""
    fragment = page.widget(SEND)[2]
    for label, (kind, proto, frag) in page.elements.items():
        if frag == fragment and kind in ("radio", "slider", "text_input"):
            return label, (kind, proto, frag)
    raise RuntimeError(f"no answer widget beside {SEND!r}")


def _stored(store_url: str, code: str, question: int) -> dict[str, Any]:
    """Member -> the answer the store holds for `question` (as the projector's page reads it)."""
    import json

    from attnviz.classroom.answers import read_record
    from attnviz.classroom.redis_store import RedisStore

    stored = RedisStore.from_url(store_url).answers(code, question)
    return {member: json.loads(read_record(text)[0]) for member, text in stored.items()}


def _same(sent: Any, stored: Any) -> bool:
    if isinstance(sent, float):
        return isinstance(stored, float) and math.isclose(sent, stored, abs_tol=1e-9)
    return sent == stored


async def _counted(projector: Projector, question: int, answered: int) -> None:
    """Wait (up to `SHOW_TIMEOUT_S`) until the projector counted `answered` for `question`."""
    deadline = time.perf_counter() + SHOW_TIMEOUT_S
    while time.perf_counter() < deadline:
        if any(q == question and c >= answered for _, _, q, c in projector.counts):
            return
        await asyncio.sleep(0.1)


def _check(question: int, students: list[Student], stored: dict[str, Any],
           projector: Projector, tally: Tally) -> None:  # fmt: skip
    """Every acknowledged answer in the store as last sent, none more; the projector's count
    reached them all and never more; each answer's time to a count read after it."""
    answered = [s for s in students if question in s.sent]
    for s in answered:
        last = s.sent[question][-1][0]
        if s.member not in stored:
            tally.lost.append(f"q{question}: student {s.user}'s answer is not in the store")
        elif not _same(last, stored[s.member]):
            tally.lost.append(f"q{question}: student {s.user} sent {last!r} last, the store "
                              f"holds {stored[s.member]!r}")  # fmt: skip
    members = {s.member for s in answered}
    tally.twice += [f"q{question}: the store holds an answer of {m}, who sent none"
                    for m in set(stored) - members]  # fmt: skip
    counts = [(t, sent, c) for t, sent, q, c in projector.counts if q == question]
    top = max((c for _, _, c in counts), default=0)
    if top > len(answered):
        tally.twice.append(f"q{question}: the projector counted {top} of {len(answered)}")
    elif top < len(answered):
        tally.lost.append(f"q{question}: the projector counted {top} of {len(answered)}")
    for s in answered:
        for _, pressed, acked in s.sent[question]:
            seen = next((t for t, sent, _ in counts if sent > acked), None)
            if seen is None:
                tally.errors.append(f"q{question}: student {s.user}'s answer never reached "
                                    "the projector")  # fmt: skip
            else:
                tally.delays_s.setdefault("answer", []).append(seen - pressed)
        tally.answers += len(s.sent[question])


async def _round(number: int, move: str, asked: str, teacher: Page, students: list[Student],
                 projector: Projector, where: tuple[str, str], tally: Tally) -> None:  # fmt: skip
    """One move, one question answered by the room, checked, then revealed."""
    store_url, code = where
    pressed, cpu = await _press(teacher, move, "Move the class here")
    caption = f"Follow the projector. The teacher is at exercise {move}." if move else ""
    await _shown(students, pressed, lambda t: t == (caption or "Follow the projector."),
                 "move", tally)  # fmt: skip
    _run_cpu(teacher, cpu, len(students), "move", tally)
    pressed, cpu = await _press(teacher, asked, "Ask this question")
    await _shown(students, pressed, lambda t: t.startswith(f"#### Question {number}:"),
                 "question", tally)  # fmt: skip
    _run_cpu(teacher, cpu, len(students), "question", tally)
    await asyncio.gather(*(_answer(s, number, pressed, tally) for s in students))
    await _counted(projector, number, sum(number in s.sent for s in students))
    await asyncio.sleep(2 * tally.projector_s)  # a count above the answers would show by now
    stored = await asyncio.to_thread(_stored, store_url, code, number)
    _check(number, students, stored, projector, tally)
    await teacher.idle()
    _, _, fragment = teacher.widget("Reveal the answer")
    cpu = _cpu(teacher.replicas)
    run = await teacher.request([_state("Reveal the answer", teacher, trigger_value=True)],
                                fragment)  # fmt: skip
    await _shown(students, run.sent, lambda t: t.startswith("**The answer:**"), "reveal", tally)
    _run_cpu(teacher, cpu, len(students), "reveal", tally)


async def _students(base: str, code: str, n: int, tally: Tally) -> list[Student]:
    """`n` students on the join link, spread over the replicas by nginx."""
    opened = await asyncio.gather(*(_open(base, code, u, tally) for u in range(n)),
                                  return_exceptions=True)  # fmt: skip
    tally.errors += [f"opening: {type(e).__name__}: {str(e)[:150]}"
                     for e in opened if not isinstance(e, Student)]  # fmt: skip
    students = [s for s in opened if isinstance(s, Student)]
    for s in students:
        tally.per_replica[s.replica] = tally.per_replica.get(s.replica, 0) + 1
    return students


async def _join_all(students: list[Student], code: str, tally: Tally) -> list[Student]:
    joined = await asyncio.gather(*(_join(s, code) for s in students), return_exceptions=True)
    tally.errors += [f"joining: {type(e).__name__}: {str(e)[:150]}" for e in joined if e]
    return [s for s, e in zip(students, joined, strict=True) if e is None]


async def _class(n: int, idle_s: float) -> Tally:
    """The whole run: the cluster, the idle windows, the rounds; its Tally."""
    from deploy import cluster, redis
    from deploy import run as deploy_run

    tally, store = Tally(n, idle_s=idle_s), redis.start()
    pages: list[Page] = []
    running = None
    try:
        running = cluster.start(REPLICAS, env=deploy_run.replica_env(store))
        for replica in running.replicas:
            await asyncio.to_thread(_warmed_up, replica)
        teacher, code = await _teacher(running.url)
        projector = Projector()
        teacher.on_text, pages = projector.see, [teacher]
        teacher.replicas = running.replicas  # whose CPU a round measures (`_run_cpu`)
        progress(f"class load: {n} students open the join link of class {code}")
        students = await _students(running.url, code, n, tally)
        pages += [s.page for s in students]
        progress(f"class load: {idle_s:.0f} s idle on the join form")
        tally.cpu["form"], tally.rss_mb["form"] = await _idle(running.replicas, idle_s)
        progress("class load: the students join")
        students = await _join_all(students, code, tally)
        runs = sum(s.page.runs for s in students)
        progress(f"class load: {idle_s:.0f} s idle in the class")
        tally.cpu["class"], tally.rss_mb["class"] = await _idle(running.replicas, idle_s)
        tally.runs = sum(s.page.runs for s in students) - runs
        tally.projector_s = teacher.interval
        tally.watch_s = WATCH_SECONDS
        before, start = _cpu(running.replicas) + [store.server.cpu_s()], time.perf_counter()
        for number, (move, asked) in enumerate(ROUNDS, start=1):
            progress(f"class load: round {number}: move to {move or 'the text'}, ask {asked}")
            await _round(number, move, asked, teacher, students, projector,
                         (store.url, code), tally)  # fmt: skip
        spent = time.perf_counter() - start
        after = _cpu(running.replicas) + [store.server.cpu_s()]
        ended = (await teacher.request([_state("End the class", teacher, trigger_value=True)])).sent
        await _shown(students, ended, lambda t: t.startswith(f"Class {code} has ended"),
                     "end", tally)  # fmt: skip
        names = [f"r{i + 1}" for i in range(REPLICAS)] + ["redis"]
        tally.cpu["rounds"] = {k: (a - b) / spent for k, a, b in zip(names, after, before,
                                                                     strict=True)}  # fmt: skip
        tally.rss_mb["rounds"] = {f"r{i + 1}": r.rss_mb() for i, r in enumerate(running.replicas)}
        tally.errors += [f"student {s.user}: {p}" for s in students for p in s.page.problems]
        tally.errors += [f"teacher: {p}" for p in teacher.problems]
        tally.notes.append(f"rounds: {spent:.0f} s")
    finally:
        await asyncio.gather(*(p.close() for p in pages), return_exceptions=True)
        if running is not None:
            running.stop()
        store.stop()
    return tally


FLOOR_MOVES = 5


async def _floor(n: int, tally: Tally) -> None:
    """The floor app's room (`floor_class.py`): `n` phones arriving as the students do, a
    teacher pressing Move `FLOOR_MOVES` times; each press → each phone's new step."""
    from deploy import cluster, redis
    from deploy import run as deploy_run

    store, running, pages = redis.start(), None, []
    try:
        running = cluster.start(REPLICAS, app="floor-class", env=deploy_run.replica_env(store))

        async def phone(user: int) -> Page:
            await asyncio.sleep(RAMP_S * random.Random(user).random())
            page = await Page.open(running.url, "", TIMEOUT_S, "")
            await page.request([])
            return page

        pages = list(await asyncio.gather(*(phone(u) for u in range(n))))
        teacher = await Page.open(running.url, "teacher=1", TIMEOUT_S, "")
        pages.append(teacher)
        await teacher.request([])
        await asyncio.sleep(SETTLE_S)
        for step in range(1, FLOOR_MOVES + 1):
            sent = (await teacher.request([_state("Move", teacher, trigger_value=True)])).sent
            deadline = time.perf_counter() + SHOW_TIMEOUT_S
            shown = [None] * n
            while None in shown and time.perf_counter() < deadline:
                await asyncio.sleep(0.05)
                shown = [_after(p, sent, f"Step {step}".__eq__) for p in pages[:n]]
            tally.floor_moves_s += [t - sent for t in shown if t is not None]
            tally.errors += [f"floor: {shown.count(None)} phones did not show step {step}"] * (
                None in shown)  # fmt: skip
            await asyncio.sleep(2.0)  # the room settles, as between the teacher's actions
        tally.errors += [f"floor phone: {p}" for page in pages for p in page.problems]
    finally:
        await asyncio.gather(*(p.close() for p in pages), return_exceptions=True)
        if running is not None:
            running.stop()
        store.stop()


def _p(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _delay(tally: Tally, what: str, name: str, target: bool) -> Figure:
    """The p95 of a delay, beside the interval at which the class is read for it (the
    servers' watch for the phones, the projector's poll for the count): no page shows a change
    surely sooner than that; for the move, beside the floor app's move (`_floor`)."""
    values = tally.delays_s.get(what, [])
    floor = ("the projector's poll", tally.projector_s) if what == "answer" else (
        "the servers' watch interval", tally.watch_s)  # fmt: skip
    p95 = _p(values, 95)
    met = (p95 is not None and p95 < TARGET_P95_S) if target else None
    note = (f"{len(values)} delays; p50 {_p(values, 50) or 0:.2f} s, max "
            f"{max(values, default=0):.2f} s")  # fmt: skip
    moves = tally.floor_moves_s if what == "move" else []
    if moves:
        floor = ("the floor app's move → phone", _p(moves, 95))
        note += (f"; the floor: {len(moves)} delays, p50 {_p(moves, 50):.2f} s, max "
                 f"{max(moves):.2f} s")  # fmt: skip
        if floor[1] >= TARGET_P95_S:
            note += f" (the floor itself is over {TARGET_P95_S:.0f} s on this machine)"
    return Figure(f"{name}, p95", p95, *floor, "s",
                  f"< {TARGET_P95_S:.0f} s" if target else "reported", met, note,
                  compare=bool(moves))  # fmt: skip


def _shares(window: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.0%}" for k, v in window.items())


def figures(tally: Tally) -> list[Figure]:
    """The table rows of one run."""
    n, rows = tally.students, []
    for name in sorted(tally.cpu.get("class", {})):
        share, form = tally.cpu["class"][name], tally.cpu["form"][name]
        rows.append(Figure(
            f"{name}: CPU, {n} students idle in a class", 100 * share,
            "the same sessions on the join form", 100 * form, "% of a core",
            f"≤ {TARGET_IDLE_SHARE:.0%} of a core", share <= TARGET_IDLE_SHARE,
            f"{tally.per_replica.get(name, 0)} students on {name}; idle windows of "
            f"{tally.idle_s:.0f} s", compare=False,
        ))  # fmt: skip
    for name in sorted(tally.rss_mb.get("rounds", {})):
        rows.append(Figure(
            f"{name}: memory (RSS) after the rounds", tally.rss_mb["rounds"][name],
            "on the join form", tally.rss_mb["form"][name], "MB", "reported", None,
        ))  # fmt: skip
    rows += [
        _delay(tally, "move", "teacher's move → shown on each phone", True),
        _delay(tally, "question", "question asked → shown on each phone", True),
        _delay(tally, "answer", "answer sent → in the projector's count", True),
        _delay(tally, "reveal", "reveal → shown on each phone", False),
        Figure("answers lost", len(tally.lost), "", None, "", "0", not tally.lost,
               "; ".join(tally.lost[:3]), compare=False),
        Figure("answers counted twice", len(tally.twice), "", None, "", "0", not tally.twice,
               "; ".join(tally.twice[:3]), compare=False),
        Figure("errors", len(tally.errors), "", None, "", "0", not tally.errors,
               "; ".join(tally.errors[:3]), compare=False),
    ]  # fmt: skip
    rows[0] = _with_note(rows[0], (
        f"{rows[0].note}; the students' pages ran {tally.runs} times in the idle window and "
        f"the {SETTLE_S:.0f} s before it; CPU while the rounds ran: "
        f"{_shares(tally.cpu.get('rounds', {}))}; {tally.answers} answers sent; "
        f"the servers' CPU per phone's run (p50 of the rounds): {_run_cpu_text(tally)}; "
        + "; ".join(tally.notes)
    ))  # fmt: skip
    return rows


def _run_cpu_text(tally: Tally) -> str:
    return ", ".join(f"{what} {np.median(ms):.1f} ms" for what, ms in tally.run_cpu_ms.items())


def _with_note(figure: Figure, note: str) -> Figure:
    import dataclasses

    return dataclasses.replace(figure, note=note)


async def run(quick: bool = False) -> list[Figure]:
    """The class with 200 students (`quick`: 40, shorter idle windows)."""
    n, idle_s = (QUICK_STUDENTS, QUICK_IDLE_S) if quick else (STUDENTS, IDLE_S)
    try:
        tally = await _class(n, idle_s)
        progress(f"class load: the floor app's room, {n} phones")
        try:
            await _floor(n, tally)
        except Exception as error:  # noqa: BLE001 - the class's figures stand without it
            tally.notes.append(f"the floor app's room failed: {type(error).__name__}: {error}")
        return figures(tally)
    except Exception as error:  # noqa: BLE001 - report it as a failed figure
        return [failed("class load", "0 errors", error)]
    finally:
        servers.stop_all()


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.class_load_bench [--quick]`: this section's table alone."""
    from bench.report import run_alone

    return run_alone(
        "class_load", lambda quick: asyncio.run(run(quick)), argv,
        prog="python -m bench.class_load_bench", description=__doc__.split("\n\n")[0],
        quick_help=f"{QUICK_STUDENTS} students, {QUICK_IDLE_S:.0f} s idle windows",
    )  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
