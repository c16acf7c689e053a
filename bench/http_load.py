"""What bench/http_pages.py is made of: the throw-away database, gunicorn servers, pages, wrk
runs, the table."""

import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUNICORN = str(Path(sys.executable).with_name("gunicorn"))
WORKERS = 2
CONNECTIONS = int(os.environ.get("BENCH_HTTP_CONNECTIONS", "16"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------------------ the database


def database_url_for(name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    url = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental"))
    return urlunsplit(url._replace(path="/" + name))


def _admin_connection():
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(database_url_for("postgres"))
    return psycopg.connect(
        dbname="postgres",
        user=config["USER"] or None,
        password=config["PASSWORD"] or None,
        host=config["HOST"] or None,
        port=config["PORT"] or None,
        autocommit=True,
    )


def bench_database_name() -> str:
    from urllib.parse import urlsplit

    url = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental"))
    return (url.path.lstrip("/") or "gpu_rental") + "_http_bench"


def recreate_database(name: str) -> None:
    with _admin_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def drop_database(name: str) -> None:
    with _admin_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# ------------------------------------------------------------------------------- servers


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # The parent pid is the 2nd field after the parenthesised command name.
            if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                pids.append(int(entry.name))
        return sorted(pids)

    def worker_rss_mb(self) -> list[float]:
        sizes = []
        for pid in self.worker_pids():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes.append(int(line.split()[1]) / 1024)
        return sizes

    def worker_cpu_seconds(self) -> dict[int, float]:
        """User and system CPU time of each worker so far, by pid."""
        seconds = {}
        for pid in self.worker_pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone meanwhile
                continue
            ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
            seconds[pid] = ticks / os.sysconf("SC_CLK_TCK")
        return seconds

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_gunicorn(name: str, wsgi: str, env: dict, workdir: Path) -> Server:
    port = free_port()
    log = workdir / f"gunicorn-{name}.log"
    process = subprocess.Popen(  # noqa: S603 - our own gunicorn
        [GUNICORN, "-w", str(WORKERS), "-b", f"127.0.0.1:{port}", "--log-level", "warning", wsgi],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    server = Server(name, port, process, log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn {name} exited:\n{log.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"gunicorn {name} did not answer on port {port}")


# ------------------------------------------------------------------------------------ pages


@dataclass(frozen=True)
class Page:
    label: str
    path: str
    marker: str  # text the page must contain (proves the customer is logged in)
    headers: tuple[tuple[str, str], ...] = ()


def fetch(server: Server, page: Page, cookie: str) -> tuple[int, str, list[str]]:
    url = server.base + page.path  # always http://127.0.0.1:<port>/...
    request = urllib.request.Request(url, headers=dict(page.headers))  # noqa: S310
    if cookie:
        request.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            return (
                response.status,
                response.read().decode(),
                response.headers.get_all("Set-Cookie") or [],
            )
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace"), []


def check_page(server: Server, page: Page, cookie: str) -> None:
    status, body, _ = fetch(server, page, cookie)
    if status != 200 or page.marker not in body:
        raise SystemExit(
            f"{server.name} {page.path}: HTTP {status}, marker {page.marker!r} "
            f"{'found' if page.marker in body else 'missing'}:\n{body[:2000]}\n"
            f"{server.log.read_text()[-3000:]}"
        )


# -------------------------------------------------------------------------------------- wrk


@dataclass
class Run:
    rps: float
    p50_ms: float
    p99_ms: float
    # The workers' CPU time per request: what the page costs whatever else the machine runs.
    cpu_ms: float


SOCKET_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _latency_ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * _UNITS[unit]


def wrk(
    server: Server, page: Page, cookie: str, seconds: int, connections: int = CONNECTIONS
) -> Run:
    threads = min(2, connections)
    command = [
        *("wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s"),
        *("--timeout", "30s", "--latency"),
    ]
    headers = list(page.headers) + ([("Cookie", cookie)] if cookie else [])
    for name, value in headers:
        command += ["-H", f"{name}: {value}"]
    cpu_before = server.worker_cpu_seconds()
    output = subprocess.run(  # noqa: S603 - wrk from the distribution
        [*command, server.base + page.path], capture_output=True, text=True, check=True
    ).stdout
    # A worker gunicorn replaced during the run (max_requests) counts from its start; the one
    # it replaced is gone with its last seconds (a total over pids went negative).
    cpu_after = server.worker_cpu_seconds()
    cpu = sum(used - cpu_before.get(pid, 0.0) for pid, used in cpu_after.items())
    errors = SOCKET_ERRORS.search(output)
    if "Non-2xx" in output or (errors and any(int(count) for count in errors.groups())):
        raise SystemExit(f"{server.name} {page.path}: wrk saw errors:\n{output}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _latency_ms(re.search(r"\s50%\s+(\S+)", output).group(1))
    p99 = _latency_ms(re.search(r"\s99%\s+(\S+)", output).group(1))
    requests = int(re.search(r"(\d+) requests in", output).group(1))
    return Run(rps, p50, p99, cpu * 1000 / max(requests, 1))


def ensure_wrk() -> None:
    if shutil.which("wrk"):
        return
    print("Installing wrk from the distribution's packages...", flush=True)
    as_root = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [*as_root, "apt-get", "install", "-y", "-qq", "wrk"]
    if subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=False).returncode:  # noqa: S603
        subprocess.run([*as_root, "apt-get", "update", "-qq"], env=env, check=True)  # noqa: S603
        subprocess.run(install, env=env, stdout=subprocess.DEVNULL, check=True)  # noqa: S603
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed and could not be installed (apt-get install wrk)")


# ---------------------------------------------------------------------------- statistics


@dataclass
class Series:
    runs: list[Run] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    cpu_ratios: list[float] = field(default_factory=list)


def spread(values: list[float], digits: int = 0) -> str:
    return (
        f"{statistics.median(values):.{digits}f} "
        f"({min(values):.{digits}f}–{max(values):.{digits}f})"
    )


def print_table(title: str, rows: list[tuple[str, Series]]) -> None:
    print(title)
    width = max(len(label) for label, _ in rows) + 2
    columns = ("req/s", "p50 ms", "p99 ms", "× bare req/s", "CPU ms/req", "bare CPU ÷ CPU")
    print(f"  {'page':<{width}}" + "".join(f"{name:>21}" for name in columns))
    for label, series in rows:
        runs = series.runs
        cells = (
            spread([run.rps for run in runs]),
            spread([run.p50_ms for run in runs], 1),
            spread([run.p99_ms for run in runs], 1),
            spread(series.ratios, 2) if series.ratios else "1",
            spread([run.cpu_ms for run in runs], 2),
            spread(series.cpu_ratios, 2) if series.cpu_ratios else "1",
        )
        print(f"  {label:<{width}}" + "".join(f"{cell:>21}" for cell in cells))
    print(
        "  CPU ms/req: the web workers' CPU time per request (the rest of the machine's load "
        "does not change it much); bare CPU ÷ CPU: that ratio against the bare view's."
    )
