"""Train load (#43): "now everyone press Train" on 2 replicas behind nginx with Redis. 200 students
(`--quick`: 30) press Train on the Learn page within 10 s, over 5 distinct configurations (most
on the first); the figure is the time from the first press until every student's page says its
model is trained.

As in the load and class load sections, every student is a Streamlit session spoken to over its
websocket as its page speaks (`class_load_bench.Page`: it keeps the page's timers, and takes
the runs its server starts, as a browser does), with no browser; each first asks nginx
for its cookie and sticks to the replica nginx gave it. A student opens `/learn` with the
configuration in its URL (the page's own fields: Train, reverse, 500 pairs, 1 epoch, its seed),
its first run ends, then it presses the page's Train button at its moment of the 10 s. Its model
counts as finished when the page shows "Trained 1 epoch" (the run's end, as the page draws it).
The configuration is small on purpose: the code before #43 trains the 200 presses one after
another on each replica, and that must end within minutes.

Figures, in order:
- One run alone: one student presses a configuration no one trained, on the idle cluster; from
  the press to its page's "Trained"; the median of 4 rounds (`--quick`: 2). The target's unit.
- Watching a shared run: in each round, after the run alone, 10 students (`--quick`: 5) press
  one new configuration of `WATCH_EPOCHS` epochs at once, then all but one close their pages
  (they stay in the run); the median time of that page's progress runs while the run trains
  (those its server starts as the run publishes an epoch, from their first message to their
  end, and its own timer's looks, from request to end), beside a lone student's of its own
  run of as many epochs: one page watching in both, so only the sharing differs; the note
  says how many runs a page got a second. Both pages are
  on the first replica (its own address, not nginx's) and the two runs go first in turn, so
  each side's run trains on that replica (beside its page) in half the rounds.
- Everyone presses Train: the time until every student has a finished model, beside the same
  presses on the code before #43 (`BEFORE`, its own copy from `git archive`, started by its own
  `python -m deploy.run --redis`, the same way: 2 replicas behind nginx, no warm-up). Target:
  under (5 / 2 + 1) × one run alone: 5 distinct runs on 2 trainers is 3 rounds at most, plus
  one run for the page's polling, queue and the rounds' unevenness. The note says when the last
  press came and how long after it every model was there: once a run is shorter than the
  press window / 3.5, the window itself is more than the target (each replica traces a
  model's training step once, `attnviz.learn.twins`, so a run after the warm-up is short).
  So a row of its own gives the time from the last press until every student has a model,
  against the same target: the press window is the floor of the first figure.

The replicas run without the warm-up (`ATTNVIZ_WARM_UP=0`); each student's first page load (before
the clock starts) imports TensorFlow on its replica, so no figure includes it.
"""

from __future__ import annotations

import asyncio
import functools
import io
import random
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.class_load_bench import Page
from bench.report import Figure, failed, progress
from deploy import servers

STUDENTS, QUICK_STUDENTS = 200, 30
WATCHERS, QUICK_WATCHERS = 10, 5  # students on one shared run, for its polls' cost
REPLICAS = 2
PRESS_WITHIN_S = 10.0  # every student presses Train within this time of the first
CONFIGS = 5  # distinct configurations (seeds); the first is everyone else's
DEFAULT_SHARE = 0.6  # of the students, on the first configuration; the rest in turn on the others
LEARN = {"learn_model": "Train", "task": "reverse", "learn_pairs": "500", "learn_epochs": "1"}
ALONE_SEED, WATCH_SEED, OWN_SEED = 100, 110, 120  # + the round: configurations no one else
# trains
WATCH_EPOCHS = 20  # the runs whose polls are timed: long enough for several polls each (a
# one-epoch run now ends within a poll or two)
ROUNDS, QUICK_ROUNDS = 4, 2  # of one run alone and one shared run, in turn first
WARM_SEEDS = (200, 201)  # pressed at once first, untimed: each replica's first run (its Keras
# set-up) is in no figure
TRAINED = re.compile(r"Trained \d+ epochs?\b")  # the page's words once the run has ended (not
# "Trained before with the same settings")
FAILED = "Training failed"
OPEN_BATCH = 20  # pages opened at once before the clock starts
TIMEOUT_S = 120.0  # most time one page's run may take
ALL_DONE_S, QUICK_ALL_DONE_S = 1800.0, 600.0  # most time for every model (a failure bound)
TARGET_FACTOR = CONFIGS / REPLICAS + 1  # × one run alone
TARGET_WATCH = 1.1  # a shared run's poll, at most this × one's own
BEFORE = "2910d1a"  # the commit before #43 (shared runs)
ROOT = Path(__file__).resolve().parents[1]


class Learner(Page):
    """A Learn page: also keeps its progress bar's words and the duration of each run of its
    progress while the run trains: the runs its server starts as the run publishes an epoch
    (`ui.models.training_progress`: a page follows its run), and its own timer's looks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.progress_s: list[float] = []  # durations of the progress runs that showed it training
        self._pushed: tuple[float, list[str]] | None = None  # a server-started run: its start
        # and texts

    def _see(self, arrived: float, msg: Any, kind: str) -> None:
        super()._see(arrived, msg, kind)
        if kind == "new_session" and self._run is None:  # a run the server started
            self._pushed = (arrived, [])
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "progress":
                self.shown.append((arrived, element.progress.text))
                if self._run is not None:
                    self._run.texts.append(element.progress.text)
                elif self._pushed is not None:
                    self._pushed[1].append(element.progress.text)
        elif kind == "script_finished" and self._run is None and self._pushed is not None:
            (start, texts), self._pushed = self._pushed, None
            if _training(texts):
                self.progress_s.append(arrived - start)

    async def request(self, changes: list[Any], fragment: str = "", auto: bool = False) -> Any:
        run = await super().request(changes, fragment, auto)
        if auto and _training(run.texts):
            self.progress_s.append(run.ended - run.sent)
        return run

    async def press_train(self) -> float:
        """Press Train; when the press was sent (perf_counter)."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        sent = time.perf_counter()
        await self.request([WidgetState(id=self.widget("Train")[1].id, trigger_value=True)])
        return sent

    def trained_at(self, since: float) -> float | None:
        """When the page first showed its run trained after `since`, or None."""
        return next((t for t, text in self.shown if t > since and TRAINED.match(text)), None)

    def failure(self) -> str:
        """Why the run failed, as the page said, or ""."""
        return next((text for _, text in self.shown if text.startswith(FAILED)), "")


def _training(texts: list[str]) -> bool:
    return any(t.startswith("Training: epoch") for t in texts)


@dataclass
class Presses:
    """What one set of presses measured."""

    students: int
    seconds: float | None = None  # first press -> every model trained (None: not all)
    done: int = 0  # students whose model was trained
    errors: list[str] = field(default_factory=list)
    progress_s: list[float] = field(default_factory=list)  # their progress runs while training
    training_s: float = 0.0  # the time their runs trained, summed over the pages
    times: list[float] = field(default_factory=list)  # each round's seconds (`_measure_now`)
    last_press: float = 0.0  # seconds from the first press to the last


def seeds(students: int) -> list[int]:
    """Each student's configuration (seed): `DEFAULT_SHARE` on seed 0, the rest on seeds 1..4
    in turn, shuffled (fixed), so every configuration has students."""
    first = round(students * DEFAULT_SHARE)
    others = [1 + i % (CONFIGS - 1) for i in range(students - first)]
    chosen = [0] * first + others
    random.Random(43).shuffle(chosen)
    return chosen


async def _open(base: str, seed: int, epochs: int = 1) -> Learner:
    query = urlencode({**LEARN, "seed": seed, "learn_epochs": epochs})
    page = await Learner.open(base, query, TIMEOUT_S, "learn")
    await page.request([])
    return page


async def _open_all(base: str, chosen: list[int], epochs: int = 1) -> list[Learner]:
    pages: list[Learner] = []
    for start in range(0, len(chosen), OPEN_BATCH):
        batch = chosen[start : start + OPEN_BATCH]
        pages += await asyncio.gather(*(_open(base, seed, epochs) for seed in batch))
    return pages


async def presses(
    base: str,
    chosen: list[int],
    within_s: float,
    limit_s: float,
    keep: int | None = None,
    epochs: int = 1,
) -> Presses:
    """Students on `chosen` seeds open the Learn page, then press Train spread over `within_s`;
    wait until every page shows its model trained (at most `limit_s`). With `keep`, only the
    first `keep` pages stay open after the presses (the others stay in their runs, and are
    counted among those watching for `WATCHING_FRESH` seconds after their last look)."""
    pages = await _open_all(base, chosen, epochs)
    rng = random.Random(7)
    moments = sorted(rng.uniform(0, within_s) for _ in pages)
    moments[0] = 0.0
    start = time.perf_counter()

    async def press(page: Learner, at: float) -> float:
        await asyncio.sleep(max(0.0, start + at - time.perf_counter()))
        return await page.press_train()

    sent = await asyncio.gather(*(press(p, at) for p, at in zip(pages, moments, strict=True)))
    if keep is not None:
        await asyncio.gather(*(p.close() for p in pages[keep:]), return_exceptions=True)
        pages, sent = pages[:keep], sent[:keep]
    first = min(sent)
    tally = Presses(len(pages))
    deadline = first + limit_s
    while time.perf_counter() < deadline:
        done = [p.trained_at(s) for p, s in zip(pages, sent, strict=True)]
        failures = [p.failure() for p in pages if p.failure()]
        if all(d is not None for d in done) or failures:
            break
        await asyncio.sleep(0.25)
    done = [p.trained_at(s) for p, s in zip(pages, sent, strict=True)]
    tally.done = sum(d is not None for d in done)
    if tally.done == len(pages):
        tally.seconds = max(done) - first
    tally.last_press = max(sent) - first
    tally.errors = [p.failure() for p in pages if p.failure()]
    tally.errors += [problem for p in pages for problem in p.problems][:20]
    tally.progress_s = [s for p in pages for s in p.progress_s]
    tally.training_s = sum(d - s for d, s in zip(done, sent, strict=True) if d is not None)
    await asyncio.gather(*(p.close() for p in pages), return_exceptions=True)
    return tally


# ---- the clusters -------------------------------------------------------------------------


def _cluster() -> tuple[Any, Any]:
    """Redis and 2 replicas of this checkout behind nginx, as `deploy.run --redis` starts them."""
    from attnviz.ui.frame.server_config import WARM_UP_ENV
    from deploy import cluster, redis, run

    store = redis.start()
    try:
        return cluster.start(REPLICAS, env={**run.replica_env(store), WARM_UP_ENV: "0"}), store
    except BaseException:
        store.stop()
        raise


def _before_copy() -> Path:
    """The code before #43, unpacked from git (`git archive`: the repository is only read)."""
    folder = Path(tempfile.mkdtemp(prefix="attnviz-before-43-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BEFORE], check=True,
                             capture_output=True).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def _before_cluster(folder: Path) -> servers.Server:
    """The code before #43 run by its own `python -m deploy.run --redis` (2 replicas behind
    nginx, no warm-up), stopped with the benchmark's servers; returns when nginx answers."""
    from attnviz.ui.frame.server_config import WARM_UP_ENV

    port = servers.free_port()
    command = [sys.executable, "-m", "deploy.run", "--redis", "--replicas", str(REPLICAS),
               "--port", str(port)]  # fmt: skip
    running = servers.spawn("before-43", command, folder, f"http://127.0.0.1:{port}",
                            {WARM_UP_ENV: "0", "PYTHONPATH": str(folder)})  # fmt: skip
    return servers.wait_healthy(running)


# ---- the figures --------------------------------------------------------------------------


async def _measure_now(
    base: str, first: str, students: int, watchers: int, rounds: int, limit_s: float
) -> dict:
    """This code's figures, through nginx at `base`; the run alone and the shared run's pages on
    the first replica (`first`)."""
    progress("warming up: one run on each replica (untimed)")
    await presses(base, list(WARM_SEEDS), 0.0, limit_s)
    alone, shared = Presses(1), Presses(1)
    for turn in range(rounds):
        progress(f"round {turn + 1} of {rounds}: one run alone and one shared by {watchers}")
        # in turn first and second: the trainer that has waited longer takes the next run, so
        # each side's run is trained beside its page (on the first replica) in half the rounds
        own, joined = await _alone_and_shared(first, turn, watchers, limit_s)
        for total, part in ((alone, own), (shared, joined)):
            total.times += [part.seconds] if part.seconds is not None else []
            total.progress_s += part.progress_s
            total.training_s += part.training_s
            total.errors += part.errors
    alone.seconds = _median(alone.times)
    progress(f"{students} students press Train within {PRESS_WITHIN_S:.0f} s")
    everyone = await presses(base, seeds(students), PRESS_WITHIN_S, limit_s)
    return {"alone": alone, "shared": shared, "everyone": everyone}


async def _alone_and_shared(
    first: str, turn: int, watchers: int, limit_s: float
) -> tuple[Presses, Presses]:
    """One round: a run alone (timed: the target's unit), then two longer runs whose polls are
    timed, one's own and one shared by `watchers`, in turn first. The run alone's Presses
    carries the own run's polls."""
    alone = await presses(first, [ALONE_SEED + turn], 0.0, limit_s)
    own = functools.partial(presses, first, [OWN_SEED + turn], 0.0, limit_s,
                            epochs=WATCH_EPOCHS)  # fmt: skip
    joined = functools.partial(presses, first, [WATCH_SEED + turn] * watchers, 0.0, limit_s,
                               keep=1, epochs=WATCH_EPOCHS)  # fmt: skip
    if turn % 2:
        shared = await joined()
        mine = await own()
    else:
        mine = await own()
        shared = await joined()
    alone.progress_s, alone.training_s = mine.progress_s, mine.training_s
    alone.errors += mine.errors
    return alone, shared


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def figures(
    now: dict, before: Presses | None, before_error: str, students: int, watchers: int
) -> list[Figure]:
    """The section's rows: one run alone, everyone's presses beside the code before #43, the
    polls of a shared run beside one's own, the errors."""
    alone, shared, everyone = now["alone"], now["shared"], now["everyone"]
    errors = [*alone.errors, *shared.errors, *everyone.errors]
    lone = Figure("one run alone (press → trained, median)", alone.seconds, "", None, "s", "",
                  None, "1 student, reverse, 500 pairs, 1 epoch; rounds: "
                  + ", ".join(f"{t:.1f} s" for t in alone.times))  # fmt: skip
    watch = Figure(
        "progress run while watching a shared run (median)",
        _ms(_median(shared.progress_s)), "watching one's own run", _ms(_median(alone.progress_s)),
        "ms", f"≤ {TARGET_WATCH:g}× one's own",
        _within(_median(shared.progress_s), _median(alone.progress_s)),
        f"{_runs(shared)} of a page watching with {watchers - 1} others (their pages closed: "
        f"one page watches, as the lone student's); {_runs(alone)} of the lone student's "
        f"({WATCH_EPOCHS} epochs each; the server runs a page's progress when its run publishes "
        "an epoch, the page itself looks every 10 s)",
    )  # fmt: skip
    wrong = Figure("errors (failed runs, tracebacks, error boxes)", float(len(errors)), "", None,
                   "", "0", not errors, "; ".join(errors[:3]), compare=False)  # fmt: skip
    return [lone, _everyone(everyone, before, before_error, alone.seconds, students),
            _after_last(everyone, alone.seconds, students), watch, wrong]  # fmt: skip


def _everyone(
    everyone: Presses, before: Presses | None, before_error: str, one: float | None, students: int
) -> Figure:
    """The time until every student has a model, beside the code before #43's."""
    limit = None if one is None else TARGET_FACTOR * one
    target = f"< {TARGET_FACTOR:g} × one run alone" + (f" ({limit:.0f} s)" if limit else "")
    met = None if everyone.seconds is None or limit is None else everyone.seconds < limit
    old = f"{before.done}/{students} trained" if before else f"not measured: {before_error}"
    note = (
        f"{everyone.done}/{students} trained, {CONFIGS} configurations "
        f"({round(DEFAULT_SHARE * 100)} % on one), presses within {PRESS_WITHIN_S:.0f} s "
        f"(the last {everyone.last_press:.1f} s after the first"
        + (f": every model {everyone.seconds - everyone.last_press:.1f} s after the last press"
           if everyone.seconds is not None else "")
        + f"); before #43: {old}"
    )  # fmt: skip
    baseline = before.seconds if before else None
    return Figure(f"{students} students press Train → all trained", everyone.seconds,
                  f"before #43 ({BEFORE})", baseline, "s", target, met, note)  # fmt: skip


def _after_last(everyone: Presses, one: float | None, students: int) -> Figure:
    """The time from the last press until every student has a model: the part of the first
    figure the room's own pace (the press window, its floor) leaves to attnviz."""
    after = None if everyone.seconds is None else everyone.seconds - everyone.last_press
    limit = None if one is None else TARGET_FACTOR * one
    met = None if after is None or limit is None else after < limit
    return Figure(f"{students} students: last press → all trained", after, "", None, "s",
                  f"< {TARGET_FACTOR:g} × one run alone", met,
                  f"the presses' own window, {everyone.last_press:.1f} s from the first press to "
                  "the last, is the floor of the figure above", compare=False)  # fmt: skip


def _runs(pages: Presses) -> str:
    """ "41 progress runs in 12.3 s of training (3.3 a second)"."""
    rate = len(pages.progress_s) / pages.training_s if pages.training_s else 0.0
    return (f"{len(pages.progress_s)} progress runs in {pages.training_s:.1f} s of training "
            f"({rate:.1f} a second)")  # fmt: skip


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _within(shared: float | None, own: float | None) -> bool | None:
    if shared is None or own is None:
        return None
    return shared <= TARGET_WATCH * own


def run(quick: bool = False) -> list[Figure]:
    """The section: this code's figures on its cluster, then the code before #43's presses."""
    students = QUICK_STUDENTS if quick else STUDENTS
    watchers = QUICK_WATCHERS if quick else WATCHERS
    limit = QUICK_ALL_DONE_S if quick else ALL_DONE_S
    target = f"< {TARGET_FACTOR:g} × one run alone"
    running, store = _cluster()
    try:
        rounds = QUICK_ROUNDS if quick else ROUNDS
        first = running.replicas[0].url
        now = asyncio.run(_measure_now(running.url, first, students, watchers, rounds, limit))
    except Exception as error:  # noqa: BLE001 - the row says what failed
        return [failed(f"{students} students press Train → all trained", target, error)]
    finally:
        running.stop()
        store.stop()
    before, before_error = None, ""
    folder = None
    try:
        progress(f"the code before #43 ({BEFORE}): the same {students} presses")
        folder = _before_copy()
        old = _before_cluster(folder)
        try:
            before = asyncio.run(presses(old.url, seeds(students), PRESS_WITHIN_S, limit))
        finally:
            old.stop()
    except Exception as error:  # noqa: BLE001 - said in the row's note
        before_error = f"{type(error).__name__}: {str(error)[:200]}"
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return figures(now, before, before_error, students, watchers)


def main() -> None:
    from bench.report import table
    from bench.sections import TITLES

    quick = "--quick" in sys.argv[1:]
    start = time.monotonic()
    try:
        rows = run(quick)
    finally:
        servers.stop_all()
    print(table(TITLES["train_load"], rows))
    print(f"({time.monotonic() - start:.0f} s)")


if __name__ == "__main__":
    main()
