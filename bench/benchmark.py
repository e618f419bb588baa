"""attnviz benchmark: every figure beside its baseline, measured in the same run.

    python -m bench.benchmark [--quick] [--only backend,app,memory,load,...]
                              [--sizes 16,256] [--skip-cold] [--through-nginx K]

(from the repository root, with the dev requirements installed).

Sections (see bench/README.md): backend (compute_attention vs Keras MultiHeadAttention and
numpy), app (cold start and click-to-repaint in headless Chromium vs the floor app; the cold
start also beside the floor plus a bare `import tensorflow`), controls (a click on each of
today's mask and position controls vs the floor's causal toggle), memory
(server RSS over 500 reruns), load (10, 30 and 60 sessions at once, each interacting every
2–5 s; with --through-nginx K, through nginx in front of K replicas), figures, learn, lm
(the language model's training vs a plain fit, and its time to 95 % in-context accuracy),
model_view (click a square of a head map → that head enlarged, at 2 × 4 and 6 × 12 heads, vs
the floor app bench/floor_model_view.py) and first_open (each page's first visit after the
server's warm-up, until its charts are painted, vs bench/floor_charts.py drawing the same
heatmaps). Prints the machine, then one table per section, and saves everything printed to
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
from deploy import servers
from deploy.chromium import CHROMIUM

BENCH = Path(__file__).resolve().parent

SECTIONS = (
    "backend",
    "figures",
    "app",
    "controls",
    "memory",
    "load",
    "learn",
    "lm",
    "model_view",
    "first_open",
)
TITLES = {
    "backend": "1. Back end: compute_attention vs Keras MultiHeadAttention and numpy (D=64)",
    "app": "2. App in headless Chromium vs the floor app (bench/floor_app.py)",
    "controls": "2b. Today's controls (masks, positions) clicked → weights repainted, vs the "
    "floor app's causal toggle",
    "memory": "3. Memory: server RSS over reruns with changing sizes",
    "load": "4. Load: a classroom on one server, 10 / 30 / 60 sessions each with its own input",
    "figures": "1b. Figures: the 4,096² heatmap vs numpy pooling + a plain plotly heatmap",
    "learn": "5. Learn: training vs plain fit, time to 99 %, other sessions while one trains",
    "lm": "7. Language model: train_lm vs a plain fit of the same model, time to 95 % "
    "in-context accuracy",
    "model_view": "6. Model view: click a head → enlarged head repainted, vs the floor app "
    "(bench/floor_model_view.py)",
    "first_open": "8. First open after the warm-up: each page's charts painted, vs a floor page "
    "drawing the same heatmaps (bench/floor_charts.py)",
}


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
        prog="python -m bench.benchmark", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}"
    )
    parser.add_argument(
        "--sizes",
        default=",".join(str(n) for n in SIZES),
        help=f"comma-separated token counts for backend and app clicks, of {SIZES}",
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


def _runner(section: str, args: argparse.Namespace) -> Callable[[bool], list[Figure]]:
    if section == "backend":
        from bench import backend_bench

        return lambda quick: backend_bench.run(quick, sizes=args.sizes)
    if section == "app":
        from bench import app_bench

        return lambda quick: asyncio.run(
            app_bench.run(quick, sizes=args.sizes, cold=not args.skip_cold)
        )
    if section == "controls":
        from bench import controls_bench

        sizes = tuple(n for n in args.sizes if n in controls_bench.SIZES)
        return lambda quick: asyncio.run(controls_bench.run(quick, sizes=sizes))
    if section == "lm":
        from bench import lm_bench

        return lm_bench.figures
    if section == "memory":
        from bench import memory_bench

        return lambda quick: asyncio.run(memory_bench.run(quick))
    if section == "figures":
        from bench import figure_bench

        return figure_bench.run
    if section == "model_view":
        from bench import model_view_bench

        return model_view_bench.run
    if section == "first_open":
        from bench import first_open_bench

        return first_open_bench.run
    if section == "learn":
        from bench import learn_app_bench, learn_bench

        return lambda quick: [
            *learn_bench.throughput(1 if quick else 3),
            *learn_bench.time_to_accuracy(learn_bench.SEEDS[:1] if quick else learn_bench.SEEDS),
            *learn_app_bench.run(quick),
        ]
    from bench import load_bench

    return lambda quick: asyncio.run(load_bench.run(quick, through_nginx=args.through_nginx))


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
            figures = _runner(section, args)(args.quick)
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
