"""Load: concurrent browser sessions on one server, each with its own input.

Shape letters: N = 16 tokens, D = 64 features.

One Chromium, one browser context (a separate Streamlit session) per simulated user, all
running at once through Playwright's asyncio API. User i opens the page with its own seed
(`r_seed`), then makes 20 interactions, alternately clicking the causal toggle and typing a new
seed of its own (user i only ever uses seeds 1000·(i+1) + j). After each interaction it waits
until its page shows the expected state, checked in the page: the "Raw scores" heatmap equals
Q Kᵀ of its own seed and the "Attention weights" heatmap its softmax, with or without the causal
mask as its toggle says (both computed here with numpy), the "Seed" box holds its own seed, and
the run is over.

- Latency: from the click (or Enter) to that state, stamped in the page.
- Errors: tracebacks or error boxes on a page, JavaScript errors, interactions that never reach
  their state.
- Leaks: a page showing another user's seed or matrix.

The same load runs against attnviz, then against the floor app (its baseline).
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import servers
from pages import ARM, PROBLEMS, close_page, launch_browser, new_page, toggle
from report import Figure, failed, progress

N, D = 16, 64
USERS, INTERACTIONS = 20, 20
QUICK_USERS, QUICK_INTERACTIONS = 5, 5
TIMEOUT_S = 120
TOLERANCE = 2e-3  # |Q Kᵀ| ~ 16; TensorFlow and numpy float32 agree to ~1e-5

# True (and the time stamped) once the page shows the expected state.
_SHOWS = """({raw, weights, seed, tol}) => {
  const find = (title) => Array.from(document.querySelectorAll('.js-plotly-plot')).find(
    (d) => d._fullData && d.querySelector('.gtitle')?.textContent.trim().startsWith(title));
  const shows = (title, expected, tol) => {  // blocked cells (NaN) read as 0
    const div = find(title);
    if (!div || !div.querySelector('.heatmaplayer image')) return false;
    const z = div._fullData[0].z;
    if (!z || z.length !== expected.length) return false;
    for (let i = 0; i < z.length; i++)
      for (let j = 0; j < z[i].length; j++) {
        const x = Number.isFinite(z[i][j]) ? z[i][j] : 0;
        if (!(Math.abs(x - expected[i][j]) <= tol)) return false;
      }
    return true;
  };
  if (!shows('Raw scores', raw, tol) || !shows('Attention weights', weights, 1e-4)) return false;
  if (document.querySelector('input[aria-label="Seed"]')?.value !== String(seed)) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  window.__bench.t1 = performance.now();
  return true;
}"""

_RAW = """() => { const div = Array.from(document.querySelectorAll('.js-plotly-plot')).find(
  (d) => d._fullData && d.querySelector('.gtitle')?.textContent.trim().startsWith('Raw scores'));
  return div ? div._fullData[0].z.map((row) => Array.from(row)) : null; }"""


@functools.cache
def raw_scores(seed: int) -> np.ndarray:
    """`(N, N)` Q Kᵀ of the seed's random inputs, drawn as both apps draw them."""
    rng = np.random.default_rng(seed)
    q, k = (rng.random((N, D)).astype(np.float32) for _ in range(2))
    return q @ k.T  # (N, D) x (D, N) -> (N, N)


def seed_of(user: int, step: int) -> int:
    """User `user`'s seed after `step` seed changes: never another user's."""
    return 1000 * (user + 1) + step


@dataclass
class Tally:
    """What all users of one app saw."""

    latencies_ms: list[float] = field(default_factory=list)  # one per interaction
    errors: list[str] = field(default_factory=list)  # what went wrong, one entry each
    leaks: list[str] = field(default_factory=list)  # another user's data seen
    interactions: int = 0


def url(server: servers.Server, seed: int) -> str:
    """The page with the user's own random inputs."""
    if server.name == "attnviz":
        return f"{server.url}/?source=Random&r_t={N}&r_s={N}&r_dk={D}&r_dv={D}&r_seed={seed}"
    return f"{server.url}/?r_t={N}&r_seed={seed}"


def _whose(z: list | None, seeds: dict[int, list[int]]) -> int | None:
    """The user one of whose seeds gives Q Kᵀ = `z`, if any."""
    if z is None or len(z) != N:
        return None
    for user, used in seeds.items():
        if any(np.allclose(z, raw_scores(seed), atol=TOLERANCE) for seed in used):
            return user
    return None


def weights(seed: int, causal: bool) -> np.ndarray:
    """`(N, N)` softmax(Q Kᵀ / √D) in float64, blocked weights 0 under the causal mask."""
    logits = raw_scores(seed) / np.sqrt(D)
    if causal:
        logits = np.where(np.tri(N, dtype=bool), logits, -np.inf)
    exps = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exps / exps.sum(axis=1, keepdims=True)


async def _expect(page: Any, seed: int, causal: bool) -> float:
    """Milliseconds from the stamped event until the page shows `seed` and `causal`."""
    expected = {"raw": raw_scores(seed).tolist(), "weights": weights(seed, causal).tolist()}
    await page.wait_for_function(
        _SHOWS,
        arg={**expected, "seed": seed, "tol": TOLERANCE},
        polling="raf",
        timeout=TIMEOUT_S * 1000,
    )
    return await page.evaluate("() => window.__bench.t1 - (window.__bench.t0 ?? NaN)")


async def _interact(page: Any, user: int, step: int, state: dict) -> None:
    """Step `step` of a user: toggle causal on odd steps, type a new seed on even ones."""
    await page.evaluate(ARM)
    if step % 2:
        state["causal"] = not state["causal"]
        await toggle(page)
    else:
        state["seed"] = seed_of(user, step)
        box = page.get_by_label("Seed", exact=True)
        await box.fill(str(state["seed"]))
        await box.press("Enter")


async def _check(page: Any, user: int, seeds: dict, tally: Tally, errors: list[str]) -> None:
    problems = await page.evaluate(PROBLEMS)
    if problems["exceptions"] or problems["errors"] or errors:
        tally.errors.append(f"user {user}: {problems} {errors[:1]}")
        errors.clear()
    shown = _whose(await page.evaluate(_RAW), seeds)
    if shown is not None and shown != user:
        tally.leaks.append(f"user {user} saw user {shown}'s matrix")


async def user_session(browser: Any, server: servers.Server, user: int, steps: int,
                       seeds: dict[int, list[int]], tally: Tally) -> None:  # fmt: skip
    """One simulated user: open, then `steps` interactions, each checked."""
    page = await new_page(browser, TIMEOUT_S)
    js_errors: list[str] = []
    page.on("pageerror", lambda error: js_errors.append(str(error)[:200]))
    state = {"seed": seed_of(user, 0), "causal": False}
    seeds[user] = [state["seed"]]
    try:
        await page.goto(url(server, state["seed"]))
        await page.evaluate(ARM)
        await _expect(page, state["seed"], False)
        for step in range(1, steps + 1):
            await _interact(page, user, step, state)
            seeds[user].append(state["seed"])
            tally.interactions += 1
            try:
                tally.latencies_ms.append(await _expect(page, state["seed"], state["causal"]))
            except Exception as error:  # noqa: BLE001 - a timeout: find out what it shows
                shown = _whose(await page.evaluate(_RAW), seeds)
                where = tally.leaks if shown not in (None, user) else tally.errors
                where.append(f"user {user} step {step}: shows user {shown}'s data; {error}")
            await _check(page, user, seeds, tally, js_errors)
    except Exception as error:  # noqa: BLE001 - count it, keep the other users going
        tally.errors.append(f"user {user}: {type(error).__name__}: {str(error)[:200]}")
    finally:
        await close_page(page)


async def _load(browser: Any, name: str, users: int, steps: int) -> tuple[Tally, float]:
    server = servers.launch(name)
    tally, seeds = Tally(), {}
    start = time.monotonic()
    try:
        sessions = (user_session(browser, server, u, steps, seeds, tally) for u in range(users))
        await asyncio.gather(*sessions)
        if server.died():
            tally.errors.insert(0, f"the {name} server was stopped from outside during the load")
    finally:
        server.stop()
    return tally, time.monotonic() - start


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    return float(np.percentile(values, q))


def _figures(tallies: dict[str, tuple[Tally, float]], users: int, steps: int) -> list[Figure]:
    ours, floor = tallies["attnviz"][0], tallies["floor"][0]
    note = (
        f"{users} users × {steps} interactions each, all at once; attnviz {ours.interactions} "
        f"interactions in {tallies['attnviz'][1]:.0f} s, floor {floor.interactions} in "
        f"{tallies['floor'][1]:.0f} s"
    )
    details = "; ".join((ours.errors + ours.leaks)[:3])
    rows = [
        Figure("errors (tracebacks, error boxes, JS errors, timeouts)", len(ours.errors),
               "floor", len(floor.errors), "", "0", not ours.errors, details or note, False),
        Figure("another user's input seen", len(ours.leaks), "floor", len(floor.leaks), "",
               "0", not ours.leaks, compare=False),
    ]  # fmt: skip
    for q in (50, 95):
        rows.append(
            Figure(f"interaction latency p{q}", _percentile(ours.latencies_ms, q), "floor",
                   _percentile(floor.latencies_ms, q), "ms", "reported", None)
        )  # fmt: skip
    return rows


async def run(quick: bool = False) -> list[Figure]:
    """The load against attnviz, then the same load against the floor app."""
    from playwright.async_api import async_playwright

    users, steps = (QUICK_USERS, QUICK_INTERACTIONS) if quick else (USERS, INTERACTIONS)
    async with async_playwright() as playwright:
        browser = await launch_browser(playwright)
        try:
            tallies = {}
            for name in ("attnviz", "floor"):
                progress(f"load: {users} users on {name}")
                tallies[name] = await _load(browser, name, users, steps)
            return _figures(tallies, users, steps)
        except Exception as error:  # noqa: BLE001 - report it as a failed figure
            return [failed("load", "0 errors", error)]
        finally:
            servers.stop_all()
            await browser.close()
