"""Reaching a Dask scheduler: a client within the connect timeout, or one line that says why not.

`connect` is how `crawler batch --scheduler` and `crawler history --scheduler` get their client.
Whatever listens at the address, the attempt ends within Dask's connect timeout (its
`distributed.comm.timeouts.connect` setting, 30 s unless configured; there is no option of our
own, as the address itself defaults to Dask's `scheduler-address` setting). `Client(address,
timeout=...)` alone does not: it bounds the TCP connection, but not the handshake that follows,
which waits for the peer's first message without a limit (a listener that accepts and never
answers held a batch for good), and bytes that are not Dask's protocol raise anything from
`struct.error` to `MemoryError` inside it, with a 69-line traceback and a client that then takes
6 s to fail closing at exit. So the handshake is made first on its own, with distributed's public
`distributed.comm.connect` under a deadline in a loop of ours (cancelled there, it leaves
nothing behind), and the client only once a Dask server has answered it.

What answers at the address decides the line: nothing (a closed port, a host that drops the
connection: `OSError`), something that is not Dask's protocol, or nothing within the timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from crawler.errors import CrawlerError

if TYPE_CHECKING:
    from distributed import Client

CONNECT_SETTING = "distributed.comm.timeouts.connect"
ADVICE = (f"check the address (a scheduler prints it as it starts: `dask scheduler`), or wait "
          f"longer with Dask's {CONNECT_SETTING} setting (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)")


def connect_seconds() -> float:
    """Dask's connect timeout, in seconds (its `distributed.comm.timeouts.connect`)."""
    import dask.config
    from dask.utils import parse_timedelta

    seconds = parse_timedelta(dask.config.get(CONNECT_SETTING, "30s"), default="seconds")
    return float(seconds) if seconds else 30.0


def connect(address: str) -> Client:
    """A client of the Dask scheduler at `address`, within `connect_seconds()`; otherwise a
    `CrawlerError` in one line that names the address, what answered there and what to do."""
    try:
        from distributed import Client
    except ImportError as error:
        raise CrawlerError(f"--scheduler {address}: dask.distributed is not installed; "
                           "install the extra with `pip install 'raise-site-crawler[dask]'`") from error
    _check_address(address)
    seconds = connect_seconds()
    started = time.monotonic()
    with dask_muted():  # distributed logs a peer's undecodable bytes with a traceback
        _handshake(address, seconds)
        left = max(seconds - (time.monotonic() - started), 1.0)
        try:
            return Client(address, timeout=left)
        except (OSError, ImportError) as error:  # it went away meanwhile; refused our versions
            raise CrawlerError(f"--scheduler {address}: {_words(error)}; {ADVICE}") from error


def _check_address(address: str) -> None:
    """Refuse what does not read as an address before any connection (a port that is no number)."""
    from distributed.comm import get_address_host_port, parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, _ = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls"):
            get_address_host_port(address)
    except ValueError as error:
        raise CrawlerError(f"--scheduler {address}: not an address ({_words(error)}); give the "
                           "one the scheduler prints as it starts (tcp://HOST:8786)") from None


def _handshake(address: str, seconds: float) -> None:
    """Open and close one connection to `address` as a Dask client does, within `seconds`."""
    from distributed.comm import connect as open_comm
    from distributed.security import Security

    async def shake() -> None:
        arguments = Security().get_connection_args("client")  # TLS, as Dask's settings say
        comm = await asyncio.wait_for(open_comm(address, timeout=seconds, **arguments), seconds)
        await comm.close()

    try:
        asyncio.run(shake())
    except (TimeoutError, asyncio.TimeoutError):
        raise CrawlerError(f"--scheduler {address}: nothing there answered as a Dask scheduler "
                           f"within {seconds:g} s; {ADVICE}") from None
    except OSError as error:  # refused, reset, closed, no TCP connection in time
        raise CrawlerError(f"--scheduler {address}: cannot reach a Dask scheduler "
                           f"({_words(error)}); {ADVICE}") from None
    except Exception as error:  # noqa: BLE001 - whatever the peer's bytes made distributed raise
        raise _not_dask(address, error) from None


def _not_dask(address: str, error: Exception) -> CrawlerError:
    return CrawlerError(f"--scheduler {address}: what answers there is not a Dask scheduler "
                        f"(its reply does not decode: {type(error).__name__}: {_words(error)}); "
                        f"{ADVICE}")


def _words(error: BaseException) -> str:
    """An error's first line, at most 200 characters."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else repr(error)
    return text if len(text) <= 200 else text[:199] + "…"


@contextmanager
def dask_muted() -> Iterator[None]:
    """Mute Dask's own logging while the batch runs and stops: it would print tracebacks of a
    lost connection, of its reconnection, and of tasks cancelled under it. The batch tells what
    it meets (a worker lost, a task killed, the scheduler gone) in its own lines."""
    # Each of Dask's modules has its logger, some with a level of their own: a level set on
    # "distributed" alone would not reach them.
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)
               if name.split(".", 1)[0] == "distributed"]
    before = [logger.disabled for logger in loggers]
    for logger in loggers:
        logger.disabled = True
    try:
        yield
    finally:
        for logger, disabled in zip(loggers, before):
            logger.disabled = disabled
