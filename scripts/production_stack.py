"""The roles of Procfile.production as plain processes on this machine, with
`config.settings.production`: what README's "Run it on several machines" starts without Docker or
systemd (compose.yaml's migrate job, then `honcho -f Procfile.production start`), on servers of
its own, so that it never touches another run's database, broker or ports.

    with ProductionStack(web_servers=2, role_env={"web": {"WEB_CONCURRENCY": "1"}}) as stack:
        stack.start()
        stack.wait_until_ready(timeout=180)
        stack.web_urls, stack.mail.wait_for(...), stack.manage("pay_local", "1"), stack.connect()
        stack.kill("worker-payments", signal.SIGKILL); stack.start_role("beat")

What start() brings up, in order:
- a scratch directory: VAR_DIR (static files, the local chain's record) and logs/, one file per
  process (`web.1.log`, `beat.1.log`, ... and the one-off jobs');
- a PostgreSQL database of its own on PRODUCTION_STACK_POSTGRES's server (default
  postgres://postgres@127.0.0.1:5432, trust authentication), dropped by stop(); databases of
  stacks whose process is gone are dropped on the way;
- a private redis-server on a free port (cache, sessions, broker, beat's lock);
- an SMTP sink (scripts/smtp_sink.py): production's EMAIL_HOST, its mails in `stack.mail`;
- a local chain (anvil, a block a second so that confirmations come by themselves) and its test
  stablecoin, deployed by `manage.py local_chain_setup` as `make run` does;
- compose.yaml's migrate job (its command, read from the file: migrate, then collectstatic) and
  the demo catalogue, so that there is something to order;
- every role of Procfile.production, read when the stack starts (any role the file names):
  `web` once per web server, each on a free port (GUNICORN_BIND), every other role once. Each
  runs as honcho runs it (`sh -c`, in a session and process group of its own), a simple command
  exec'd in place of the shell, so that the role's process is the one signalled and watched.

Run it by hand from the checkout: `python -m scripts.production_stack [--web-servers N]`.
"""

import argparse
import contextlib
import ctypes
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import yaml
from honcho.environ import parse_procfile

from scripts.smtp_sink import SmtpSink

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile.production"
COMPOSE = ROOT / "compose.yaml"
SETTINGS = "config.settings.production"
WEB_ROLE = "web"
POSTGRES = os.environ.get("PRODUCTION_STACK_POSTGRES", "postgres://postgres@127.0.0.1:5432")
DATABASE_PREFIX = "gpu_rental_stack_"
DATABASE_NAME = re.compile(rf"^{DATABASE_PREFIX}(\d+)_[0-9a-f]{{8}}$")
# An account xpub that is not the test-only default production refuses (account 2 of the public
# anvil mnemonic, as tests/test_deploy.py uses): the site only derives deposit addresses from it.
PAYMENT_XPUB = (
    "xpub6Ce9NcJvTk374xmC966FRY8NvVzjBr7FGiEf1h8mWkSwvCkvZ7PsCWEJS3nM"
    "sKLtRwsuEWY6indWjZFCB7yTqMpAoU7Z8c8TEkanQrsMF6j"
)
CHAIN_ID = 31337
# What a role inherits from the caller's environment: nothing that names a server or settings.
KEPT_VARIABLES = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")
SERVER_START_SECONDS = 30
ONE_OFF_SECONDS = 300
STOP_SECONDS = 20
PR_SET_PDEATHSIG = 1
_prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not in a forked child


class StackError(RuntimeError):
    """The stack could not do what was asked; the message ends with the logs that say why."""


def procfile_roles(path: Path = PROCFILE) -> dict[str, str]:
    """Role -> command, as honcho reads the file."""
    return dict(parse_procfile(path.read_text()).processes)


def migrate_job(path: Path = COMPOSE) -> list[str]:
    """compose.yaml's one-off migrate job, as argv."""
    command = yaml.safe_load(path.read_text())["services"]["migrate"]["command"]
    return ["/bin/sh", "-c", command] if isinstance(command, str) else [str(c) for c in command]


def shell_argv(command: str) -> list[str]:
    """`sh -c command` as honcho runs it; a simple command (no operators, redirections or
    leading assignments) exec'd in place of the shell."""
    try:
        tokens = list(shlex.shlex(command, posix=True, punctuation_chars=True))
    except ValueError:
        tokens = []
    simple = bool(tokens) and "=" not in tokens[0]
    simple = simple and not any(set(token) <= set("();<>|&") for token in tokens)
    return ["/bin/sh", "-c", f"exec {command}" if simple else command]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the process (thread) that started it is gone."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _alive(pid: int, probe=os.kill) -> bool:
    """Whether the process (or, with probe=os.killpg, the process group) still exists."""
    try:
        probe(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty)"


def anvil_binary() -> str | None:
    """The npm package's platform binary, else its wrapper, else an anvil on PATH (as
    scripts/local-chain and tests/chain_fixtures.py look for it)."""
    for candidate in sorted(ROOT.glob("node_modules/@foundry-rs/anvil-*/bin/anvil")):
        if os.access(candidate, os.X_OK):
            return str(candidate)
    wrapper = ROOT / "node_modules" / ".bin" / "anvil"
    return str(wrapper) if os.access(wrapper, os.X_OK) else shutil.which("anvil")


@dataclass
class Process:
    """One started process: a role's instance (`web.2`), a server or a one-off job."""

    name: str
    argv: list[str]
    log_path: Path
    popen: subprocess.Popen
    role: str = ""
    port: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def group_alive(self) -> bool:
        """Anything left of its process group (the role's children too)."""
        return _alive(self.popen.pid, os.killpg)

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)


def _spawn(name: str, argv: list[str], env: dict[str, str], log_path: Path, **fields) -> Process:
    with log_path.open("ab") as log:
        popen = subprocess.Popen(  # noqa: S603 - our own commands and the Procfile's
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a group of its own: signalled as one, never by a Ctrl-C
            preexec_fn=_die_with_parent,  # only a prctl, looked up beforehand
        )
    return Process(name=name, argv=argv, log_path=log_path, popen=popen, **fields)


def _stop(processes: list[Process], seconds: float) -> None:
    """SIGTERM to each group, SIGKILL to what is left of them after `seconds`; reaped."""
    for process in processes:
        process.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + seconds
    for process in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
    while any(p.group_alive() for p in processes) and time.monotonic() < deadline:
        time.sleep(0.1)  # children finishing their warm shutdown after their parent
    for process in processes:
        if process.group_alive():
            process.signal_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=10)


@dataclass
class ProductionStack:
    web_servers: int = 1
    # Extra variables for every process, and for every instance of a role ({"web": {...}}).
    env_overrides: dict[str, str] = field(default_factory=dict)
    role_env: dict[str, dict[str, str]] = field(default_factory=dict)
    # Kept after stop() when given (a test's tmp_path); else a temporary one, removed.
    scratch_dir: Path | None = None
    procfile: Path = PROCFILE

    def __post_init__(self):
        self.roles = procfile_roles(self.procfile)
        if WEB_ROLE not in self.roles:
            raise StackError(f"{self.procfile.name} has no {WEB_ROLE!r} role")
        if self.web_servers < 1:
            raise StackError("a stack needs at least one web server")
        self.processes: dict[str, Process] = {}  # the roles' instances, by name
        self.servers: list[Process] = []  # Redis, the chain
        self.jobs: list[Process] = []  # the one-off jobs
        self.mail = SmtpSink()
        self.database_name = f"{DATABASE_PREFIX}{os.getpid()}_{secrets.token_hex(4)}"
        self.database_url = f"{POSTGRES.rstrip('/')}/{self.database_name}"
        self.redis_url = ""
        self.rpc_url = ""
        self.token_address = ""
        self.secret_key = secrets.token_urlsafe(50)
        self._own_scratch = self.scratch_dir is None
        self._database_created = False
        self._web_ports = [free_port() for _ in range(self.web_servers)]
        self.killed: set[str] = set()  # instances stopped on purpose by kill()

    # ------------------------------------------------------------------ where things are

    @property
    def var_dir(self) -> Path:
        return self.scratch_dir / "var"

    @property
    def log_dir(self) -> Path:
        return self.scratch_dir / "logs"

    @property
    def web_urls(self) -> list[str]:
        """The base URL of every web server started and not killed, `web.1` first."""
        return [
            f"http://127.0.0.1:{p.port}"
            for p in self.processes.values()
            if p.role == WEB_ROLE and p.name not in self.killed
        ]

    def env(self, **overrides: str) -> dict[str, str]:
        """The production environment every role gets (less role_env): for management
        commands against the same database, broker, chain and mail server."""
        venv_bin = str(Path(sys.executable).parent)
        env = {key: os.environ[key] for key in KEPT_VARIABLES if key in os.environ}
        env.update(
            PATH=os.pathsep.join([venv_bin, os.environ.get("PATH", "/usr/bin:/bin")]),
            # This checkout's code, whatever the virtual environment was installed from.
            PYTHONPATH=str(ROOT),
            PYTHONUNBUFFERED="1",
            DJANGO_SETTINGS_MODULE=SETTINGS,
            SECRET_KEY=self.secret_key,
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=str(self.mail.port) if self.mail.running else "25",
            EMAIL_USE_TLS="0",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            # Plain HTTP here: no TLS proxy in front (the cookies stay Secure).
            SECURE_SSL_REDIRECT="0",
            PAYMENT_XPUB=PAYMENT_XPUB,
            SITE_URL=f"http://127.0.0.1:{self._web_ports[0]}",
            VAR_DIR=str(self.var_dir),
        )
        if self.rpc_url:
            env["RPC_URL_LOCAL"] = self.rpc_url
        if self.token_address:
            env["LOCAL_TOKEN_ADDRESS"] = self.token_address
        env.update(self.env_overrides)
        env.update(overrides)
        return env

    # ------------------------------------------------------------------ start and stop

    def start(self) -> "ProductionStack":
        """Servers, the one-off jobs, then every role of the Procfile; stop() on any failure."""
        try:
            if self.scratch_dir is None:
                self.scratch_dir = Path(tempfile.mkdtemp(prefix="gpu-rental-stack-"))
            self.var_dir.mkdir(parents=True, exist_ok=True)
            self.log_dir.mkdir(parents=True, exist_ok=True)
            self.mail.start()
            self._start_redis()
            self._create_database()
            self._start_chain()
            # The release's migrate job and the chain's token at once: neither needs the other.
            self._one_offs(
                {
                    "migrate": migrate_job(),
                    "local_chain_setup": self._manage_argv("local_chain_setup"),
                }
            )
            self.token_address = self._recorded_token()
            self._one_offs({"load_demo_catalogue": self._manage_argv("load_demo_catalogue")})
            for role in self.roles:
                for _ in range(self.web_servers if role == WEB_ROLE else 1):
                    self.start_role(role)
        except BaseException as failure:
            try:
                self.stop()
            except StackError as problem:
                failure.add_note(f"and stopping the stack: {problem}")
            raise
        return self

    def start_role(self, role: str, **env: str) -> str:
        """One more process of `role` (a second beat, a worker replacing a killed one); its
        instance name, e.g. "beat.2". A web server gets a free port of its own."""
        if role not in self.roles:
            raise StackError(f"no role {role!r} in {self.procfile.name}: {', '.join(self.roles)}")
        number = 1 + sum(1 for p in self.processes.values() if p.role == role)
        name = f"{role}.{number}"
        variables = {**self.role_env.get(role, {}), **env}
        port = None
        if role == WEB_ROLE:
            ports = self._web_ports
            port = ports[number - 1] if number <= len(ports) else free_port()
            variables = {"PORT": str(port), "GUNICORN_BIND": f"127.0.0.1:{port}", **variables}
        variables.setdefault("PGAPPNAME", f"stack:{name}")  # its sessions in pg_stat_activity
        self.processes[name] = _spawn(
            name,
            shell_argv(self.roles[role]),
            self.env(**variables),
            self.log_dir / f"{name}.log",
            role=role,
            port=port,
        )
        return name

    def stop(self) -> None:
        """Every role (SIGTERM to each group, SIGKILL after STOP_SECONDS), the chain and
        Redis, the mail server; the database dropped; the scratch directory removed unless
        it was given. Safe to call twice; raises StackError naming what could not be undone."""
        problems = []
        _stop([*self.jobs, *self.processes.values()], STOP_SECONDS)
        _stop(self.servers, STOP_SECONDS)
        self.mail.stop()
        try:
            self._drop_database()
        except psycopg.Error as exc:
            problems.append(f"dropping {self.database_name}: {exc}")
        left = self.leftovers()
        if left:
            problems.append(f"processes left: {', '.join(left)}")
        if self._own_scratch and self.scratch_dir is not None and not problems:
            shutil.rmtree(self.scratch_dir, ignore_errors=True)
        if problems:
            raise StackError("; ".join(problems))

    def leftovers(self) -> list[str]:
        """Processes (groups) started here that still run."""
        started = [*self.jobs, *self.processes.values(), *self.servers]
        return [process.name for process in started if process.group_alive()]

    def __enter__(self) -> "ProductionStack":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.stop()
        except StackError as problem:
            if exc_type is None:
                raise
            print(f"ProductionStack.stop: {problem}", file=sys.stderr)

    # ------------------------------------------------------------------ watching

    def instances(self, name: str) -> list[Process]:
        """A role's processes (every instance) or one instance by its name ("web.2")."""
        if name in self.processes:
            return [self.processes[name]]
        found = [p for p in self.processes.values() if p.role == name]
        if not found:
            raise StackError(f"no process {name!r}; started: {', '.join(self.processes)}")
        return found

    def alive(self, name: str) -> bool:
        """Whether the role's instances that kill() left alone (at least one) all run; for an
        instance's name, whether it runs."""
        if name in self.processes:
            return self.processes[name].alive()
        kept = [p for p in self.instances(name) if p.name not in self.killed]
        return bool(kept) and all(process.alive() for process in kept)

    def running(self) -> dict[str, bool]:
        """Instance name -> running, for every process of every role started."""
        return {name: process.alive() for name, process in self.processes.items()}

    def exited(self) -> dict[str, int]:
        """Instance name -> exit status, for the processes that are gone."""
        return {
            name: process.popen.returncode
            for name, process in self.processes.items()
            if not process.alive()
        }

    def unexpected_exits(self) -> dict[str, int]:
        """exited() less the instances kill() stopped on purpose."""
        return {name: rc for name, rc in self.exited().items() if name not in self.killed}

    def kill(self, name: str, sig: int = signal.SIGKILL) -> list[str]:
        """Send `sig` to the process group of every running instance of the role (or to the
        one instance); after SIGKILL, wait until they are gone. The instances signalled (from
        then on left out of unexpected_exits(), web_urls and wait_until_ready())."""
        targets = [process for process in self.instances(name) if process.alive()]
        for process in targets:
            self.killed.add(process.name)
            process.signal_group(sig)
        if sig == signal.SIGKILL:
            for process in targets:
                process.popen.wait(timeout=STOP_SECONDS)
        return [process.name for process in targets]

    def log(self, name: str) -> str:
        """A process's whole log (an instance, or a one-off job: "migrate")."""
        path = self.log_dir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def tails(self, lines: int = 25, names: list[str] | None = None) -> str:
        """The last lines of each role's log (or of `names`'), for a failure's message."""
        chosen = names or list(self.processes)
        return "\n".join(
            f"----- {name} ({self._state(name)}) {self.log_dir / f'{name}.log'}\n"
            f"{_tail(self.log_dir / f'{name}.log', lines)}"
            for name in chosen
        )

    def _state(self, name: str) -> str:
        process = self.processes.get(name)
        if process is None:
            return "one-off"
        return "running" if process.alive() else f"exited {process.popen.returncode}"

    def readyz(self, url: str) -> tuple[int, str]:
        """/readyz's status and body on one web server (0 when it does not answer)."""
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=10) as response:  # noqa: S310
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as answer:
            return answer.code, answer.read().decode(errors="replace")
        except OSError as exc:
            return 0, f"{type(exc).__name__}: {exc}"

    def wait_until_ready(self, timeout: float = 180) -> None:
        """Until /readyz answers 200 on every web server (database, cache, broker, static
        files, the local network scanned: beat and the payments' worker at work); StackError
        at once when a role exits, or at the deadline, with /readyz's answers and the logs."""
        deadline = time.monotonic() + timeout
        while True:
            if exited := self.unexpected_exits():
                raise StackError(
                    f"roles exited while starting: {exited}\n"
                    + self.tails(60, [n for n in self.processes if n in exited])
                )
            answers = {url: self.readyz(url) for url in self.web_urls}
            if all(status == 200 for status, _ in answers.values()):
                return
            if time.monotonic() > deadline:
                raise StackError(
                    f"/readyz not 200 on every web server after {timeout:.0f} s: "
                    f"{ {url: f'{s} {body[:300]}' for url, (s, body) in answers.items()} }\n"
                    + self.tails()
                )
            time.sleep(1)

    # ------------------------------------------------------------------ management commands

    def manage(self, *args: str, timeout: float = 120, **env: str) -> str:
        """`python manage.py <args>` against the stack (production settings); its output.
        StackError with the output when it fails."""
        result = subprocess.run(  # noqa: S603 - our own manage.py
            self._manage_argv(*args),
            cwd=ROOT,
            env=self.env(**env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode:
            raise StackError(
                f"manage.py {' '.join(args)} exited {result.returncode}:\n"
                f"{result.stdout[-3000:]}{result.stderr[-3000:]}"
            )
        return result.stdout

    def connect(self) -> psycopg.Connection:
        """A connection of the caller's own to the stack's database (autocommit)."""
        return psycopg.connect(self.database_url, autocommit=True, application_name="stack:test")

    def _manage_argv(self, *args: str) -> list[str]:
        return [sys.executable, "manage.py", *args]

    def _one_offs(self, jobs: dict[str, list[str]]) -> None:
        """Run jobs at once (as one-off processes, their output in logs/<name>.log) and wait for
        every one; StackError with the log of any that failed."""
        started = [
            _spawn(name, argv, self.env(), self.log_dir / f"{name}.log")
            for name, argv in jobs.items()
        ]
        self.jobs += started
        failed = []
        for job in started:
            try:
                job.popen.wait(timeout=ONE_OFF_SECONDS)
            except subprocess.TimeoutExpired:
                _stop([job], 5)
            if job.popen.returncode != 0:
                failed.append(job)
        if failed:
            raise StackError(
                "one-off jobs failed: "
                + ", ".join(f"{j.name} ({j.popen.returncode})" for j in failed)
                + "\n"
                + "\n".join(f"----- {j.name}\n{j.tail(60)}" for j in failed)
            )

    # ------------------------------------------------------------------ servers

    def _server(self, name: str, argv: list[str], answers, port: int) -> Process:
        process = _spawn(name, argv, self.env(), self.log_dir / f"{name}.log", port=port)
        self.servers.append(process)
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline and process.alive():
            if answers(port):
                return process
            time.sleep(0.1)
        _stop([process], 5)
        self.servers.remove(process)
        raise StackError(f"{name} did not answer on port {port}:\n{process.tail()}")

    def _start_redis(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise StackError("redis-server is not installed (scripts/ensure-test-services)")
        for attempt in range(3):
            port = free_port()
            argv = [
                binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.scratch_dir), "--logfile", "",
            ]  # fmt: skip
            try:
                self._server("redis", argv, _redis_pings, port)
            except StackError:
                if attempt == 2:
                    raise
                continue  # the port was taken in between
            self.redis_url = f"redis://127.0.0.1:{port}/0"
            return

    def _start_chain(self) -> None:
        binary = anvil_binary()
        if binary is None:
            raise StackError("anvil is not installed (node_modules/.bin/anvil): run make install")
        for attempt in range(3):
            port = free_port()
            argv = [
                binary, "--host", "127.0.0.1", "--port", str(port), "--chain-id", str(CHAIN_ID),
                "--block-time", "1", "--silent",
            ]  # fmt: skip
            try:
                self._server("anvil", argv, _chain_answers, port)
            except StackError:
                if attempt == 2:
                    raise
                continue
            self.rpc_url = f"http://127.0.0.1:{port}"
            return

    def _recorded_token(self) -> str:
        """The token local_chain_setup deployed, from the record it wrote in VAR_DIR."""
        output = self.log("local_chain_setup")
        found = re.search(r"Token address: (0x[0-9a-fA-F]{40})", output)
        if not found:
            raise StackError(f"local_chain_setup named no token address:\n{output[-2000:]}")
        return found.group(1)

    # ------------------------------------------------------------------ the database

    def _admin(self) -> psycopg.Connection:
        return psycopg.connect(f"{POSTGRES.rstrip('/')}/postgres", autocommit=True)

    def _create_database(self) -> None:
        with self._admin() as admin:
            if urlsplit(POSTGRES).hostname in ("127.0.0.1", "localhost", "::1"):
                self._drop_stale(admin)  # a pid means something only on this machine
            admin.execute(f'CREATE DATABASE "{self.database_name}"')
        self._database_created = True

    def _drop_stale(self, admin: psycopg.Connection) -> None:
        """Databases of stacks whose process is gone (killed before its stop())."""
        names = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{DATABASE_PREFIX}%"]
        ).fetchall()
        for (name,) in names:
            found = DATABASE_NAME.match(name)
            if found and not _alive(int(found.group(1))):
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _drop_database(self) -> None:
        if self._database_created:
            with self._admin() as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{self.database_name}" WITH (FORCE)')
            self._database_created = False

    def database_exists(self) -> bool:
        with self._admin() as admin:
            row = admin.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [self.database_name]
            ).fetchone()
        return row is not None


def _redis_pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _chain_answers(port: int) -> bool:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}",
        data=b'{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=1) as response:  # noqa: S310
            return b'"result"' in response.read()
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web-servers", type=int, default=1)
    parser.add_argument("--scratch-dir", type=Path, help="kept afterwards (default: removed)")
    options = parser.parse_args()
    with ProductionStack(web_servers=options.web_servers, scratch_dir=options.scratch_dir) as stack:
        print(f"starting {', '.join(stack.roles)} ...", flush=True)
        stack.start()
        print(f"started; logs in {stack.log_dir}", flush=True)
        stack.wait_until_ready()
        print("ready:", " ".join(stack.web_urls), "(Ctrl-C stops it)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while not stack.exited():
                time.sleep(1)
        if stack.exited():
            print(f"exited: {stack.exited()}\n{stack.tails()}")


if __name__ == "__main__":
    main()
