"""Load: a classroom on one server. 10, 30 and 60 sessions at once, each interacting every 2–5 s.

Shape letters: N = 16 tokens, D = 64 features.

The clients are cheap, so the figures measure the server: each student is a Streamlit session
spoken to directly over its websocket as its page would speak (`pages.StreamlitSession`: the
URL's query string, the widget the student changed, the cached messages' hashes), with no
browser drawing anything. A browser page costs ~0.35 s of CPU per run even with its charts
blocked (measured), eight times the server's own work: 60 of them would measure Chromium.

Student i opens `/matrices` with its own random inputs (seed 1000·(i+1)), the sessions arriving
spread over 10 s; once all are in, each makes an interaction, waits for its run to end, thinks
2–5 s, and so on for a fixed time. attnviz's students go round: causal toggle, a new seed of their
own, the Learn page (the shipped dates model translates its example), a date of their own
translated (a year only they use), back to Matrices, a preset (one-hot queries or identical
keys), back to random inputs, causal, seed, the Sentences page, a sentence of their own (with a
token only they use), back to Matrices. A student goes to another page as a browser does when a
link of the navigation is clicked (`StreamlitSession.switch_page`). The floor app has only the
toggle and the seed, so its students alternate those two.

- Latency: from sending the rerun request to the arrival of the run's `script_finished`.
- Checked on every run, from the messages the server sent: it ended normally, with no traceback
  or error box; with random inputs, "Raw scores" is Q Kᵀ of the student's seed and "Attention
  weights" its softmax, causal or not as the student's clicks say (numpy); after the sentence,
  the student's token is in the charts; in Learn, the decoded output is the ISO date of what the
  student typed (or of the example).
- Leaks: a "Raw scores" matrix of another student's seed, another student's token, or another
  student's date as the decoded output, in any message a session receives.

Each level runs against attnviz, then against the floor app, in the same run. With
`through_nginx=K`, each app runs as K replicas behind nginx (`deploy/cluster.py`), and each
student first gets nginx's cookie, as a browser does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench.pages import CAUSAL, StreamlitSession
from bench.report import Figure, failed, progress
from deploy import servers

N, D = 16, 64
LEVELS, QUICK_LEVELS = (10, 30, 60), (10, 60)  # sessions at once
DURATION_S, QUICK_DURATION_S = 60.0, 20.0  # interactions start within this window
THINK_S = (2.0, 5.0)  # pause after each run ends
RAMP_S = 10.0  # the sessions arrive spread over this time
TIMEOUT_S = 30.0  # most time an interaction may take
TARGET_SESSIONS, TARGET_P95_MS = 60, 1000.0
HALL, HALL_REPLICAS = 200, 2  # a lecture hall: 200 students on 2 replicas behind nginx (#43)
HALL_RATE, HALL_P95 = 0.95, 1.1  # targets: served >= 0.95x the floor's, p95 <= 1.1x the floor's
PER_CORE = (20, 40, 60, 80, 100, 120, 150, 200)  # sessions tried on one server pinned to one core
QUICK_PER_CORE = (40, 80, 120, 160)
PER_CORE_P95_MS = 1000.0  # "serves": p95 under 1 s
TOLERANCE = 2e-3  # |Q Kᵀ| ~ 16; TensorFlow and numpy float32 agree to ~1e-5
PRESETS = ("One-hot queries: sharp attention", "Identical keys: uniform attention")  # no mask
SENTENCES = "Sentences, one per line (shorter ones are padded with <pad>)"
LEARN_INPUT = "Your input (30 characters at most)"  # the dates task's text input
EXAMPLE_OUTPUT = "2026-11-22"  # the dates example's ISO date, shown when Learn opens
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")  # fmt: skip
_OUTPUT = re.compile(r"\*\*Output:\*\* `([^`]*)`")
CYCLES = {
    "attnviz": ("causal", "seed", "learn", "translate", "matrices", "preset", "random", "causal",
                "seed", "sentences", "sentence", "matrices"),
    "floor": ("causal", "seed"),
}  # fmt: skip
_TOKEN = re.compile(rb"[^A-Za-z0-9+/=]zq([a-z]{2})[^A-Za-z0-9+/=]")  # never inside base64 data


def token_of(user: int) -> str:
    """The word only student `user` types: zq + two letters."""
    return "zq" + chr(97 + user // 26) + chr(97 + user % 26)


def date_of(user: int) -> tuple[str, str]:
    """The date student `user` types (a year only they use) and its ISO form."""
    year, month, day = 1950 + user % 100, 1 + user % 12, 1 + user % 28
    return f"{day} {MONTHS[month - 1]} {year}", f"{year}-{month:02d}-{day:02d}"


def seed_of(user: int, step: int) -> int:
    """Student `user`'s seed after `step` seed changes: never another student's."""
    return 1000 * (user + 1) + step


def raw_scores(seed: int) -> np.ndarray:
    """`(N, N)` Q Kᵀ of the seed's random inputs, drawn as both apps draw them."""
    rng = np.random.default_rng(seed)
    q, k = (rng.random((N, D)).astype(np.float32) for _ in range(2))
    return q @ k.T  # (N, D) x (D, N) -> (N, N)


def weights(seed: int, causal: bool) -> np.ndarray:
    """`(N, N)` softmax(Q Kᵀ / √D) in float64, blocked weights 0 under the causal mask."""
    logits = raw_scores(seed) / np.sqrt(D)
    if causal:
        logits = np.where(np.tri(N, dtype=bool), logits, -np.inf)
    exps = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exps / exps.sum(axis=1, keepdims=True)


class Seeds:
    """Every seed handed out, whose it is, and its Q Kᵀ, to name the owner of a matrix."""

    def __init__(self) -> None:
        self.owners: list[int] = []  # student of each seed, in the order handed out
        self.raws: list[np.ndarray] = []  # (N, N) each

    def add(self, user: int, seed: int) -> None:
        self.owners.append(user)
        self.raws.append(raw_scores(seed))

    def owner(self, z: np.ndarray) -> int | None:
        """The student one of whose seeds gives Q Kᵀ = `z`, if any."""
        if z.shape != (N, N) or not self.raws:
            return None
        gaps = np.abs(np.stack(self.raws) - np.nan_to_num(z)).max(axis=(1, 2))  # (seeds,)
        best = int(gaps.argmin())
        return self.owners[best] if gaps[best] <= TOLERANCE else None


@dataclass
class Tally:
    """What all sessions of one app saw at one level."""

    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # by action
    opens_ms: list[float] = field(default_factory=list)  # connection to the first run's end
    errors: list[str] = field(default_factory=list)  # what went wrong, one entry each
    leaks: list[str] = field(default_factory=list)  # another student's data seen
    seconds: float = 0.0  # length of the interaction window
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds in the window

    def all_ms(self) -> list[float]:
        return [ms for values in self.latencies_ms.values() for ms in values]

    def served_per_s(self) -> float:
        """Interactions served per second of the window."""
        return len(self.all_ms()) / max(self.seconds, 1e-9)


@dataclass
class Student:
    """One session and what its student has asked for."""

    user: int
    session: StreamlitSession
    rng: random.Random  # think times and presets
    seed: int
    causal: bool = False
    random_source: bool = True  # False after a preset, until "Random" is chosen again
    sentences: bool = False  # on the Sentences page
    typed: bool = False  # typed its own sentence there
    learn: bool = False  # on the Learn page
    dated: bool = False  # typed its own date in Learn (the page keeps it from then on)
    steps: int = 0  # seeds changed so far


def _decode(array: Any) -> np.ndarray | None:
    """A plotly array of numbers: a list, or plotly's typed array {"dtype", "bdata", "shape"};
    None for other typed arrays (attnviz's blocked-cell layer is one byte per cell)."""
    if isinstance(array, dict) and "bdata" in array:
        if not array["dtype"].startswith("f"):
            return None
        flat = np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
        shape = [int(n) for n in str(array.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(np.float64)
    return np.array(array, dtype=np.float64)


def _elements(messages: list[Any]) -> list[tuple[str, Any]]:
    """(kind, element) of every new element among `messages`."""
    found = []
    for msg in messages:
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            found.append((element.WhichOneof("type"), element))
    return found


def _charts(messages: list[Any]) -> dict[str, np.ndarray]:
    """Title -> z of the first numeric 2-D trace, for the plotly charts among `messages`."""
    found = {}
    for kind, element in _elements(messages):
        if kind != "plotly_chart":
            continue
        figure = json.loads(element.plotly_chart.spec)
        title = figure.get("layout", {}).get("title", {}).get("text", "")
        for trace in figure.get("data", []):
            z = _decode(trace["z"]) if "z" in trace else None
            if z is not None and z.ndim == 2:
                found.setdefault(title.split(" (")[0], z)
                break
    return found


def _problems(messages: list[Any]) -> list[str]:
    """Tracebacks and error boxes among `messages`."""
    from streamlit.proto.Alert_pb2 import Alert

    found = []
    for kind, element in _elements(messages):
        if kind == "exception":
            found.append(f"traceback: {element.exception.message[:150]}")
        elif kind == "alert" and element.alert.format == Alert.ERROR:
            found.append(f"error box: {element.alert.body[:150]}")
    return found


def _tokens(messages: list[Any]) -> set[str]:
    """The students' tokens among `messages` (as their two letters)."""
    return {
        m.group(1).decode() for msg in messages for m in _TOKEN.finditer(msg.SerializeToString())
    }


def _outputs(messages: list[Any]) -> list[str]:
    """The decoded outputs ("**Output:** `…`") Learn showed among `messages`."""
    return [
        m.group(1)
        for kind, element in _elements(messages)
        if kind == "markdown"
        for m in [_OUTPUT.search(element.markdown.body)]
        if m
    ]


def _leaks(student: Student, messages: list[Any], charts: dict, seeds: Seeds) -> list[str]:
    """Another student's matrix, token or date in what this student received."""
    owner = seeds.owner(charts["Raw scores"]) if "Raw scores" in charts else None
    found = (
        [f"student {student.user} got student {owner}'s Q Kᵀ"]
        if owner not in (None, student.user)
        else []
    )
    for output in _outputs(messages):
        if output not in (date_of(student.user)[1], EXAMPLE_OUTPUT):
            found.append(f"student {student.user} got the output {output}")
    others = _tokens(messages) - {token_of(student.user)[2:]}
    return found + [f"student {student.user} got token zq{t}" for t in sorted(others)]


def _wrong(student: Student, messages: list[Any], charts: dict[str, np.ndarray]) -> str | None:
    """Why the run is not what the student asked for, or None."""
    if student.learn:
        expected = date_of(student.user)[1] if student.dated else EXAMPLE_OUTPUT
        outputs = _outputs(messages)
        return None if outputs == [expected] else f"Learn showed {outputs}, not {expected}"
    if student.sentences:
        mine = token_of(student.user)[2:] in _tokens(messages)
        return "the student's sentence is not in the charts" if student.typed and not mine else None
    if not student.random_source:
        return None if "Raw scores" in charts else "no Raw scores chart after a preset"
    raw, wts = charts.get("Raw scores"), charts.get("Attention weights")
    if raw is None or wts is None:
        return f"charts missing: {sorted(charts)}"
    if raw.shape != (N, N) or np.abs(raw - raw_scores(student.seed)).max() > TOLERANCE:
        return f"Raw scores are not Q Kᵀ of seed {student.seed}"
    if np.abs(np.nan_to_num(wts) - weights(student.seed, student.causal)).max() > 1e-4:
        return f"weights are not softmax of seed {student.seed}, causal={student.causal}"
    return None


def _change(student: Student, action: str, seeds: Seeds) -> Any:
    """The widget state the student's page would send for `action` (and its URL update), or
    None for a switch to another page (the session then asks for that page)."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    s, session = student, student.session
    if action == "causal":
        s.causal = not s.causal
        session.set_param("causal", str(s.causal).lower())
        return WidgetState(id=session.widgets[CAUSAL], bool_value=s.causal)
    if action == "seed":
        s.steps += 1
        s.seed = seed_of(s.user, s.steps)
        seeds.add(s.user, s.seed)
        session.set_param("r_seed", str(s.seed))
        return WidgetState(id=session.widgets["Seed"], int_value=s.seed)
    if action == "preset":
        s.random_source, s.causal = False, False  # both presets leave the mask off
        return WidgetState(id=session.widgets["Preset"], string_value=s.rng.choice(PRESETS))
    if action == "sentence":
        s.typed = True
        text = f"Student {token_of(s.user)} asks why attention looks back."
        return WidgetState(id=session.widgets[SENTENCES], string_value=text)
    if action == "translate":
        s.dated = True
        return WidgetState(id=session.widgets[LEARN_INPUT], string_value=date_of(s.user)[0])
    if action == "random":
        s.random_source = True
        session.set_param("source", "Random")
        state = WidgetState(id=session.widgets["Q, K, V from"])
        state.string_array_value.data.append("Random")
        return state
    s.sentences, s.learn, s.typed = action == "sentences", action == "learn", False
    session.switch_page(action)  # "sentences", "learn", "matrices": the pages' URL paths
    return None


async def _interact(student: Student, action: str, seeds: Seeds, tally: Tally) -> None:
    """One interaction: the change, its run, its time, and the checks of what came back."""
    change = _change(student, action, seeds)
    seconds, messages = await student.session.rerun([change] if change else [], TIMEOUT_S)
    tally.latencies_ms.setdefault(action, []).append(seconds * 1000)
    charts = _charts(messages)
    tally.leaks += _leaks(student, messages, charts, seeds)
    problems = _problems(messages) + [e for e in [_wrong(student, messages, charts)] if e]
    tally.errors += [f"student {student.user} {action}: {p}" for p in problems]


def first_page(name: str) -> str:
    """The URL path of the page each student opens: attnviz's Matrices page, the floor's only
    page."""
    return "matrices" if name == "attnviz" else ""


def url_query(name: str, seed: int) -> str:
    """The query string of the link each student opens: its own random inputs."""
    if name == "attnviz":
        return f"source=Random&r_t={N}&r_s={N}&r_dk={D}&r_dv={D}&r_seed={seed}"
    return f"r_t={N}&r_seed={seed}"


async def _open(base: str, name: str, user: int, seeds: Seeds, tally: Tally) -> Student:
    """A new session with the student's seed, once its first run has ended."""
    await asyncio.sleep(RAMP_S * random.Random(-user).random())  # arrivals spread out
    start = time.perf_counter()
    query = url_query(name, seed_of(user, 0))
    session = await StreamlitSession.open(base, query, TIMEOUT_S, first_page(name))
    student = Student(user, session, random.Random(user), seed_of(user, 0))
    seeds.add(user, student.seed)
    _, messages = await session.rerun([], TIMEOUT_S)
    tally.opens_ms.append((time.perf_counter() - start) * 1000)
    tally.leaks += _leaks(student, messages, _charts(messages), seeds)
    return student


async def _session(student: Student, cycle: tuple[str, ...], deadline: float, seeds: Seeds,
                   tally: Tally) -> None:  # fmt: skip
    """Interact every 2–5 s until `deadline`; a failed interaction ends the session."""
    await asyncio.sleep(student.rng.uniform(0, THINK_S[1]))  # out of step with the others
    step = 0
    while time.monotonic() < deadline:
        action = cycle[step % len(cycle)]
        step += 1
        try:
            await _interact(student, action, seeds, tally)
        except Exception as error:  # noqa: BLE001 - count it, keep the others going
            tally.errors.append(f"student {student.user} {action}: {type(error).__name__}: "
                                f"{str(error)[:150]}")  # fmt: skip
            return
        await asyncio.sleep(student.rng.uniform(*THINK_S))


def _cpu_now(processes: list[servers.Server]) -> dict[str, float]:
    """CPU seconds so far of the app's servers and of this process (the clients, the checks)."""
    times = os.times()
    return {"server": sum(s.cpu_s() for s in processes), "clients": times.user + times.system}


def _start(name: str, through_nginx: int | None) -> tuple[str, list[servers.Server], Any]:
    """The app's address, its server processes (not nginx: with it, the 60-session figures of
    one replica changed within their noise), and how to stop them all."""
    if through_nginx is None:
        server = servers.launch(name)
        return server.url, [server], server.stop
    from deploy import cluster  # here: only the nginx runs need it

    running = cluster.start(through_nginx, app=name)
    return running.url, running.replicas, running.stop


async def _warm_up(base: str, name: str, processes: list[servers.Server]) -> None:
    """attnviz's replicas finish their own warm-up first (it takes both cores for ~10 s after
    launch: it would be measured as load), then one untimed session per replica: the lesson
    starts on servers already up."""
    if name == "attnviz":
        from bench.first_open_bench import wait_warmed_up

        for process in processes:
            await asyncio.to_thread(wait_warmed_up, process)
    for _ in processes:
        session = await StreamlitSession.open(base, url_query(name, 0), TIMEOUT_S, first_page(name))
        await session.rerun([], TIMEOUT_S * 4)
        await session.close()


async def _level(name: str, users: int, seconds: float, through_nginx: int | None) -> Tally:
    """One app with `users` sessions for `seconds`, on servers started for it: its Tally."""
    base, processes, stop = _start(name, through_nginx)
    try:
        await _warm_up(base, name, processes)
        return await _measure(base, name, processes, users, seconds)
    finally:
        stop()


async def _measure(base: str, name: str, processes: list[servers.Server], users: int,
                   seconds: float) -> Tally:  # fmt: skip
    """`users` new sessions on the app at `base` for `seconds`: its Tally (the sessions closed
    at the end)."""
    tally, seeds = Tally(), Seeds()
    students: list[Student] = []
    try:
        opened = await asyncio.gather(
            *(_open(base, name, u, seeds, tally) for u in range(users)), return_exceptions=True
        )
        students = [s for s in opened if isinstance(s, Student)]
        tally.errors += [f"opening: {type(e).__name__}: {str(e)[:150]}" for e in opened
                         if not isinstance(e, Student)]  # fmt: skip
        before, start = _cpu_now(processes), time.monotonic()
        await asyncio.gather(*(_session(s, CYCLES[name], start + seconds, seeds, tally)
                               for s in students))  # fmt: skip
        tally.seconds = time.monotonic() - start
        after = _cpu_now(processes)
        tally.cpu_s = {k: after[k] - before[k] for k in after}
    finally:
        await asyncio.gather(*(s.session.close() for s in students), return_exceptions=True)
    return tally


def _pin(pid: int, cpu: int) -> None:
    """Every thread of process `pid` on `cpu` alone (threads it starts later inherit it)."""
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):  # a thread that has just ended
            os.sched_setaffinity(int(task), {cpu})


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _note(tally: Tally, users: int) -> str:
    actions = ", ".join(
        f"{a} {_percentile(v, 50):.0f}/{_percentile(v, 95):.0f}"
        for a, v in sorted(tally.latencies_ms.items())
    )
    cpu = ", ".join(f"{k} {v / max(tally.seconds, 1e-9):.0%}" for k, v in tally.cpu_s.items())
    opens = tally.opens_ms
    return (
        f"{len(tally.all_ms())} interactions in {tally.seconds:.0f} s; p50/p95 ms by action: "
        f"{actions}; opening (connection → first run ended) p50/p95 "
        f"{_percentile(opens, 50) or 0:.0f}/{_percentile(opens, 95) or 0:.0f} ms over "
        f"{len(opens)}/{users}; CPU of one core: {cpu}"
    )


def _figures(tallies: dict[tuple[str, int], Tally], levels: tuple[int, ...]) -> list[Figure]:
    rows = []
    for n in levels:
        ours, floor = tallies[("attnviz", n)], tallies[("floor", n)]
        rate = [t.served_per_s() for t in (ours, floor)]
        p95 = _percentile(ours.all_ms(), 95)
        target = f"< {TARGET_P95_MS:,.0f} ms" if n == TARGET_SESSIONS else "reported"
        met = (p95 is not None and p95 < TARGET_P95_MS) if n == TARGET_SESSIONS else None
        details = "; ".join((ours.errors + ours.leaks)[:3])
        rows += [
            Figure(f"{n} sessions: interactions served", rate[0], "floor", rate[1], "/s",
                   "reported", None, f"attnviz: {_note(ours, n)} || floor: {_note(floor, n)}"),
            Figure(f"{n} sessions: p50 action → run ended", _percentile(ours.all_ms(), 50),
                   "floor", _percentile(floor.all_ms(), 50), "ms", "reported", None),
            Figure(f"{n} sessions: p95 action → run ended", p95, "floor",
                   _percentile(floor.all_ms(), 95), "ms", target, met),
            Figure(f"{n} sessions: errors", len(ours.errors), "floor", len(floor.errors), "",
                   "0", not ours.errors, details, compare=False),
            Figure(f"{n} sessions: another session's input seen", len(ours.leaks), "floor",
                   len(floor.leaks), "", "0", not ours.leaks, compare=False),
        ]  # fmt: skip
    return rows


def _hall_figures(ours: Tally, floor: Tally) -> list[Figure]:
    """The lecture hall's figures: attnviz against the floor in the same run (#43's targets)."""
    rate = [t.served_per_s() for t in (ours, floor)]
    p95 = [_percentile(t.all_ms(), 95) for t in (ours, floor)]
    n, k = HALL, HALL_REPLICAS
    where = f"{n} sessions on {k} replicas behind nginx"
    details = "; ".join((ours.errors + ours.leaks)[:3])
    p95_met = None not in p95 and p95[0] <= HALL_P95 * p95[1]
    return [
        Figure(f"{where}: interactions served", rate[0], "floor", rate[1], "/s",
               f">= {HALL_RATE}x the floor", rate[0] >= HALL_RATE * rate[1],
               f"attnviz: {_note(ours, n)} || floor: {_note(floor, n)}"),
        Figure(f"{where}: p50 action → run ended", _percentile(ours.all_ms(), 50), "floor",
               _percentile(floor.all_ms(), 50), "ms", "reported", None),
        Figure(f"{where}: p95 action → run ended", p95[0], "floor", p95[1], "ms",
               f"<= {HALL_P95}x the floor", p95_met),
        Figure(f"{where}: errors", len(ours.errors), "floor", len(floor.errors), "", "0",
               not ours.errors, details, compare=False),
        Figure(f"{where}: another session's input seen", len(ours.leaks), "floor",
               len(floor.leaks), "", "0", not ours.leaks, compare=False),
    ]  # fmt: skip


async def _per_core(name: str, levels: tuple[int, ...], seconds: float) -> tuple[int, str]:
    """The most students one server on one core serves with p95 under 1 s (0: not even the
    first level), trying `levels` in turn on one server until one is not served; the note: each
    level's p95. Once warmed up, the server runs on one CPU, the clients (this thread) on the
    others."""
    base, processes, stop = _start(name, None)
    clients_cpus = os.sched_getaffinity(0)
    served, seen = 0, []
    try:
        await _warm_up(base, name, processes)
        first, *rest = sorted(clients_cpus)
        _pin(processes[0].process.pid, first)
        os.sched_setaffinity(0, set(rest) or {first})
        for n in levels:
            progress(f"load: {n} sessions on {name}, one server on one core, for {seconds:.0f} s")
            tally = await _measure(base, name, processes, n, seconds)
            p95 = _percentile(tally.all_ms(), 95)
            seen.append(f"{n}: p95 {p95 or 0:.0f} ms, {len(tally.errors)} errors")
            if p95 is None or p95 >= PER_CORE_P95_MS or tally.errors or tally.leaks:
                break
            served = n
    finally:
        stop()
        os.sched_setaffinity(0, clients_cpus)
    return served, "; ".join(seen)


async def run(quick: bool = False, through_nginx: int | None = None) -> list[Figure]:
    """Each level against attnviz, then against the floor app. Without `through_nginx`, then the
    lecture hall (`HALL` sessions on `HALL_REPLICAS` replicas behind nginx) and the students one
    core serves, each app in the same run."""
    levels, seconds = (QUICK_LEVELS, QUICK_DURATION_S) if quick else (LEVELS, DURATION_S)
    via = f" through nginx, {through_nginx} replica(s)" if through_nginx else ""
    apps = ("attnviz", "floor")
    try:
        tallies = {}
        for n in levels:
            for name in apps:
                progress(f"load: {n} sessions on {name}{via} for {seconds:.0f} s")
                tallies[(name, n)] = await _level(name, n, seconds, through_nginx)
        figures = _figures(tallies, levels)
        if through_nginx is not None:
            return figures
        hall = {}
        for name in apps:
            progress(f"load: {HALL} sessions on {name}, {HALL_REPLICAS} replicas behind nginx")
            hall[name] = await _level(name, HALL, seconds, HALL_REPLICAS)
        figures += _hall_figures(hall["attnviz"], hall["floor"])
        per_core = [await _per_core(name, QUICK_PER_CORE if quick else PER_CORE, seconds / 2)
                    for name in apps]  # fmt: skip
        figures.append(
            Figure("students one core serves with p95 < 1 s", per_core[0][0], "floor",
                   per_core[1][0], "students", "reported", None,
                   f"attnviz: {per_core[0][1]} || floor: {per_core[1][1]}")
        )  # fmt: skip
        return figures
    except Exception as error:  # noqa: BLE001 - report it as a failed figure
        return [failed("load", "0 errors", error)]
    finally:
        servers.stop_all()
