"""Readiness probe for prepared GPU hosts: does the host's SSH endpoint answer with a banner?

An SSH server speaks first (RFC 4253 §4.2): as soon as the TCP connection is up it sends its
identification string, "SSH-protoversion-softwareversion [comments]" and CRLF, possibly preceded
by other lines (which must not start with "SSH-"). The probe connects, reads until that version
line, sends nothing and closes. Connecting and reading share one deadline of `timeout` seconds.

Pure Python, stdlib only: the Celery task turns the results into model updates.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

KINDS = ("refused", "timeout", "not_ssh", "unreachable", "closed")
ACCEPTED_VERSIONS = (b"SSH-2.0-", b"SSH-1.99-")  # 1.99: a server that also speaks 2.0
MAX_PRE_BANNER_LINES = 16  # lines read in all, the version line included
MAX_PRE_BANNER_BYTES = 8 * 1024  # bytes read in all before the end of the version line
MAX_PARALLEL_PROBES = 8


def host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ProbeFailure(Exception):
    """The endpoint did not answer with an SSH banner.

    `kind` is one of KINDS; `detail` says what exactly happened (the OS error, the data read);
    str() is a short message for an operator, e.g. "127.0.0.1:2222: no SSH banner within 5.0 s".
    """

    def __init__(self, kind: str, detail: str, host: str, port: int, summary: str):
        if kind not in KINDS:
            raise ValueError(f"unknown probe failure kind {kind!r}")
        # Every argument goes to args, so that the exception pickles (Celery results, logging).
        super().__init__(kind, detail, host, port, summary)
        self.kind = kind
        self.detail = detail
        self.host = host
        self.port = port
        self.summary = summary

    def __str__(self) -> str:
        return f"{host_port(self.host, self.port)}: {self.summary}"


def probe_ssh_banner(host: str, port: int, *, timeout: float) -> str:
    """Connect to host:port and return the server's SSH version line (without CRLF), e.g.
    "SSH-2.0-OpenSSH_9.2p1 Debian-2". Raises ProbeFailure. The whole probe, connection and
    reading together, takes at most `timeout` seconds (name resolution aside: the system
    resolver has its own timeouts)."""
    if not timeout > 0:
        raise ValueError("timeout must be positive")
    deadline = time.monotonic() + timeout

    def fail(kind: str, detail: str, summary: str) -> ProbeFailure:
        return ProbeFailure(kind, detail, host, port, summary)

    def timed_out(detail: str) -> ProbeFailure:
        return fail("timeout", detail, f"no SSH banner within {timeout:.1f} s")

    try:
        sock = _connect(host, port, deadline)
    except ConnectionRefusedError as exc:
        raise fail("refused", str(exc), "connection refused (nothing listens there)") from exc
    except TimeoutError as exc:
        raise timed_out(f"connect: {exc or 'timed out'}") from exc
    except socket.gaierror as exc:
        raise fail("unreachable", str(exc), f"cannot resolve {host!r}") from exc
    except OSError as exc:  # network or host unreachable, no route, ...
        raise fail("unreachable", str(exc), f"unreachable ({exc.strerror or exc})") from exc

    try:
        return _read_version_line(sock, deadline, fail, timed_out)
    finally:
        sock.close()


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """socket.create_connection, but every address tried shares the one deadline."""
    addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    first_error: OSError | None = None
    for family, type_, proto, _name, address in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("timed out")
        sock = socket.socket(family, type_, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(address)
            return sock
        except OSError as exc:
            sock.close()
            first_error = first_error or exc
    raise first_error or OSError(f"no address for {host!r}")


def _read_version_line(sock: socket.socket, deadline: float, fail, timed_out) -> str:
    buffer = b""  # the line being read
    lines_read = 0
    bytes_read = 0
    other_lines: list[bytes] = []  # the first few, for the failure's detail

    def not_ssh(detail: str) -> ProbeFailure:
        return fail("not_ssh", detail, "answers, but not with an SSH banner")

    def check_version(line: bytes) -> str:
        line = line.rstrip(b"\r")
        if not line.startswith(ACCEPTED_VERSIONS):
            raise fail(
                "not_ssh",
                f"unsupported SSH version line {line[:100]!r}",
                "SSH server without SSH protocol 2.0",
            )
        return line.decode("ascii", errors="replace")

    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise timed_out(f"read {bytes_read} bytes, no version line")
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(4096)
        except TimeoutError as exc:
            raise timed_out(f"read {bytes_read} bytes, no version line") from exc
        except OSError as exc:  # reset by peer, ...
            raise fail("closed", str(exc), "connection closed before an SSH banner") from exc
        if not chunk:
            if buffer.startswith(b"SSH-"):  # the version line, its CRLF missing
                return check_version(buffer)
            if bytes_read or buffer:
                raise not_ssh(f"connection closed after {other_lines + [buffer]!r}"[:300])
            raise fail("closed", "EOF before any data", "connection closed before an SSH banner")
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            lines_read += 1
            bytes_read += len(line) + 1
            if line.startswith(b"SSH-"):
                return check_version(line)
            if len(other_lines) < 3:
                other_lines.append(line)
            if lines_read >= MAX_PRE_BANNER_LINES:
                raise not_ssh(f"{lines_read} lines without a version line: {other_lines!r}"[:300])
        if bytes_read + len(buffer) > MAX_PRE_BANNER_BYTES:
            raise not_ssh(f"over {MAX_PRE_BANNER_BYTES} bytes without a version line")


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    label: str = ""

    def __str__(self) -> str:
        where = host_port(self.host, self.port)
        return f"{self.label} ({where})" if self.label else where


def probe_all(
    endpoints: Iterable[Endpoint], *, timeout: float
) -> list[tuple[Endpoint, str | ProbeFailure]]:
    """Probe every endpoint (a few at a time); return (endpoint, version line or ProbeFailure)
    in the order given. Errors other than ProbeFailure (a bad argument) propagate."""
    endpoints = list(endpoints)
    if not endpoints:
        return []

    def probe(endpoint: Endpoint) -> str | ProbeFailure:
        try:
            return probe_ssh_banner(endpoint.host, endpoint.port, timeout=timeout)
        except ProbeFailure as failure:
            return failure

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_PROBES, len(endpoints))) as pool:
        return list(zip(endpoints, pool.map(probe, endpoints), strict=True))


def backoff_seconds(attempt: int, *, base: float = 5, cap: float = 300) -> float:
    """Delay before retry number `attempt` (1, 2, ...): base, 2*base, 4*base, ... at most cap.
    Deterministic (no jitter)."""
    if attempt < 1:
        raise ValueError("attempt counts from 1")
    try:
        delay = base * 2.0 ** (attempt - 1)
    except OverflowError:
        delay = math.inf
    return float(min(delay, cap))
