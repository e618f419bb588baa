"""What the benchmark reports: the machine, and one table row per figure beside its baseline."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

SIZES = (16, 256, 1024, 4096)  # token counts the back-end and click sections measure


@dataclass(frozen=True)
class Figure:
    """One measured figure, its baseline from the same run, and its target."""

    name: str  # what was measured, e.g. "N=256 vs Keras MHA"
    value: float | None  # attnviz's figure (a median), None if it could not be measured
    baseline_name: str  # what it is compared with ("" for none)
    baseline: float | None  # the baseline's figure from the same run
    unit: str  # "ms", "s", "MB" or "" (a count)
    target: str  # the target in words, "" for a figure without one
    met: bool | None  # True / False, None when there is no target or no value
    note: str = ""  # repeats, spread, anything a reader needs
    compare: bool = True  # show value / baseline (not for counts or near-zero differences)

    @property
    def ratio(self) -> float | None:
        """value / baseline, when both exist, the baseline is not 0 and a ratio means something."""
        if not self.compare or self.value is None or not self.baseline:
            return None
        return self.value / self.baseline


def failed(name: str, target: str, error: BaseException) -> Figure:
    """The row of a figure that could not be measured (a missed target, if it had one)."""
    first_line = (str(error).strip().splitlines() or [""])[0][:300]
    note = f"FAILED: {type(error).__name__}: {first_line}"
    return Figure(name, None, "", None, "", target, False if target else None, note)


def progress(text: str) -> None:
    """A progress line on stderr (not part of the saved report)."""
    print(f"  … {text}", file=sys.stderr, flush=True)


def median_ms(samples: list[float]) -> float:
    """The median of samples in seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def interleaved(
    subjects: dict[str, Callable[[], object]], repeats: int, warmup: int = 2
) -> dict[str, list[float]]:
    """Time each subject `repeats` times, round-robin (the order rotates every round), after
    `warmup` untimed calls each. Returns seconds per call, by subject."""
    for run in subjects.values():
        for _ in range(warmup):
            run()
    times: dict[str, list[float]] = {name: [] for name in subjects}
    names = list(subjects)
    for round_ in range(repeats):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            subjects[name]()
            times[name].append(time.perf_counter() - start)
    return times


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _ram_gb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) / 1024**2
    return 0.0


def _chromium_version(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        return done.stdout.strip() or "unknown"
    except OSError:
        return "not found"


def machine_lines(chromium: str) -> list[str]:
    """The machine and the software versions, one `name: value` per line."""
    usable = len(os.sched_getaffinity(0))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    tensorflow = next(
        (p for p in ("tensorflow", "tensorflow-cpu") if _version(p) != "not installed"),
        "tensorflow",
    )  # `tensorflow` (the dev requirements on Linux x86_64) or `tensorflow-cpu`
    packages = (tensorflow, "keras", "numpy", "streamlit", "plotly", "playwright")
    return [
        f"date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"cpu: {_cpu_model()}, {os.cpu_count()} logical CPUs ({usable} usable)",
        f"ram: {_ram_gb():.1f} GB; load average at start: {load}",
        f"os: {platform.platform()}",
        f"python: {platform.python_version()}; "
        + "; ".join(f"{p} {_version(p)}" for p in packages),
        f"browser: {_chromium_version(chromium)} (headless)",
    ]


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if not unit:
        return f"{value:.0f}"
    return f"{value:.3g} {unit}" if abs(value) < 1000 else f"{value:,.0f} {unit}"


def _met(figure: Figure) -> str:
    if figure.met is None:
        return "—" if figure.target else ""
    return "yes" if figure.met else "NO"


HEADERS = ("figure", "attnviz", "baseline", "ratio", "target", "met")


def cells(f: Figure) -> tuple[str, ...]:
    """One figure's cells, under HEADERS."""
    base = f"{f.baseline_name} {_number(f.baseline, f.unit)}" if f.baseline_name else ""
    ratio = "" if f.ratio is None else f"{f.ratio:.2f}×"
    return (f.name, _number(f.value, f.unit), base, ratio, f.target, _met(f))


def table(title: str, figures: list[Figure]) -> str:
    """A plain-text table of `figures` under `title`, with notes below it."""
    rows = [HEADERS, *(cells(f) for f in figures)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]
    lines = [title, "-" * len(title)]
    for n, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"  [{f.name}] {f.note}" for f in figures if f.note]
    return "\n".join(lines + (["notes:", *notes] if notes else []))


def run_alone(
    section: str,
    run: Callable[[bool], list[Figure]],
    argv: list[str] | None,
    *,
    prog: str,
    description: str,
    quick_help: str,
) -> int:
    """Run one section on its own (`python -m bench.<module> [--quick]`): print the machine,
    then the section's table (nothing is recorded in the results file)."""
    import argparse

    from bench.sections import TITLES
    from deploy.chromium import CHROMIUM

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    quick = parser.parse_args(argv).quick
    for line in machine_lines(CHROMIUM):
        print(f"  {line}")
    print()
    print(table(TITLES[section], run(quick)))
    return 0
