"""One webhook POST to an already checked address, over by a deadline whatever the receiver
does: connect and read timeouts per socket operation, and a watchdog that shuts the socket
down at the deadline (a receiver dribbling its answer a byte at a time cannot hold the
worker). No redirects followed; the response body read up to a cap and discarded."""

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from django.conf import settings

from ..guard import Target

CHUNK = 8192


@dataclass(frozen=True, slots=True)
class PostResult:
    response_code: int | None
    error: str
    duration_ms: int

    @property
    def succeeded(self) -> bool:
        return self.response_code is not None and 200 <= self.response_code < 300


def attempt_deadline(started: float | None = None) -> float:
    """The time.monotonic() by which an attempt begun at `started` (now by default) ends."""
    return (time.monotonic() if started is None else started) + float(
        settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS
    )


def deadline_error() -> str:
    return f"no complete answer within {float(settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS):g} s"


def post(
    target: Target, body: bytes, headers: dict[str, str], *, deadline: float | None = None
) -> PostResult:
    """POST to the first of the target's checked addresses that accepts the connection (a
    refused or timed-out connect tries the next one); over by `deadline` (monotonic)."""
    started = time.monotonic()
    deadline = attempt_deadline(started) if deadline is None else deadline
    error = ""
    for address in target.addresses:
        left = deadline - time.monotonic()
        if left <= 0:
            return PostResult(None, deadline_error(), _elapsed(started))
        try:
            sock = _connect(target, address, min(settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS, left))
        except OSError as exc:  # refused, timed out, unreachable
            error = f"connection to {address} failed: {_reason(exc)}"
            continue  # the next address, if any
        code, error = _exchange(sock, target, body, headers, deadline)
        return PostResult(code, error[:500], _elapsed(started))
    return PostResult(None, error[:500], _elapsed(started))


def _connect(target: Target, address: str, timeout: float) -> socket.socket:
    sock = socket.create_connection((address, target.port), timeout=timeout)
    if target.scheme != "https":
        return sock
    try:  # the TLS handshake is made in _exchange, under the deadline's watchdog
        return ssl.create_default_context().wrap_socket(
            sock, server_hostname=target.host, do_handshake_on_connect=False
        )
    except BaseException:
        sock.close()
        raise


def _exchange(
    sock: socket.socket, target: Target, body: bytes, headers: dict[str, str], deadline: float
) -> tuple[int | None, str]:
    """Send the request and read the answer on a connected socket; (status, error)."""
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        with contextlib.suppress(OSError):  # the plain socket's (also under TLS): reads end
            socket.socket.shutdown(sock, socket.SHUT_RDWR)

    watchdog = threading.Timer(max(deadline - time.monotonic(), 0), cut)
    watchdog.daemon = True
    watchdog.start()
    connection = http.client.HTTPConnection(target.host, target.port)
    connection.sock = sock
    try:
        sock.settimeout(settings.WEBHOOK_READ_TIMEOUT_SECONDS)
        if isinstance(sock, ssl.SSLSocket):
            sock.do_handshake()
        connection.putrequest("POST", target.path, skip_host=True, skip_accept_encoding=True)
        for name, value in {**headers, "Host": target.host_header}.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        remaining = settings.WEBHOOK_MAX_RESPONSE_BYTES
        while remaining > 0 and not expired.is_set():
            chunk = response.read(min(CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
        if expired.is_set() or time.monotonic() > deadline:
            return None, deadline_error()
        return response.status, ""
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            return None, deadline_error()
        return None, _reason(exc)
    finally:
        watchdog.cancel()
        connection.close()
        sock.close()


def _reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    return f"{type(exc).__name__}: {reason or exc}"


def _elapsed(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
