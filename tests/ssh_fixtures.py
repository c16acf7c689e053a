"""Pytest plugin: SSH endpoints for the readiness probe, a real one and broken ones.

- `sshd` (session): the distribution's OpenSSH server (/usr/sbin/sshd) of the session's own, on
  a free 127.0.0.1 port, with a throwaway host key; nobody can log in to it. Yields an
  SshServer (host, port, banner). Fails when OpenSSH is not installed: run
  scripts/ensure-test-services.
- `closed_port`: a 127.0.0.1 port on which nothing listens (connections are refused).
- `silent_port`: a 127.0.0.1 port that accepts connections and never writes.
- `not_ssh_port`: a 127.0.0.1 port that answers "HTTP/1.1 400 Bad Request" and closes.
- `scripted_port`: a factory, scripted_port(payload, close=True) -> port, for a 127.0.0.1 port
  that writes `payload` to each connection, then closes it (or, close=False, holds it open).

Registered in tests/conftest.py with `pytest_plugins = [..., "tests.ssh_fixtures"]`.
"""

import os
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rental.readiness import ProbeFailure, probe_ssh_banner

SSHD = "/usr/sbin/sshd"  # sshd refuses to start unless run by its absolute path
START_TIMEOUT_SECONDS = 10
PRIVILEGE_SEPARATION_DIR = Path("/run/sshd")


@dataclass(frozen=True)
class SshServer:
    host: str
    port: int
    banner: str


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _write_sshd_config(directory: Path, port: int) -> Path:
    authorized_keys = directory / "authorized_keys"
    authorized_keys.touch()
    config = directory / "sshd_config"
    config.write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {directory / 'host_ed25519'}\n"
        "PidFile none\n"
        "UsePAM no\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PermitRootLogin no\n"
        f"AuthorizedKeysFile {authorized_keys}\n"
        "StrictModes no\n"
    )
    return config


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _start_sshd(directory: Path, log) -> tuple[subprocess.Popen, SshServer]:
    port = free_port()
    config = _write_sshd_config(directory, port)
    process = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break  # it exited (the port was taken in between?): the caller tries again
        try:
            banner = probe_ssh_banner("127.0.0.1", port, timeout=1)
        except ProbeFailure:
            time.sleep(0.1)
            continue
        return process, SshServer("127.0.0.1", port, banner)
    _stop(process)
    raise RuntimeError(f"sshd did not answer on 127.0.0.1:{port}")


@pytest.fixture(scope="session")
def sshd(tmp_path_factory) -> Iterator[SshServer]:
    """The distribution's OpenSSH server on a free loopback port; stopped at the end."""
    if not os.access(SSHD, os.X_OK):
        pytest.fail(
            f"OpenSSH server not installed ({SSHD} is missing): run scripts/ensure-test-services "
            "(it installs the distribution package openssh-server)."
        )
    directory = tmp_path_factory.mktemp("sshd")
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "host_ed25519")],
        check=True,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    if os.geteuid() == 0 and not PRIVILEGE_SEPARATION_DIR.is_dir():
        PRIVILEGE_SEPARATION_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    with tempfile.TemporaryFile(mode="w+") as log:
        for _attempt in range(3):
            try:
                process, server = _start_sshd(directory, log)
                break
            except RuntimeError:
                continue
        else:
            log.seek(0)
            pytest.fail(f"sshd ({SSHD}) did not start; its output:\n{log.read()[-2000:]}")
        try:
            yield server
        finally:
            _stop(process)


@pytest.fixture
def closed_port() -> int:
    """A loopback port on which nothing listens."""
    return free_port()


class _Listener:
    """A 127.0.0.1 listener whose thread handles each connection with `on_connect`; the
    connections it keeps open are closed, and the thread stopped, by close()."""

    def __init__(self, on_connect: Callable[[socket.socket], bool]):
        self._on_connect = on_connect  # returns True to keep the connection open
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.05)
        self.port = self._sock.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _address = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                keep = self._on_connect(conn)
            except OSError:
                keep = False
            if keep:
                self._held.append(conn)
            else:
                conn.close()

    def close(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._sock.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts connections and never writes to them."""
    listener = _Listener(lambda conn: True)
    try:
        yield listener.port
    finally:
        listener.close()


@pytest.fixture
def scripted_port() -> Iterator[Callable[..., int]]:
    """scripted_port(payload: bytes, close=True) -> a loopback port that writes `payload` to
    each connection, then closes it (close=False: holds it open until the test ends)."""
    listeners: list[_Listener] = []

    def start(payload: bytes, *, close: bool = True) -> int:
        def on_connect(conn: socket.socket) -> bool:
            conn.sendall(payload)
            return not close

        listener = _Listener(on_connect)
        listeners.append(listener)
        return listener.port

    try:
        yield start
    finally:
        for listener in listeners:
            listener.close()


@pytest.fixture
def not_ssh_port(scripted_port) -> int:
    """A loopback port that answers like a web server ("HTTP/1.1 400 Bad Request") and closes."""
    return scripted_port(b"HTTP/1.1 400 Bad Request\r\n\r\n")
