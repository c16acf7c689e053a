"""The `make run` stack for the soak (scripts/soak): started on free ports in a scratch VAR_DIR,
watched process by process, stopped as Ctrl-C would stop it."""

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Variables that would point the stack at servers (or other settings): the soak runs the
# embedded default, and must never touch a developer's database or broker.
SERVER_VARIABLES = (
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "DJANGO_SETTINGS_MODULE",
    "SITE_URL",
    "RPC_URL_LOCAL",
    "LOCAL_TOKEN_ADDRESS",
)
# The processes of Procfile.dev, each recognised by its command line.
PROCESSES = {
    "web": re.compile(r"manage\.py runserver"),
    "worker": re.compile(r"celery -A config.celery_app worker -Q celery,payments,emails"),
    "webhookworker": re.compile(r"celery -A config.celery_app worker -Q webhooks"),
    "hostworker": re.compile(r"celery -A config.celery_app worker -Q hosts"),
    "relay": re.compile(r"manage\.py outbox_relay"),
    "beat": re.compile(r"celery -A config.celery_app beat"),
    "chain": re.compile(r"anvil.*--chain-id 31337"),
    "sshd": re.compile(r"sshd -D -e -f|sleep infinity"),
}


# allauth's email verification code as its mail shows it (e.g. PXJZ-VSFZ).
CODE = re.compile(r"^[A-Z0-9]{4,}(-[A-Z0-9]{4,})*$")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
        except (OSError, IndexError):
            continue
        if stat[0] != "Z":  # a zombie has exited
            table[int(entry.name)] = (int(stat[1]), cmdline)
    return table


@dataclass
class Stack:
    var_dir: Path
    log_path: Path
    web_port: int
    anvil_port: int
    ssh_port: int
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in SERVER_VARIABLES}
        env.update(
            VAR_DIR=str(self.var_dir),
            HOST="127.0.0.1",
            PORT=str(self.web_port),
            ANVIL_PORT=str(self.anvil_port),
            DEMO_SSH_PORT=str(self.ssh_port),
            PYTHONUNBUFFERED="1",
            **self.extra_env,
        )
        return env

    def start(self) -> None:
        """`make run` in a process group of its own; its output goes to the log."""
        self.var_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - our own make run
                [shutil.which("make") or "make", "--no-print-directory", "run"],
                cwd=ROOT,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def mailed_code(self, email: str, timeout: float = 20) -> str:
        """The last verification code mailed to `email`, read from the web's console mail."""
        deadline = time.monotonic() + timeout
        while True:
            lines = [line.partition(" | ")[2].strip() for line in self.log().splitlines()]
            codes = [
                next((text for text in lines[index : index + 40] if CODE.match(text)), None)
                for index, text in enumerate(lines)
                if text == f"To: {email}"
            ]
            found = [code for code in codes if code]
            if found:
                return found[-1]
            if time.monotonic() > deadline:
                raise RuntimeError(f"no code mailed to {email} after {timeout:.0f} s")
            time.sleep(0.5)

    def wait_until_ready(self, timeout: float) -> None:
        """The site answers and the local chain's token is deployed (its address recorded)."""
        deadline = time.monotonic() + timeout
        chain_file = self.var_dir / "local-chain.json"
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"make run exited ({self.process.returncode}) while starting")
            if chain_file.exists() and self._answers() and not self.missing():
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the stack was not ready after {timeout:.0f} s "
                    f"(missing: {', '.join(self.missing()) or 'none'})"
                )
            time.sleep(1)

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.base_url + "/", timeout=10) as response:  # noqa: S310
                return response.status == 200
        except OSError:
            return False

    def processes(self) -> dict[str, list[int]]:
        """The live processes of each Procfile entry, among the descendants of `make run`."""
        found: dict[str, list[int]] = {name: [] for name in PROCESSES}
        if self.process is None or self.process.poll() is not None:
            return found
        table = _process_table()
        children: dict[int, list[int]] = {}
        for pid, (parent, _cmd) in table.items():
            children.setdefault(parent, []).append(pid)
        todo = [self.process.pid]
        while todo:
            for pid in children.get(todo.pop(), []):
                todo.append(pid)
                for name, pattern in PROCESSES.items():
                    if pattern.search(table[pid][1]):
                        found[name].append(pid)
        return found

    def missing(self) -> list[str]:
        """Entries of Procfile.dev with no live process (all of them once make run is gone)."""
        return [name for name, pids in self.processes().items() if not pids]

    def stop(self) -> None:
        """SIGINT to the group, as Ctrl-C in the terminal; then SIGTERM, then SIGKILL."""
        if self.process is None:
            return
        started = [pid for pids in self.processes().values() for pid in pids]
        for sig, wait in ((signal.SIGINT, 30), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            try:
                self.process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        # Whatever outlived make (honcho's children, in groups of their own) goes too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        live = _process_table()
        for pid in started:
            if pid in live:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
