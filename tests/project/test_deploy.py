"""attnviz behind nginx (deploy/): sessions spread over the replicas, stick to them, keep apart,
and come back from the other replica when theirs dies.

Two replicas and nginx are started as `python -m deploy.run` starts them (`deploy.cluster`). Three
users open the app through nginx in their own browser contexts, each with its own seed and mask
(nginx hands new visitors to the replicas in turn: one replica gets two of them, the other one);
then replica r1 is killed (SIGKILL, like a crash). Its users' pages must open a new websocket
through nginx to r2 by themselves: the page stays, and its next click is answered by r2 from
the inputs the page holds (a new session there); a reload shows the same view from the URL
alone. r2's users must notice nothing. Every wait is Playwright's (a websocket event, a
condition in the page), with a generous timeout: nothing is timed.

Needs Debian's nginx and Chromium: without them the test is skipped with a hint, except under
ATTNVIZ_REQUIRE_BROWSER=1 or CI=true, where that is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from browser_support import REQUIRE_ENV, App, Tabs, close

from attnviz.ui.frame.server_config import WARM_UP_ENV
from deploy import cluster

HEADER = "x-attnviz-replica"  # deploy.nginx_config's HEADER, as Playwright spells headers

pytestmark = [pytest.mark.browser, pytest.mark.slow]

USERS = 3  # the fewest that put two sessions on one replica (kept apart there) and one on the
# other; each user's page loads the app's scripts afresh (not the origin of the other browser
# tests' server): 6-8 CPU-s of Chromium each (measured 2026-11-27)
N, D = 4, 4  # tokens and features of each user's random Q, K
CAUSAL = "Causal (look-ahead) mask"
RECONNECT_S = 60  # most time a page may take to open its new websocket (a failure, not a figure)
VICTIM = "r1"


def raw_scores(seed: int) -> np.ndarray:
    """`(N, N)` Q Kᵀ of the seed's random inputs (numpy's draw, as the app's Random source)."""
    rng = np.random.default_rng(seed)
    q, k = rng.random((N, D)), rng.random((N, D))
    return q @ k.T  # (N, D) x (D, N) -> (N, N)


def weights(seed: int, causal: bool) -> list[list[float]]:
    """softmax(Q Kᵀ / √D) in float64, future keys blocked under the causal mask."""
    scores = raw_scores(seed) / np.sqrt(D)
    if causal:
        scores = np.where(np.tri(N, dtype=bool), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).tolist()


@dataclass
class User:
    """One browser context through nginx, its own inputs, and its websockets."""

    app: App
    seed: int
    causal: bool
    sockets: list[Any] = field(default_factory=list)  # the page's /_stcore/stream websockets
    closed: int = 0  # how many of them closed
    forget: Callable[[], None] = lambda: None  # stops counting the page's websockets

    def shows_own_view(self) -> bool:
        """Whether the page shows this user's input now."""
        raw = self.app.z("Raw scores")
        own = raw is not None and close(raw, raw_scores(self.seed).tolist(), tol=1e-4)
        return own and close(self.app.weights(), weights(self.seed, self.causal), tol=1e-5)

    def wait_for_own_view(self) -> None:
        """Wait until the page shows this user's input (its scores, then its weights)."""
        self.app.wait_for_z(raw_scores(self.seed).tolist(), "Raw scores", tol=1e-4)
        self.app.wait_for_weights(weights(self.seed, self.causal))

    def replica(self) -> str:
        """The replica nginx sends this browser's requests to (by its cookie)."""
        response = self.app.page.context.request.get(f"{self.app.url}/_stcore/health")
        return response.headers.get(HEADER, "")


@pytest.fixture(scope="module")
def nginx_cluster(chromium_path: str) -> Iterator[Any]:
    """Two attnviz replicas behind nginx (a `deploy.cluster` Cluster), stopped at the end."""
    assert cluster.HEADER.lower() == HEADER
    reason = cluster.nginx_missing()
    if reason:
        if os.environ.get(REQUIRE_ENV) == "1" or os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} ({REQUIRE_ENV}=1 or CI: this test must run)", pytrace=False)
        pytest.skip(reason)
    with pytest.MonkeyPatch.context() as env:  # the replicas inherit it
        env.setenv(WARM_UP_ENV, "0")  # their warm-ups would only compete with the browsers
        running = cluster.start(2)
    try:
        yield running
    finally:
        running.stop()


def _start_loading(tabs: Tabs, url: str, user: int) -> User:
    """A new user's page (a tab of its own browser context, without cookies), navigated to the
    app with the user's own random input (not drawn yet: the users' pages load at once, as a
    class's would)."""
    page = tabs.take()
    state = User(App(page, url), seed=100 + user, causal=False)

    def on_socket(socket: Any) -> None:
        if socket.url.endswith("/_stcore/stream"):
            state.sockets.append(socket)
            socket.on("close", lambda _: setattr(state, "closed", state.closed + 1))

    page.on("websocket", on_socket)
    state.forget = lambda: page.remove_listener("websocket", on_socket)
    query = f"source=Random&r_t={N}&r_s={N}&r_dk={D}&r_dv={D}&r_seed={state.seed}"
    state.app.start_loading(f"{url}/?{query}")
    return state


def _type_own(user: User, index: int) -> None:
    """The user's own input, typed: a new seed, and the causal mask for odd users (not waiting
    for the page to show it: the users type at once)."""
    user.seed = 200 + index
    user.app.set_number("Seed", user.seed)
    if index % 2:
        user.causal = True
        user.app.set_switch(CAUSAL, True)


def _click_causal(user: User) -> None:
    """A live interaction: the server must know the user's seed to answer it right."""
    user.causal = not user.causal
    user.app.set_switch(CAUSAL, user.causal)
    user.wait_for_own_view()


def _sticky_log(running: Any) -> list[str]:
    """Access-log lines where a request with a replica's cookie was served by another one."""
    wrong = []
    for line in (running.prefix / "access.log").read_text().splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        cookie, served = fields.get("cookie", "-"), fields.get("served_by", "")
        if cookie not in ("-", "") and served and cookie != served:
            wrong.append(line)
    return wrong


def test_sessions_spread_stick_and_survive_a_lost_replica(tabs, nginx_cluster):
    users = [_start_loading(tabs, nginx_cluster.url, u) for u in range(USERS)]
    try:
        for user in users:
            user.app.wait_opened(charts=6)
        for index, user in enumerate(users):
            _type_own(user, index)
        for user in users:
            user.wait_for_own_view()
        placed = {index: user.replica() for index, user in enumerate(users)}
        assert set(placed.values()) == {"r1", "r2"}, placed  # spread over both replicas
        assert all(user.shows_own_view() for user in users)  # no one sees another's input
        assert _sticky_log(nginx_cluster) == []  # every request reached its session's replica

        moved = [u for i, u in enumerate(users) if placed[i] == VICTIM]
        kept = [u for i, u in enumerate(users) if placed[i] != VICTIM]
        with ExitStack() as reconnections:  # Streamlit's page reconnects by itself, via nginx
            for user in moved:
                reconnections.enter_context(user.app.page.expect_websocket(
                    lambda socket: socket.url.endswith("/_stcore/stream"),
                    timeout=RECONNECT_S * 1000,
                ))  # fmt: skip
            nginx_cluster.replica(VICTIM).kill()
        # The page stays as it was, and its next click runs on the other replica with the
        # inputs the page holds; a reload rebuilds the same view from the URL alone.
        assert all(len(user.sockets) >= 2 and user.closed >= 1 for user in moved)
        _click_causal(moved[0])
        moved[-1].app.page.reload()
        moved[-1].app.wait_for_charts(6)
        moved[-1].wait_for_own_view()  # the same view after a reload
        for user in moved:
            assert user.replica() != VICTIM
            _click_causal(user)
        for user in kept:  # nothing happened to them
            assert user.shows_own_view()
            assert (len(user.sockets), user.closed) == (1, 0)
            _click_causal(user)
        assert all(u.app.exceptions() == 0 and u.app.alerts() == [] for u in users)
    finally:
        for user in users:  # emptied (cookies too) for the next test
            user.app.detach()
            user.forget()
            tabs.give_back(user.app.page)
