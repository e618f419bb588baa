"""attnviz benchmark: every figure beside its baseline, measured in the same run.

    python -m bench.benchmark [--quick] [--only backend,app,...] [--sizes 16,256]
                              [--skip-cold] [--through-nginx K]

(from the repository root, with the dev requirements installed). `--help` lists the sections
in the order they run; bench/README.md says what each measures, beside what, how, and its
target. Prints the machine, then one table per section, and saves everything printed to
bench/results/latest.txt (quick runs: bench/results/quick.txt). A full run of a section (not
--quick, every size, cold starts included) also replaces that section's figures in
bench/results.json, the latest figures the documentation's Performance page shows. Every server
it starts is stopped at exit, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from bench import results
from bench.report import SIZES, Figure, machine_lines, table
from bench.sections import SECTIONS, TITLES
from deploy import servers
from deploy.chromium import CHROMIUM

BENCH = Path(__file__).resolve().parent


class Output:
    """Prints and keeps every line, to save the whole report at the end."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.benchmark",
        description=__doc__.split("\n\n")[0],
        epilog="sections, in the order they run (bench/README.md):\n"
        + "\n".join(f"  {name:<11} {TITLES[name]}" for name in SECTIONS),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="comma-separated sections (below); default: all"
    )
    parser.add_argument(
        "--sizes",
        default=",".join(str(n) for n in SIZES),
        help=f"comma-separated token counts for backend, app clicks and controls, of {SIZES}",
    )
    parser.add_argument("--skip-cold", action="store_true", help="app: no cold starts")
    parser.add_argument(
        "--through-nginx",
        type=int,
        metavar="K",
        help="load: run each app as K replicas behind nginx (deploy/), K >= 1",
    )
    args = parser.parse_args(argv)
    if args.through_nginx is not None and args.through_nginx < 1:
        parser.error(f"--through-nginx takes K >= 1 replicas. Received {args.through_nginx}.")
    args.sizes = tuple(n.strip() for n in args.sizes.split(",") if n.strip())
    if not args.sizes or set(args.sizes) - {str(n) for n in SIZES}:
        parser.error(f"--sizes takes comma-separated numbers of {SIZES}")
    args.sizes = tuple(int(n) for n in args.sizes)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(args.only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    return args


Runner = Callable[[bool], list[Figure]]  # quick -> the section's figures


def _backend(args: argparse.Namespace) -> Runner:
    from bench import backend_bench

    return lambda quick: backend_bench.run(quick, sizes=args.sizes)


def _inspect(args: argparse.Namespace) -> Runner:
    from bench import inspect_bench

    return inspect_bench.run


def _figures(args: argparse.Namespace) -> Runner:
    from bench import figure_bench

    return figure_bench.run


def _app(args: argparse.Namespace) -> Runner:
    from bench import app_bench

    return lambda quick: asyncio.run(
        app_bench.run(quick, sizes=args.sizes, cold=not args.skip_cold)
    )


def _controls(args: argparse.Namespace) -> Runner:
    from bench import controls_bench

    sizes = tuple(n for n in args.sizes if n in controls_bench.SIZES)
    return lambda quick: asyncio.run(controls_bench.run(quick, sizes=sizes))


def _model_view(args: argparse.Namespace) -> Runner:
    from bench import model_view_bench

    return model_view_bench.run


def _your_model(args: argparse.Namespace) -> Runner:
    from bench import your_model_bench

    return your_model_bench.run


def _first_open(args: argparse.Namespace) -> Runner:
    from bench import first_open_bench

    return first_open_bench.run


def _memory(args: argparse.Namespace) -> Runner:
    from bench import memory_bench

    return lambda quick: asyncio.run(memory_bench.run(quick))


def _load(args: argparse.Namespace) -> Runner:
    from bench import load_bench

    return lambda quick: asyncio.run(load_bench.run(quick, through_nginx=args.through_nginx))


def _learn(args: argparse.Namespace) -> Runner:
    from bench import learn_app_bench, learn_bench

    return lambda quick: [
        *learn_bench.throughput(1 if quick else 3),
        *learn_bench.time_to_accuracy(learn_bench.SEEDS[:1] if quick else learn_bench.SEEDS),
        *learn_app_bench.run(quick),
    ]


def _lm(args: argparse.Namespace) -> Runner:
    from bench import lm_bench

    return lm_bench.figures


def _exercises(args: argparse.Namespace) -> Runner:
    from bench import exercises_bench

    return exercises_bench.run


def _class_load(args: argparse.Namespace) -> Runner:
    from bench import class_load_bench

    return lambda quick: asyncio.run(class_load_bench.run(quick))


def _train_load(args: argparse.Namespace) -> Runner:
    from bench import train_load_bench

    return train_load_bench.run


# Per section, what builds its runner from the arguments (each imports its module only when
# its section runs: TensorFlow and Playwright are slow to import).
RUNNERS: dict[str, Callable[[argparse.Namespace], Runner]] = {
    "backend": _backend,
    "inspect": _inspect,
    "figures": _figures,
    "app": _app,
    "controls": _controls,
    "model_view": _model_view,
    "your_model": _your_model,
    "first_open": _first_open,
    "memory": _memory,
    "load": _load,
    "learn": _learn,
    "lm": _lm,
    "exercises": _exercises,
    "class_load": _class_load,
    "train_load": _train_load,
}


def _complete(args: argparse.Namespace) -> bool:
    """Whether this run measures its sections in full: only such runs go to bench/results.json
    (a --quick smoke run, some sizes, or no cold starts print and save latest.txt only)."""
    return not args.quick and args.sizes == SIZES and not args.skip_cold


def _key(section: str, args: argparse.Namespace) -> str:
    """The section's entry in bench/results.json: `load-nginx2` for load through 2 replicas."""
    return f"{section}-nginx{args.through_nginx}" if args.through_nginx else section


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections; 0 if all ran (targets met or not), 1 if a section failed."""
    args = _parse(argv)
    out = Output()
    out(f"attnviz benchmark{' (--quick)' if args.quick else ''}: {', '.join(args.only)}")
    machine = machine_lines(CHROMIUM)
    for line in machine:
        out(f"  {line}")
    failed = []
    for section in [s for s in SECTIONS if s in args.only]:
        start = time.monotonic()
        out()
        if section == "load" and args.through_nginx:
            out(f"(load through nginx in front of {args.through_nginx} replica(s) of each app)")
        try:
            figures = RUNNERS[section](args)(args.quick)
        except Exception:  # noqa: BLE001 - report the failure, go on with the next section
            failed.append(section)
            out(f"{TITLES[section]}\nFAILED:\n{traceback.format_exc()}")
        else:
            out(table(TITLES[section], figures))
            if _complete(args):
                results.record(_key(section, args), TITLES[section], machine, figures)
        finally:
            servers.stop_all()
        out(f"({section}: {time.monotonic() - start:.0f} s)")
    via = f"-nginx{args.through_nginx}" if args.through_nginx else ""
    saved = BENCH / "results" / f"{'quick' if args.quick else 'latest'}{via}.txt"
    out(f"\nsaved to {saved.relative_to(BENCH.parent)}; server logs in {servers.log_dir()}")
    out.save(saved)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
