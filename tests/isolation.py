"""Pytest plugin, loaded first (`-p tests.isolation` in pyproject's addopts; run pytest as
`python -m pytest` from the repository's root, as make test does, so that `tests` is importable
before anything else; not in config/, whose import sets DJANGO_SETTINGS_MODULE to the dev
settings through config/celery_app.py): every run of the suite, and every pytest-xdist
worker of a run, has servers' state of its own, so that two `make test` at once on one machine,
and the workers of one run, never share a database.

- PostgreSQL: the run has an id (TEST_RUN_ID, "p" + the main pytest process's pid) that the
  test settings put in the test database's name (test_gpu_rental_p1234), and pytest-django adds
  the worker's suffix (test_gpu_rental_p1234_gw0), a copy of a migrated template
  (tests/db_template.py); each worker drops its own at the end.
- Redis: the run starts a private `redis-server` (the distribution's binary) on a free loopback
  port, without persistence, stopped when the run ends (and by the kernel if the run is
  killed: it gets SIGTERM when its parent dies). Worker k (gw<k>; 0 without xdist) has
  database 2k for the cache and rate limits (REDIS_URL; cleared between tests) and 2k+1 for
  the Celery test broker (TEST_CELERY_WORKER_BROKER_URL, emptied by the worker tests).
  TEST_REDIS_URL names another Redis server to use instead (then two runs at once must use
  two servers); without `redis-server`, the REDIS_URL server (default 127.0.0.1:6379).

The variables are set before pytest-django reads the settings, in the main process (whose
environment the xdist workers inherit) and in each worker, and every process the tests start
(Celery workers, embedded stacks) inherits them.
"""

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from urllib.parse import urlsplit, urlunsplit

import pytest

RUN_ID = "TEST_RUN_ID"
PRIVATE_REDIS = "TEST_RUN_REDIS_URL"  # the run's Redis server (no database), for the workers
START_TIMEOUT_SECONDS = 10
PR_SET_PDEATHSIG = 1

_server: dict = {}


def worker_number() -> int:
    """k of xdist's worker gw<k>; 0 in a run without workers."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name.removeprefix("gw") or 0)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the pytest process that started it dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _start_redis(binary: str) -> str:
    """A private redis-server on a free loopback port; its URL (no database)."""
    folder = tempfile.mkdtemp(prefix="gpu-rental-test-redis-")
    log_path = os.path.join(folder, "redis.log")
    for _attempt in range(5):
        port = _free_port()
        command = [
            binary,
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--databases", "256",
            "--dir", folder,
            "--logfile", log_path,
        ]  # fmt: skip
        process = subprocess.Popen(  # noqa: S603 (the distribution's binary, our arguments)
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # no threads yet in this process
        )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline and process.poll() is None:
            if _pings(port):
                _server.update(process=process, folder=folder)
                return f"redis://127.0.0.1:{port}"
            time.sleep(0.02)
        _stop_process(process)  # it exited (the port was taken in between?) or never answered
    with contextlib.suppress(OSError), open(log_path) as log:
        detail = log.read()[-2000:]
    shutil.rmtree(folder, ignore_errors=True)
    raise pytest.UsageError(f"the test run's redis-server ({binary}) did not start:\n{detail}")


def _stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _server_url() -> str:
    """The Redis server of this run: the private one (started here in the main process), or
    TEST_REDIS_URL's, or REDIS_URL's when the machine has no redis-server."""
    if os.environ.get(PRIVATE_REDIS):  # an xdist worker: the main process started it
        return os.environ[PRIVATE_REDIS]
    if os.environ.get("TEST_REDIS_URL"):
        url = os.environ["TEST_REDIS_URL"]
    elif binary := shutil.which("redis-server"):
        url = _start_redis(binary)
    else:
        url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379"
    parts = urlsplit(url)
    url = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    os.environ[PRIVATE_REDIS] = url
    return url


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Before pytest-django reads the settings: the run's id and this process's Redis
    databases in the environment."""
    os.environ.setdefault(RUN_ID, f"p{os.getpid()}")
    server = _server_url()
    k = worker_number()
    os.environ["REDIS_URL"] = f"{server}/{2 * k}"
    os.environ["TEST_CELERY_WORKER_BROKER_URL"] = f"{server}/{2 * k + 1}"
    return (yield)


def pytest_unconfigure(config):
    """The main process stops the run's private Redis."""
    process = _server.pop("process", None)
    if process is not None:
        _stop_process(process)
        shutil.rmtree(_server.pop("folder"), ignore_errors=True)
