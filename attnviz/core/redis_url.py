"""Where this server's shared store is: the Redis named by `ATTNVIZ_REDIS_URL`, read by the
class (`attnviz.classroom.from_env`) and the training runs (`attnviz.learn.runs.store`) alike, so
every replica pointing at one Redis shares both. Unset (or blank): each process keeps its own,
in memory (one server, e.g. `streamlit run app.py` on a laptop)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import redis

T = TypeVar("T")
CONNECTIONS = 32  # most connections one store of one replica opens to Redis
WAIT_FOR_CONNECTION = 20.0  # seconds a call waits for a free connection
REDIS_URL_VAR = "ATTNVIZ_REDIS_URL"  # `deploy.redis.REDIS_URL_ENV`: where Redis is


def redis_url_from_env() -> str:
    """The Redis address in `ATTNVIZ_REDIS_URL`, stripped; "" when it is unset or blank."""
    return os.environ.get(REDIS_URL_VAR, "").strip()


def redis_client(url: str, *, text: bool, socket_timeout: float = 10.0) -> redis.Redis:
    """A client of the Redis at `url` ("redis://127.0.0.1:6390/0") over a blocking pool of
    `CONNECTIONS`: when a lecture hall acts at once (200 students answer, or press Train), the
    calls beyond it wait for a free connection (up to `WAIT_FOR_CONNECTION` seconds) instead of
    failing with "Too many connections". `text`: replies decoded as str (else bytes)."""
    import redis  # only where a Redis is used

    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=CONNECTIONS, timeout=WAIT_FOR_CONNECTION, decode_responses=text,
        socket_timeout=socket_timeout, socket_connect_timeout=5, health_check_interval=30,
    )  # fmt: skip
    return redis.Redis(connection_pool=pool)


def answered(error: type[Exception], store: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A decorator: the method, with Redis not answering (after the client's own retries)
    raised as `error`, whose message names `store` ("The class's store") and says to try again."""
    import redis  # only where a Redis is used

    def decorate(method: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(method)
        def call(*args, **kwargs) -> T:
            try:
                return method(*args, **kwargs)
            except redis.RedisError as err:
                raise error(
                    f"{store} is not answering ({type(err).__name__}: {err}). "
                    "Try again in a moment."
                ) from err

        return call

    return decorate
