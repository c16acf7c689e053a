"""A real Celery worker process for tests: `celery -A config worker --pool=solo` on Redis.

The worker runs the test settings with TEST_CELERY_WORKER=1 (config/settings/test.py): tasks
come from the broker (not eager), the database is the test's (pytest-django's test database,
whose rows the test commits), the local network is the test's anvil. Each worker consumes one
queue of the test's own and connects to PostgreSQL under an application name of its own, so a
test can find its backends in pg_stat_activity.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
import redis
from celery import Celery

from config.queues import queue_names, task_routes

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_SECONDS = 60
STOP_TIMEOUT_SECONDS = 15
# The Redis database of the workers' broker, unless TEST_CELERY_WORKER_BROKER_URL (under pytest,
# tests/isolation.py always sets it: the run's private Redis, a database per xdist worker).
BROKER_DB = 11


def broker_url_for(redis_url: str | None) -> str:
    """TEST_CELERY_WORKER_BROKER_URL, else database BROKER_DB of the Redis in REDIS_URL."""
    explicit = os.environ.get("TEST_CELERY_WORKER_BROKER_URL")
    if explicit:
        return explicit
    parts = urlsplit(redis_url or "redis://127.0.0.1:6379/0")
    return urlunsplit((parts.scheme, parts.netloc, f"/{BROKER_DB}", "", ""))


def purge_broker(broker_url: str) -> None:
    """Empty the broker's Redis database (queues, unacknowledged messages, bindings)."""
    client = redis.Redis.from_url(broker_url)
    try:
        client.flushdb()
    finally:
        client.close()


def database_url_of(settings_dict: dict) -> str:
    """A DATABASE_URL for the database of a Django connection's settings (the test database
    inside a test)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    credentials = f"{user}:{quote(password, safe='')}" if password else user
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or "5432"
    name = quote(settings_dict["NAME"], safe="")
    return f"postgres://{credentials}@{host}:{port}/{name}"


def pg_connect(settings_dict: dict, application_name: str) -> psycopg.Connection:
    """A connection of its own to the same database, outside Django (not in autocommit)."""
    return psycopg.connect(
        dbname=settings_dict["NAME"],
        user=settings_dict.get("USER") or None,
        password=settings_dict.get("PASSWORD") or None,
        host=settings_dict.get("HOST") or None,
        port=settings_dict.get("PORT") or None,
        application_name=application_name,
    )


class CeleryWorker:
    """One worker process; its log goes to `log_path`."""

    def __init__(
        self,
        *,
        env: dict[str, str],
        queues: list[str],
        log_path: Path,
        pool: str = "solo",
        concurrency: int | None = None,
    ):
        self.name = f"worker-test-{uuid.uuid4().hex[:8]}"
        # PostgreSQL shows the worker's connections under this name (libpq reads PGAPPNAME).
        self.application_name = self.name
        self.queues = queues
        self.pool = pool
        self.concurrency = concurrency
        self.log_path = log_path
        self.env = {
            **env,
            "PGAPPNAME": self.application_name,
            # The project from this checkout, whatever the virtual environment's install says.
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        }
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def command(self) -> list[str]:
        celery = Path(sys.executable).parent / "celery"
        program = [str(celery)] if celery.exists() else [sys.executable, "-m", "celery"]
        return [
            *program,
            "-A",
            "config.celery_app",
            "worker",
            f"--pool={self.pool}",
            *([f"--concurrency={self.concurrency}"] if self.concurrency else []),
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-Q",
            ",".join(self.queues),
            "-n",
            f"{self.name}@%h",
        ]

    def start(self) -> "CeleryWorker":
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C in pytest does not reach it; teardown stops it
            )
        self.wait_for_log(r"\bready\.", timeout=START_TIMEOUT_SECONDS, what="worker ready")
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_for_log(self, pattern: str, *, timeout: float, what: str) -> re.Match:
        """Wait until the worker's log matches `pattern`; fail if it exits or time runs out."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.log())
            if found:
                return found
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(
                    f"{what}: the worker exited ({self.process.returncode}) first; its log:\n"
                    f"{self.log()[-6000:]}"
                )
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{what}: not in the worker's log after {timeout:.0f} s; its log:\n"
                    f"{self.log()[-6000:]}"
                )
            time.sleep(0.1)

    def wait_for_task(self, task_id: str, *, timeout: float = 60) -> None:
        """Wait until this worker has run the task; fail if it raised."""
        found = self.wait_for_log(
            rf"\[{re.escape(task_id)}\] (succeeded|raised unexpected)",
            timeout=timeout,
            what=f"task {task_id} done",
        )
        assert found.group(1) == "succeeded", f"task {task_id} failed; log:\n{self.log()[-6000:]}"

    def descendants(self) -> list[int]:
        """Pids of the worker's child processes (none with the solo pool), from /proc."""
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        found, todo = [], [self.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def kill(self) -> None:
        """SIGKILL: children first, then the main process; wait until it is gone."""
        for pid in [*self.descendants(), self.pid]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert self.process is not None
        self.process.wait(timeout=STOP_TIMEOUT_SECONDS)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), SIGKILL if it does not end in time."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            self.kill()


def tcp_socket_owner(port: int, pids: list[int]) -> int | None:
    """Which of `pids` has an open TCP socket whose local port is `port` (from /proc)."""
    for pid in pids:
        try:
            inodes = {
                os.readlink(fd)[len("socket:[") : -1]
                for fd in Path(f"/proc/{pid}/fd").iterdir()
                if os.readlink(fd).startswith("socket:[")
            }
        except OSError:
            continue
        for table in ("tcp", "tcp6"):
            try:
                lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                if local_port == port and fields[9] in inodes:
                    return pid
    return None


class WorkerHarness:
    """Starts workers for one test, sends tasks to them through the broker, stops them."""

    def __init__(self, *, broker_url: str, base_env: dict[str, str], log_dir: Path):
        self.broker_url = broker_url
        self.queue = f"worker-test-{uuid.uuid4().hex[:12]}"
        self.base_env = base_env
        self.log_dir = log_dir
        self.workers: list[CeleryWorker] = []
        self.client = Celery("worker-test-client", broker=broker_url, set_as_current=False)

    def start(
        self,
        *,
        visibility_timeout: int = 3600,
        kinds: list[str] | None = None,
        pool: str = "solo",
        concurrency: int | None = None,
    ) -> CeleryWorker:
        """A worker of the test's own queues: every kind's (config/queues.py, each named
        "<test queue>.<kind>") and the one `send` publishes to, or only `kinds`'."""
        env = {
            **self.base_env,
            "TEST_CELERY_WORKER_QUEUE": self.queue,
            "TEST_CELERY_WORKER_VISIBILITY_TIMEOUT": str(visibility_timeout),
        }
        number = len(self.workers) + 1
        queues = queue_names(kinds, prefix=self.queue) + ([] if kinds else [self.queue])
        worker = CeleryWorker(
            env=env,
            queues=queues,
            log_path=self.log_dir / f"worker-{number}.log",
            pool=pool,
            concurrency=concurrency,
        )
        self.workers.append(worker)
        return worker.start()

    def send(self, name: str, args: list | None = None, *, routed: bool = False) -> str:
        """Publish a task (never run here); its id. To the test's own queue, or with `routed`
        to its kind's queue, as the application routes it (config/queues.py)."""
        queue = task_routes(self.queue)[name]["queue"] if routed else self.queue
        return self.client.send_task(name, args=args or [], queue=queue).id

    def task_errors(self) -> list[str]:
        """Log lines of tasks that failed (an exception other than a retry) in any worker."""
        return [
            line
            for worker in self.workers
            for line in worker.log().splitlines()
            if "] raised unexpected:" in line
        ]

    def logs(self) -> str:
        return "\n".join(
            f"===== {worker.name} (pid {worker.process.pid if worker.process else '-'}) "
            f"{worker.log_path}\n{worker.log()}"
            for worker in self.workers
        )

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.client.close()
