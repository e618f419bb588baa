"""The project's own promises: CI runs exactly the README's test command; pins are pins."""

import re
import threading
from functools import partial
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text)


def test_ci_runs_the_readme_test_command_verbatim():
    commands = _readme_commands()
    tests = [c for c in commands if "pytest" in c]
    assert len(tests) == 1, commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests[0] in ci


def test_readme_start_command_installs_and_runs_the_app():
    start = [c for c in _readme_commands() if "streamlit run app.py" in c]
    assert len(start) == 1 and "requirements.txt" in start[0]


def test_runtime_requirements_are_pinned():
    lines = [
        line.split("#")[0].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.split("#")[0].strip()
    ]
    assert lines and all("==" in line for line in lines), lines
    tensorflows = [line.split("==")[0] for line in lines if line.startswith("tensorflow")]
    assert sorted(tensorflows) == ["tensorflow", "tensorflow-cpu"]  # one per platform (markers)


def test_streamlit_config_sets_deliberate_limits():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    for setting in (
        "maxUploadSize",
        "maxMessageSize",
        "gatherUsageStats = false",
        'fileWatcherType = "none"',
        'showErrorDetails = "none"',
        "postScriptGC = false",  # the load benchmark's 60 sessions need it (bench/README.md)
    ):
        assert setting in config, setting


def test_no_unsafe_calls_in_the_package():
    for path in (ROOT / "attnviz").rglob("*.py"):
        code = path.read_text(encoding="utf-8")
        for banned in (
            "eval(",
            "exec(",
            "pickle.load",
            "allow_pickle=True",
            "unsafe_allow_html=True",
            "shell=True",
        ):
            assert banned not in code, f"{banned} in {path.name}"


def test_warm_up_traces_the_attention_graphs(monkeypatch):
    from attnviz.core import attention
    from attnviz.ui.app import warmup

    monkeypatch.setattr(warmup, "_page_steps", list)  # the pages' steps: tests of their own
    warmup.page_drawn()  # a page has drawn its controls: no wait
    warmup.warm_up()
    flags = {(scale, masked, value) for scale in (True, False) for masked in (True, False)
             for value in ("-inf", "-1e9")}  # fmt: skip
    assert flags <= set(attention._COMPILED)  # every scaling, mask and masked value


def test_warm_up_runs_every_pages_step_says_when_done_and_survives_a_failing_one(monkeypatch):
    from attnviz.ui.app import warmup
    from attnviz.ui.pages import MODES

    done, seen_warming, logged = [], [], []

    def step(name):
        def run():
            seen_warming.append(warmup.warming_up())  # Keras's clear after a run waits
            done.append(name)
            if name == "learn":
                raise RuntimeError("no checkpoints here")

        return name, run

    monkeypatch.setattr(warmup, "_page_steps", lambda: [step("decoder"), step("learn")])
    monkeypatch.setattr(warmup, "_attention_graphs", lambda: None)
    monkeypatch.setattr(warmup, "_first_element", lambda: None)
    monkeypatch.setattr(warmup, "get_logger", lambda name: _Recorder(logged))
    warmup.page_drawn()
    warmup.warm_up()
    assert done == ["decoder", "learn"] and seen_warming == [True, True]
    assert not warmup.warming_up()
    steps = ["streamlit", "tensorflow", "attention", "decoder", "learn"]  # a failing one too
    assert logged[:-1] == [warmup.WARM_UP_STEP_DONE.format(name) for name in steps]
    assert logged[-1].startswith(warmup.FINISHED)
    assert "decoder" in logged[-1] and "learn" in logged[-1]
    loading = {m.name for m in MODES if m.warm_up}  # the pages that load models
    assert loading == {"decoder", "learn", "language-model", "model"}  # model: `attnviz view`


class _Recorder:
    """A logger that keeps the messages it is given."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def info(self, message: str, *args) -> None:
        self.lines.append(message % args)


def test_warm_up_draws_the_first_element_so_no_page_run_pays_streamlits_one_time_check():
    from streamlit import delta_generator

    from attnviz.ui.app import warmup

    warmup._first_element()
    assert delta_generator._use_warning_has_been_displayed  # checked: never again this process


@pytest.mark.slow  # loads a shipped GRU model and Transformer, builds the default decoder
def test_warm_up_fills_the_caches_the_pages_read(monkeypatch):
    import streamlit as st

    from attnviz.core.score_kinds import SCORE_KINDS
    from attnviz.learn.recipes import TRANSFORMER_RECIPES
    from attnviz.learn.translation.tasks import TASKS
    from attnviz.ui.models import shipped
    from attnviz.ui.pages import decoder

    # one GRU model and one Transformer, built for real: the pages' own calls, with the pages'
    # arguments, hit the cache the warm-up filled (the same objects again)
    st.cache_resource.clear()
    monkeypatch.setattr(shipped, "TASKS", ("dates",))
    monkeypatch.setattr(shipped, "SCORE_KINDS", ("concat",))
    monkeypatch.setattr(shipped, "TRANSFORMER_RECIPES", {"reverse": TRANSFORMER_RECIPES["reverse"]})
    shipped.warm_up_shipped()
    decoder.warm_up()
    loaded = {shipped.shipped_seq2seq("dates", "concat"), shipped.shipped_transformer("reverse")}
    assert loaded == {shipped.shipped_seq2seq("dates", "concat"),
                      shipped.shipped_transformer("reverse")}  # fmt: skip
    example = shipped.get_task("reverse").example[0]  # the page's default text: its trace kept
    warmed = shipped.kept_trace(shipped.shipped_transformer("reverse"), example)
    assert shipped.kept_trace(shipped.shipped_transformer("reverse"), example) is warmed
    sizes = tuple(size.default for size, *_ in decoder.SIZES)
    first = decoder._run_decoder_cached(sizes, 0)
    assert decoder._run_decoder_cached(sizes, 0) is first

    # and it loads every shipped model (recorded, not built: building all takes ~30 s)
    monkeypatch.setattr(shipped, "TASKS", TASKS)
    monkeypatch.setattr(shipped, "SCORE_KINDS", SCORE_KINDS)
    monkeypatch.setattr(shipped, "TRANSFORMER_RECIPES", TRANSFORMER_RECIPES)
    asked = []
    model = _AnyModel()
    monkeypatch.setattr(shipped, "shipped_seq2seq", lambda *key: asked.append(key) or model)
    monkeypatch.setattr(shipped, "shipped_transformer", lambda *key: asked.append(key) or model)
    shipped.warm_up_shipped()
    expected = [(task, score) for task in TASKS for score in SCORE_KINDS]
    assert [key for key in asked if len(key) == 2] == expected
    assert [key for key in asked if len(key) == 1] == [(task,) for task in TRANSFORMER_RECIPES]


class _AnyModel:
    """A stand-in model: any method takes any arguments and returns None."""

    def __getattr__(self, name: str):
        return lambda *args: None


class _RecordedEvent(threading.Event):
    """A threading.Event that says when someone starts waiting on it, and with what timeout."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = threading.Event()
        self.timeouts: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        self.waiting.set()
        return super().wait(timeout)


def test_warm_up_gives_up_waiting_for_a_page_after_its_time_limit(monkeypatch):
    from attnviz.core import attention
    from attnviz.ui.app import warmup

    assert warmup.PAGE_WAIT_S == 10.0
    never = _RecordedEvent()
    monkeypatch.setattr(warmup, "PAGE_DRAWN", never)
    monkeypatch.setattr(warmup, "PAGE_WAIT_S", 0.0)  # the time limit, already over
    monkeypatch.setattr(warmup, "_page_steps", list)
    monkeypatch.setattr(attention, "_COMPILED", {})  # nothing traced yet
    warmup.warm_up()  # no page: it waits no longer than its limit, then imports and traces
    assert never.timeouts == [0.0]  # it did not wait longer than its limit
    assert {(True, False, "-inf"), (True, True, "-inf")} <= set(attention._COMPILED)


def test_warm_up_waits_for_the_first_page(monkeypatch):
    from attnviz.ui.app import warmup

    drawn = _RecordedEvent()
    monkeypatch.setattr(warmup, "PAGE_DRAWN", drawn)
    monkeypatch.setattr(warmup, "PAGE_WAIT_S", 600.0)  # longer than this test may take
    monkeypatch.setattr(warmup, "_page_steps", list)
    thread = threading.Thread(target=warmup.warm_up)
    thread.start()
    assert drawn.waiting.wait(30)  # it waits for a page...
    assert thread.is_alive() and drawn.timeouts == [600.0]  # ...and nothing has drawn one
    warmup.page_drawn()  # what the page calls before it needs TensorFlow
    thread.join(timeout=60)
    assert not thread.is_alive()  # done long before its time limit


@pytest.mark.slow  # a fresh Python that imports TensorFlow
def test_the_docs_example_of_todays_attention_runs():
    import subprocess
    import sys

    text = (ROOT / "docs" / "python.md").read_text(encoding="utf-8")
    section = text.split("## Attention as today's models compute it", 1)[1]
    code = re.search(r"```python\n(.+?)\n```", section, re.DOTALL).group(1)
    checks = (
        "\nassert rope.rotated_query.shape == (8, 16)\n"
        "assert list(alibi.position_bias[3]) == [-1.5, -1, -0.5, 0, -0.5, -1, -1.5, -2]\n"
        "assert heads.costs.kv_cache_bytes_per_token == 64 and cache.cache_bytes[-1] == 512\n"
        "assert cache.step(5).keys.shape == (2, 6, 4)\n"
        "assert (tiled.memory.full_matrix_bytes, tiled.memory.tile_matrix_bytes) == (256, 96)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code + checks], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.slow  # a fresh Python that loads and runs the shipped language model
def test_the_docs_example_of_the_language_model_runs():
    import subprocess
    import sys

    text = (ROOT / "docs" / "learn.md").read_text(encoding="utf-8")
    section = text.split("**A language model that copies: induction heads.**", 1)[1]
    code = re.search(r"```python\n(.+?)\n```", section, re.DOTALL).group(1)
    code = code.split("\nreport = ")[0]  # all but the 30-epoch training run
    checks = (
        '\nassert "".join(f.predicted[11:]) == "wertzui"\n'
        "assert round(float(table.baseline.previous_token[0, 2]), 2) == 0.90\n"
        "assert round(float(table.baseline.induction[1, 0]), 2) == 0.87\n"
        "assert round(float(table.in_context_accuracy[1, 0]), 2) == 0.12\n"
        'assert (g.generated, g.steps[-1].weights.shape) == ("ertzuiop", (2, 4, 21))\n'
    )
    out = subprocess.run(
        [sys.executable, "-c", code + checks], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr


def test_warm_up_lets_the_pages_runs_go_first_after_the_import(monkeypatch):
    from attnviz.ui.app import warmup

    order = []
    monkeypatch.setattr(warmup.PAGE_DRAWN, "wait", lambda timeout=None: True)
    monkeypatch.setattr(warmup, "after_page_runs", lambda: order.append("yield"))
    for step in ("_first_element", "_import_tensorflow", "_attention_graphs"):
        monkeypatch.setattr(warmup, step, partial(order.append, step))
    pages = [("learn", partial(order.append, "learn")), ("lm", partial(order.append, "lm"))]
    monkeypatch.setattr(warmup, "_page_steps", lambda: pages)
    warmup.warm_up()
    assert order == ["_first_element", "_import_tensorflow", "yield", "_attention_graphs",
                     "yield", "learn", "yield", "lm"]  # fmt: skip


def test_after_page_runs_waits_until_the_runs_in_progress_end():
    from attnviz.ui.app import warmup
    from attnviz.ui.frame import loading

    assert loading.runs_in_progress() == 0
    warmup.after_page_runs()  # none in progress: returns at once
    drawing, finish, waited = threading.Event(), threading.Event(), threading.Event()

    def page() -> None:
        with loading.page_run():
            drawing.set()
            finish.wait(60)

    def warm_up_step() -> None:
        warmup.after_page_runs(limit_s=600.0)
        waited.set()

    run = threading.Thread(target=page)
    run.start()
    assert drawing.wait(30) and loading.runs_in_progress() == 1
    step = threading.Thread(target=warm_up_step)
    step.start()
    assert not waited.wait(0.5)  # the page's run is still in progress
    finish.set()
    assert waited.wait(30)  # ...and the step goes on as soon as it ends
    run.join(30)
    step.join(30)
    assert loading.runs_in_progress() == 0


def test_a_page_run_is_counted_until_it_ends_however_it_ends():
    from attnviz.ui.frame import loading

    with pytest.raises(RuntimeError), loading.page_run():
        assert loading.runs_in_progress() == 1
        raise RuntimeError("a rerun or a stop raises through the page's run")
    assert loading.runs_in_progress() == 0


def test_the_files_the_suite_starts_first_exist():
    # conftest.py names the longest test files so that pytest-xdist starts them first; a file
    # renamed or split must not silently drop out of that list
    from conftest import LONGEST_FIRST

    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert missing == []


def test_under_the_readme_command_each_file_runs_whole_in_one_process(request):
    # pytest-xdist's loadgroup keeps the tests of a group together by appending "@group" to each
    # test's id on collection; pytest 9.2 ignores that (pytest-dev/pytest-xdist#1386), and then
    # nothing was grouped: every module-scoped training run ran once per process and the
    # browser tests ran two at a time. requirements-dev.txt pins a pytest where it takes.
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the README's test command: pytest -n 3 --dist loadgroup")
    assert request.node.nodeid.endswith("@tests/project/test_project.py"), request.node.nodeid


def test_the_readme_test_command_installs_the_uv_it_pins():
    # the test command bootstraps uv with pip, then uv installs requirements-dev.txt (which
    # pins uv too, for test_install): both pins must be one version
    pinned = re.search(r"^uv==(\S+)", (ROOT / "requirements-dev.txt").read_text(), re.M)
    tests = [c for c in _readme_commands() if "pytest" in c]
    assert pinned and re.findall(r"pip install -q uv==(\S+)", tests[0]) == [pinned.group(1)]


def test_warm_up_ends_with_one_variant_of_each_exercise_that_loads_a_model(monkeypatch):
    import dataclasses

    from attnviz.lessons import exercises
    from attnviz.ui.app import warmup

    steps = warmup._page_steps()
    assert [name for name, _ in steps][-1] == "lessons"  # after the pages: their models first
    made = []
    recorded = tuple(
        dataclasses.replace(e, make=lambda seed, i=e.id: made.append((i, seed)))
        for e in exercises.EXERCISES
    )  # fmt: skip
    monkeypatch.setattr(exercises, "EXERCISES", recorded)
    steps[-1][1]()
    loading = [e.id for e in recorded if e.needs_models]
    assert made == [(i, 1) for i in loading]
    assert {"9a", "10a", "12a"} <= set(loading)  # the Learn, Transformer and language-model ones
