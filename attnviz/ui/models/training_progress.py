"""A training run's progress on the Learn and Language model pages: where it waits in the
server's queue and when it should start (with the shipped model offered meanwhile), its epochs
as they finish, then what its reports show (a translator's loss and accuracy curves and its
probe's attention after each epoch; a page may draw its own). Drawing only: the run is
`attnviz.learn.runs`'.

A watching page does not poll: it follows its run (`attnviz.ui.classroom.watch`, as a
student's page follows its class), and its server runs the page's progress fragment again when
the run's state, its published epochs or its place in the queue change (`run_version`: one small
read per run whatever the number of its pages); the page itself looks only every
`CHECK_SECONDS`, a safety net that also makes a browser rerun the page when its websocket
reconnects to another replica. A room of 200 that pressed Train then costs a run per page per
epoch, not per second. A look reads the store once, and the charts of the epochs so far are
built once per process for everyone (`shared_figure`).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

from attnviz.core.kept import Kept
from attnviz.drawing.curves import training_curves
from attnviz.drawing.plain_figure import frozen
from attnviz.drawing.translation import translation_figure
from attnviz.ui.classroom import watch
from attnviz.ui.frame.charts import chart
from attnviz.ui.frame.loading import back_end
from attnviz.ui.frame.messages import counted, plain
from attnviz.ui.frame.state import Slot, SlotFamily, slot, slot_family

if TYPE_CHECKING:
    from attnviz.learn.runs import RunSnapshot, TrainingRun

Reports = Callable[["RunSnapshot"], None]  # draws a run's reports so far

ENDED = ("done", "stopped", "failed")  # the states a run ends in
LIVE = ("waiting", "training")  # the states a page follows
CHECK_SECONDS = 10.0  # how often a watching page looks at its run itself (`_live_progress`)
SHARED_FIGURES = 64  # figures `shared_figure` keeps: a few runs' curves and probes
_FIGURES = Kept(SHARED_FIGURES)  # key -> frozen figure


RUN_KEY_CHARS = 16  # hex characters of a run's key its page's URL keeps


def named_run(field: str, task: Any, network: Any, training: Any) -> TrainingRun | None:
    """The run of these settings when the page's URL field `field` names it, watched again
    (joined if it still waits or trains, served from the store if it finished): the page was
    reloaded, or its replica died and another took it over. None otherwise."""
    named = st.query_params.get(field)
    if not named or named != _url_name(task, network, training):
        return None
    return start_run(task, network, training)


def start_run(task: Any, network: Any, training: Any, field: str | None = None) -> TrainingRun:
    """Start (or join: the same settings train once) the run of these settings in the
    background; with `field`, name it in the page's URL (`named_run` finds it again)."""
    with back_end():
        from attnviz.learn.runs import TrainingRun
    run = TrainingRun.start(task, network, training)
    if field is not None:
        st.query_params[field] = _url_name(task, network, training)
    return run


def forget_ended(field: str, snapshot: RunSnapshot) -> None:
    """A stopped or failed run is not the settings' result: the URL stops naming it, so that
    a reload does not watch it again (a new run starts only when Train is pressed)."""
    if snapshot.state in ("stopped", "failed"):
        st.query_params.pop(field, None)


def _url_name(task: Any, network: Any, training: Any) -> str:
    """The URL's name of the run of these settings: the start of its key (`run_key`)."""
    with back_end():
        from attnviz.learn.runs.key import run_key
    return run_key(task, network, training)[:RUN_KEY_CHARS]


def epochs_in_words(n: int) -> str:
    """ "1 epoch", "3 epochs"."""
    return counted(n, "epoch")


_STORES: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()  # id -> a store
# whose runs this server's pages follow (weak: a store no one holds any more is gone with its runs)


@st.fragment(run_every=CHECK_SECONDS)
def _live_progress(
    run: TrainingRun, open_shipped: Callable[[], None] | None, draw_reports: Reports
) -> None:
    """The run's progress, run again by the server when the run changes (`run_version`)."""
    snapshot = run.snapshot()  # the one look at the store of this run
    _draw_progress(run, snapshot, open_shipped, draw_reports)
    if snapshot.state not in LIVE:
        watch.forget()
        st.rerun()  # the whole page: the trained model's views appear
    _STORES[id(run.store)] = run.store
    watch.follow(
        f"{RUN_PREFIX}{id(run.store)}:{run.run_id}",
        _version(snapshot.state, len(snapshot.reports), snapshot.place),
        fragment=watch.fragment_id(),
    )


RUN_PREFIX = "run:"  # what the runs' names among the followed things start with


def run_version(name: str) -> int:
    """The version of the followed run `name` ("run:<store>:<run id>", as `_live_progress`
    names it) for the server's watch: another number once its pages would show another
    state, epoch or place in the queue; `watch.GONE` for a run no longer kept.

    Raises:
        ConnectionError: if the run's store does not answer now (asked again next time).
    """
    store_id, run_id = name.removeprefix(RUN_PREFIX).split(":", 1)
    store = _STORES.get(int(store_id))
    if store is None:
        return watch.GONE
    mark = store.mark(run_id)
    return watch.GONE if mark.state not in LIVE + ENDED else _version(
        mark.state, mark.reports, mark.place)  # fmt: skip


def _version(state: str, reports: int, place: int) -> int:
    """One number for what a watching page shows: its state, epochs and place."""
    return ((LIVE + ENDED).index(state) * 100_000 + reports) * 10_000 + min(place, 9_999)


def progress(
    run: TrainingRun,
    open_shipped: Callable[[], None] | None = None,
    draw_reports: Reports | None = None,
) -> RunSnapshot:
    """While the run waits or trains, a fragment redraws its progress each time the run changes
    (the server runs it again: see the module doc); then, once.
    `open_shipped` (a button callback) opens the shipped model of the run's task while it waits
    (None: none is shipped); `draw_reports` draws the reports so far (default: a translator's
    curves and probe, `translation_reports`)."""
    snapshot = run.snapshot()
    draw_reports = draw_reports or translation_reports
    if run.running:
        _live_progress(run, open_shipped, draw_reports)
    else:
        watch.forget()  # its run ended: nothing to follow
        _draw_progress(run, snapshot, open_shipped, draw_reports)
    return snapshot


def _draw_progress(
    run: TrainingRun,
    snapshot: RunSnapshot,
    open_shipped: Callable[[], None] | None,
    draw_reports: Reports,
) -> None:
    done = len(snapshot.reports) - 1 if snapshot.reports else 0
    words = {
        "waiting": _waiting_words(snapshot),
        "training": f"Training: epoch {done} of {snapshot.epochs} done ({snapshot.seconds:.0f} s)",
        "done": f"Trained {epochs_in_words(done)} in {snapshot.seconds:.0f} s.",
        "stopped": f"Stopped after {epochs_in_words(done)}; the best epoch is kept.",
        "failed": f"Training failed: {snapshot.error}",
    }[snapshot.state]
    if snapshot.state == "failed":
        st.error(plain(words), icon=":material/error:")
        return
    st.progress(min(1.0, done / max(1, snapshot.epochs)), text=words)
    if sharing := sharing_words(snapshot):
        st.caption(sharing)
    if snapshot.state in LIVE:
        st.button("Stop", on_click=run.stop, icon=":material/stop:", key="learn_stop")
    if snapshot.state == "waiting" and open_shipped is not None:
        _shipped_meanwhile(open_shipped)
    if snapshot.reports:
        draw_reports(snapshot)


def translation_reports(snapshot: RunSnapshot) -> None:
    """A translator's loss and accuracy per epoch, and its probe's attention at an epoch."""
    rows = tuple(_history_row(r) for r in snapshot.reports)
    curves = shared_figure(
        ("translation-curves", rows),
        lambda: training_curves(rows, title="Loss and accuracy per epoch"),
    )
    chart(curves, "training-curves", key="live-curves")
    _probe_history(snapshot)


def shared_figure(key: Hashable, build: Callable[[], Any]) -> Any:
    """The figure `build()` draws, built once per `key` in this process and `frozen`, for every
    session: every page watching a run draws the same epochs. `key` must hold everything the
    figure shows (its numbers, not a session's objects); the last `SHARED_FIGURES` are kept. Do
    not change the figure returned."""
    return _FIGURES.get(key, lambda: frozen(build()))


def array_key(values: Any) -> tuple:
    """A hashable key of an array's contents, for `shared_figure`."""
    array = np.asarray(values)
    return array.dtype.str, array.shape, array.tobytes()


def sharing_words(snapshot: RunSnapshot) -> str:
    """Whether the run came from a finished one, or others watch it too ("" if neither)."""
    if snapshot.source == "finished":
        return "Trained before with the same settings: served from the store."
    if snapshot.others:
        verb = "is" if snapshot.others == 1 else "are"
        return (
            f"{counted(snapshot.others, 'other')} {verb} watching this run: the same settings "
            "train once, for everyone who pressed Train with them."
        )
    return ""


def _waiting_words(snapshot: RunSnapshot) -> str:
    """Where a waiting run is in the queue and when it should start."""
    when = (
        "an estimate follows once the training ahead of it has finished an epoch"
        if snapshot.starts_in is None
        else f"it should start in about {_duration(snapshot.starts_in)}"
    )
    place = _ordinal(snapshot.place) if snapshot.place else "next"
    return f"Waiting for the server's training slot: {place} in the queue; {when}."


def _ordinal(n: int) -> str:
    """ "1st", "2nd", "3rd", "4th", "11th", "22nd"."""
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _duration(seconds: float) -> str:
    """ "10 s", "1 min 30 s", "12 min": rounded up to 10 s (to a minute from 10 minutes)."""
    step = 60 if seconds >= 600 else 10
    rounded = max(step, step * math.ceil(seconds / step))
    minutes, rest = divmod(int(rounded), 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min" + (f" {rest} s" if rest else "")


def _shipped_meanwhile(open_shipped: Callable[[], None]) -> None:
    """While the run waits, the shipped model of its task, a click away."""
    st.caption(
        "One training runs at a time on this server, in the order Train was pressed. Your run "
        "stays in the queue while you look at the shipped model; come back to Train to watch it."
    )
    if st.button(
        "Open the shipped model meanwhile",
        on_click=open_shipped,
        icon=":material/inventory_2:",
        key="learn_shipped_meanwhile",
    ):
        st.rerun()  # the whole page (the button may be in the progress fragment)


@dataclass(frozen=True)
class EpochSlider:
    """A slider over a run's epochs so far that follows the newest epoch until the learner
    picks another (then stays there; picking the newest follows again).

    Each newest epoch gets a slider of its own (`shown`), and a move counts as a pick only on
    the slider of the epoch that is still the newest: a page followed by its server (see the
    module doc) is also run again by its browser, whose message may still carry the slider it
    drew an epoch ago, and that old value must not stop the following."""

    label: str
    picked: Slot[int]  # the epoch the learner picked; -1: follow the newest
    newest: Slot[int]  # the newest epoch the last drawn slider offered
    shown: SlotFamily[int]  # the slider drawn while epoch <name> is the newest

    def draw(self, epochs: Sequence[int]) -> int:
        """The epoch to show among `epochs` (ascending), with the slider when there are two or
        more."""
        newest = epochs[-1]
        chosen = self.picked.get() if self.picked.get() in epochs else newest
        self.newest.set(newest)
        if len(epochs) < 2:
            return chosen
        shown = self.shown.of(newest)
        return st.select_slider(
            self.label, list(epochs), value=chosen, key=shown.key, on_change=self._moved,
            args=(shown, newest),
        )  # fmt: skip

    def _moved(self, shown: Slot[int], newest: int) -> None:
        if newest != self.newest.get():  # the slider of an older newest epoch: not a pick
            return
        value = shown.get()
        self.picked.set(-1 if value == newest else value)


def epoch_slider(prefix: str, label: str) -> EpochSlider:
    """Declare the session slots of an `EpochSlider` ("<prefix>_epoch", "<prefix>_newest",
    "<prefix>_after_<epoch>")."""
    return EpochSlider(
        label, slot(f"{prefix}_epoch", -1), slot(f"{prefix}_newest", -1),
        slot_family(f"{prefix}_after", -1),
    )  # fmt: skip


PROBE_EPOCHS = epoch_slider("learn_probe", "Probe attention after epoch (0 = untrained)")


def _history_row(report) -> tuple[float, ...]:
    nan = math.nan
    loss = nan if report.loss is None else report.loss
    acc = nan if report.char_accuracy is None else report.char_accuracy
    return (
        report.epoch,
        loss,
        acc,
        report.val_char_accuracy,
        report.val_exact_match,
        report.seconds,
    )


def _probe_history(snapshot: RunSnapshot) -> None:
    """The probe's attention after the chosen epoch: alignment forming out of uniform noise."""
    reports = {r.epoch: r for r in snapshot.reports}
    chosen = PROBE_EPOCHS.draw(list(reports))
    probe = reports[chosen].probe
    title = f"Epoch {chosen}: {probe.source} → {probe.output}"
    key = ("translation-probe", title, tuple(probe.source_tokens), tuple(probe.target_tokens),
           array_key(probe.weights))  # fmt: skip
    chart(shared_figure(key, lambda: translation_figure(probe, title)), "probe", key="probe")
    if hasattr(probe, "cross"):  # a Transformer's probe: its heads' mean, as in Translate
        st.caption(
            "The last layer's cross-attention, averaged over its heads; after training, the "
            "Model view shows every head."
        )
