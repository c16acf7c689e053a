"""Local hosts: stand-ins for GPU hosts on this machine, for the tests and the `make run` demo.

A local host is the distribution's OpenSSH server on a 127.0.0.1 port of its own, logging in
REAL Unix accounts of this machine, with a fake device folder and an `nvidia-smi` stand-in
(rental/hosts/standin/nvidia-smi) under its ROOT:

    ROOT/cards.json         the host's cards (write_cards, fake_cards)
    ROOT/dev/nvidia<i>      regular files standing for /dev/nvidia<i>: root:root 0600 when idle;
                            a card is visible to whoever may read and write its file
    ROOT/bin/nvidia-smi     the stand-in (on the sessions' PATH through sshd's SetEnv)
    ROOT/resets.log         one line per card reset (`nvidia-smi -r`)
    ROOT/etc/               sshd_config and host key (root only)
    ROOT/sshd.log           sshd's own log (-e)

The worker logs in as an administrative account (ensure_admin: a key, passwordless sudo), as on
a real host. Everything here needs root: accounts are created with useradd, sshd runs as root.
Accounts are named with a prefix, and remove_accounts(prefix) removes them all again.

Standard library and subprocess only (no Django at module level): the tests and the demo
scripts both import it.
"""

from __future__ import annotations

import contextlib
import grp
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"  # sshd refuses to start unless run by its absolute path
PRIVILEGE_SEPARATION_DIR = Path("/run/sshd")
STANDIN = Path(__file__).resolve().parent / "standin" / "nvidia-smi"
# Where the tests put their hosts' roots: every folder on the way must be traversable by the
# tenant accounts (pytest's tmp folders are 0700).
TEST_HOSTS_BASE = Path("/var/tmp/gpu-rental-hosts")  # noqa: S108
SUDOERS_DIR = Path("/etc/sudoers.d")
SHARED_TMP_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))  # noqa: S108
START_TIMEOUT_SECONDS = 10
MIN_PREFIX_LENGTH = 3
FIRST_REGULAR_UID = 1000  # remove_accounts never touches an account below this
LOCK_RETRIES = 20  # useradd & co. exit 10 while another process holds /etc/passwd's lock


@dataclass(frozen=True)
class AdminLogin:
    """The worker's administrative login on local hosts: user and private key file."""

    user: str
    private_key_path: Path


# ----------------------------------------------------------------------------- small helpers


def _run(argv: list[str], *, check: bool = True, retry_locked: bool = False, **kwargs):
    """subprocess.run with captured text output; useradd/usermod/userdel/groupdel are retried
    while /etc/passwd or /etc/group is locked by a parallel run (their exit status 10)."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    for _attempt in range(LOCK_RETRIES if retry_locked else 1):
        done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # noqa: S603
        if not (retry_locked and done.returncode == 10):
            break
        time.sleep(0.1)
    if check and done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} failed with exit status {done.returncode}: "
            f"{(done.stderr or done.stdout).strip()[-1000:]}"
        )
    return done


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise PermissionError(f"{what} needs root (it creates Unix accounts and runs sshd)")


def _check_prefix(prefix: str) -> None:
    if len(prefix) < MIN_PREFIX_LENGTH or not re.fullmatch(r"[a-z_][a-z0-9_-]*", prefix):
        raise ValueError(
            f"account prefix {prefix!r}: at least {MIN_PREFIX_LENGTH} characters of "
            "[a-z0-9_-], starting with a letter or _"
        )


def sudoers_file(user: str) -> Path:
    """/etc/sudoers.d/<user>, with anything sudo would skip (a dot, for one) replaced by _."""
    return SUDOERS_DIR / re.sub(r"[^A-Za-z0-9_-]", "_", user)


def _account(user: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(user)
    except KeyError:
        return None


def create_account(user: str, *, shell: str = "/bin/bash") -> pwd.struct_passwd:
    """A Unix account with a home folder (useradd -m), able to log in with a key: its password
    field is "*" (no password), not useradd's "!" (locked), because sshd without PAM refuses
    every login, keys included, to a locked account. Idempotent."""
    _require_root("create_account")
    if _account(user) is None:
        done = _run(["useradd", "-m", "-s", shell, "-p", "*", user], check=False, retry_locked=True)
        if done.returncode not in (0, 9):  # 9: created meanwhile by someone else
            raise RuntimeError(f"useradd {user} failed ({done.returncode}): {done.stderr.strip()}")
    _run(["usermod", "-p", "*", user], retry_locked=True)
    return pwd.getpwnam(user)


def install_authorized_key(user: str, public_key_line: str) -> Path:
    """~user/.ssh/authorized_keys holding only `public_key_line`, with the owner and modes that
    sshd's StrictModes accepts."""
    account = pwd.getpwnam(user)
    home = Path(account.pw_dir)
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    keys = ssh_dir / "authorized_keys"
    keys.write_text(public_key_line.strip() + "\n")
    for path, mode in ((ssh_dir, 0o700), (keys, 0o600)):
        os.chown(path, account.pw_uid, account.pw_gid)
        os.chmod(path, mode)
    os.chmod(home, stat.S_IMODE(home.stat().st_mode) & ~0o022)  # StrictModes: not g/o-writable
    return keys


def generate_key(path: Path, comment: str = "") -> str:
    """An ed25519 keypair at path (0600) and path.pub; returns the public key line. Kept when
    both files are there already."""
    pub = path.with_name(path.name + ".pub")
    if not (path.is_file() and pub.is_file()):
        for stale in (path, pub):
            stale.unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    os.chmod(path, 0o600)
    return pub.read_text().strip()


def _public_key(public_key_line: str) -> str:
    """The "ssh-ed25519 AAAA..." of a public key line, without its comment."""
    return " ".join(public_key_line.split()[:2])


# ----------------------------------------------------------------------------- the admin


def ensure_admin(prefix: str, key_dir: Path) -> AdminLogin:
    """The administrative account f"{prefix}adm": logs in with key_dir/admin_ed25519 (made when
    missing; the account's only authorized key) and may run anything with `sudo -n`
    (/etc/sudoers.d, checked with visudo). Idempotent."""
    _require_root("ensure_admin")
    _check_prefix(prefix)
    user = f"{prefix}adm"
    key_dir = Path(key_dir)
    key = key_dir / "admin_ed25519"
    public = generate_key(key, comment=f"{user} (gpu-rental local hosts)")
    create_account(user)
    install_authorized_key(user, public)
    _write_sudoers(user)
    return AdminLogin(user=user, private_key_path=key)


def _write_sudoers(user: str) -> None:
    target = sudoers_file(user)
    # A name with a dot is skipped by sudo's @includedir: a half-written file never counts.
    descriptor, temporary = tempfile.mkstemp(prefix=".", dir=SUDOERS_DIR)
    try:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(
                f"# gpu-rental local hosts: the worker's administrative account\n"
                f"{user} ALL=(ALL) NOPASSWD: ALL\n"
            )
        os.chmod(temporary, 0o440)
        _run(["visudo", "-cf", temporary])
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)


# ----------------------------------------------------------------------------- removal


def _kill_all(user: str) -> None:
    for _attempt in range(50):
        _run(["pkill", "-KILL", "-u", user], check=False)
        if _run(["pgrep", "-u", user], check=False).returncode != 0:
            return
        time.sleep(0.05)


def _remove_shared_files(uid: int) -> None:
    """What the account left at the top of /tmp, /var/tmp and /dev/shm (only it can have made
    something there: those folders are sticky, and everything else is root's or its own)."""
    for folder in SHARED_TMP_DIRS:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                continue


def remove_accounts(prefix: str) -> list[str]:
    """Remove every account whose name starts with `prefix` (uid >= 1000 only): its processes
    (SIGKILL), the account and its home (userdel -r -f), its files at the top of /tmp, /var/tmp
    and /dev/shm, its crontab, its sudoers file; then groups and sudoers files left with the
    prefix. Safe when nothing is there. Returns the names of the accounts removed."""
    _check_prefix(prefix)
    _require_root("remove_accounts")
    removed = []
    for account in pwd.getpwall():
        name = account.pw_name
        if not name.startswith(prefix) or account.pw_uid < FIRST_REGULAR_UID:
            continue
        _kill_all(name)
        _remove_shared_files(account.pw_uid)
        Path("/var/spool/cron/crontabs", name).unlink(missing_ok=True)
        # 6: gone already; 12: the home folder could not be removed (removed below).
        done = _run(["userdel", "-r", "-f", name], check=False, retry_locked=True)
        if done.returncode not in (0, 6, 12):
            raise RuntimeError(f"userdel {name} failed ({done.returncode}): {done.stderr.strip()}")
        if Path(account.pw_dir).is_dir() and account.pw_dir.startswith("/home/"):
            shutil.rmtree(account.pw_dir, ignore_errors=True)
        sudoers_file(name).unlink(missing_ok=True)
        removed.append(name)
    for group in grp.getgrall():
        if group.gr_name.startswith(prefix) and group.gr_gid >= FIRST_REGULAR_UID:
            _run(["groupdel", group.gr_name], check=False, retry_locked=True)
    safe_prefix = sudoers_file(prefix).name
    if SUDOERS_DIR.is_dir():
        for path in SUDOERS_DIR.iterdir():
            if path.name.startswith(safe_prefix):
                path.unlink(missing_ok=True)
    return removed


# ----------------------------------------------------------------------------- cards


def fake_cards(model_name: str, count: int, memory_mib: int, seed: str) -> list[dict]:
    """`count` cards of one model with UUIDs that depend only on (seed, index)."""
    cards = []
    for index in range(count):
        digest = hashlib.sha256(f"{seed}/{index}".encode()).hexdigest()
        uuid = f"GPU-{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"
        cards.append({"index": index, "uuid": uuid, "name": model_name, "memory_mib": memory_mib})
    return cards


def write_cards(root: Path, cards: list[dict]) -> None:
    """ROOT/cards.json (readable by all: the stand-in runs as the tenants) and one idle device
    file ROOT/dev/nvidia<index> (root:root 0600) per card that has none; device files of cards
    no longer listed are removed."""
    root = Path(root)
    device_dir = root / "dev"
    device_dir.mkdir(mode=0o755, exist_ok=True)
    os.chmod(device_dir, 0o755)  # noqa: S103 - the tenants reach their cards through it
    temporary = root / ".cards.json.tmp"
    temporary.write_text(json.dumps(cards, indent=2) + "\n")
    os.chmod(temporary, 0o644)
    os.replace(temporary, root / "cards.json")
    wanted = {f"nvidia{int(card['index'])}" for card in cards}
    for name in wanted:
        path = device_dir / name
        if not path.exists():
            path.touch(mode=0o600)
            os.chown(path, 0, 0)
            os.chmod(path, 0o600)
    for path in device_dir.glob("nvidia*"):
        if re.fullmatch(r"nvidia\d+", path.name) and path.name not in wanted:
            path.unlink()


# ----------------------------------------------------------------------------- hosts


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _banner(host: str, port: int, timeout: float = 1.0) -> str | None:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            data = b""
            while b"\n" not in data and len(data) < 4096:
                chunk = sock.recv(256)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    line = data.split(b"\n", 1)[0].strip().decode("ascii", "replace")
    return line if line.startswith("SSH-") else None


def _descendants(pid: int) -> list[int]:
    """Processes below `pid` (its per-connection sshd children and their sessions)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(text.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _traversable_parents(path: Path) -> None:
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            raise ValueError(
                f"{folder} is not traversable by other users (mode {stat.S_IMODE(mode):o}): "
                f"the tenant accounts could not reach {path}; put local hosts under a folder "
                f"such as {TEST_HOSTS_BASE}"
            )


def _make_dirs(path: Path, mode: int = 0o755) -> None:
    """mkdir -p with `mode` on every folder it creates, whatever the umask."""
    missing = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        folder.mkdir(mode=mode, exist_ok=True)
        os.chmod(folder, mode)


@dataclass
class LocalHost:
    """A running local host: sshd on host:port, its ROOT, its pinned host key."""

    root: Path
    host: str
    port: int
    process: subprocess.Popen | None
    host_key_line: str  # "ssh-ed25519 AAAA..."
    device_dir: Path
    gpu_tool: str  # absolute path: sudo's secure_path does not hold ROOT/bin
    platform: str = "cuda"
    config_path: Path = field(default=Path(), repr=False)

    @property
    def known_hosts_line(self) -> str:
        """The line for a known_hosts file pinning this host's key."""
        return f"[{self.host}]:{self.port} {self.host_key_line}"

    @property
    def cards(self) -> list[dict]:
        return json.loads((self.root / "cards.json").read_text())

    @property
    def host_key_path(self) -> Path:
        return self.root / "etc" / "ssh_host_ed25519_key"

    @property
    def log_path(self) -> Path:
        return self.root / "sshd.log"

    @property
    def resets_log(self) -> Path:
        return self.root / "resets.log"

    def device_path(self, index: int) -> Path:
        return self.device_dir / f"nvidia{index}"

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start sshd again (same port, same host key); waits for its banner."""
        if self.running():
            return
        self.process = _start_sshd(self.config_path, self.port, self.log_path)

    def stop(self) -> None:
        """Stop sshd and end every connection and session it has: the host is unreachable."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        below = _descendants(process.pid)
        process.terminate()
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def replace_host_key(self) -> str:
        """A new host key; sshd restarted with it (same port). Returns the new key line."""
        was_running = self.running()
        self.stop()
        for path in (
            self.host_key_path,
            self.host_key_path.with_name(self.host_key_path.name + ".pub"),
        ):
            path.unlink(missing_ok=True)
        self.host_key_line = _public_key(generate_key(self.host_key_path, "local host"))
        if was_running:
            self.start()
        return self.host_key_line


def _write_sshd_config(root: Path, port: int, prefix: str) -> Path:
    config = root / "etc" / "sshd_config"
    config.write_text(
        "# Written by rental/hosts/localhost.py: a local host's sshd.\n"
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {root / 'etc' / 'ssh_host_ed25519_key'}\n"
        "PidFile none\n"
        "UsePAM no\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "PermitRootLogin no\n"
        "PubkeyAuthentication yes\n"
        "AuthorizedKeysFile .ssh/authorized_keys\n"
        f"AllowUsers {prefix}*\n"
        "StrictModes yes\n"
        f"SetEnv PATH={root / 'bin'}:/usr/local/bin:/usr/bin:/bin\n"
        "Subsystem sftp internal-sftp\n"
        "UseDNS no\n"
        "PrintMotd no\n"
        "PrintLastLog no\n"
        "X11Forwarding no\n"
        "MaxStartups 100\n"
        "MaxSessions 50\n"
        "LoginGraceTime 30\n"
    )
    os.chmod(config, 0o600)
    return config


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _start_sshd(config: Path, port: int, log_path: Path) -> subprocess.Popen:
    if not os.access(SSHD, os.X_OK):
        raise RuntimeError(
            f"OpenSSH server not installed ({SSHD} is missing): run scripts/ensure-test-services"
        )
    PRIVILEGE_SEPARATION_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    with open(log_path, "a") as log:
        process = subprocess.Popen(  # noqa: S603
            [SSHD, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if _banner("127.0.0.1", port) is not None:
            return process
        time.sleep(0.05)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)
    tail = log_path.read_text(errors="replace")[-1500:]
    raise RuntimeError(f"sshd did not answer on 127.0.0.1:{port}; its log:\n{tail}")


def create_local_host(
    root: Path,
    *,
    prefix: str,
    cards: list[dict],
    port: int | None = None,
    platform: str = "cuda",
    search: int = 0,
) -> LocalHost:
    """A local host at ROOT (made 0755; every folder above must be traversable by others) with
    `cards`, idle device files, the nvidia-smi stand-in and its own sshd on 127.0.0.1:`port`
    (a free one when None; when `port` is taken, the next of `search` ports after it that is
    free) that lets in only accounts named `prefix`*. Started and answering when this
    returns: LocalHost.port is the port it listens on. `platform` is recorded in ROOT/platform
    (the tool is nvidia-smi's stand-in whatever it is)."""
    _require_root("create_local_host")
    _check_prefix(prefix)
    root = Path(root).absolute()
    _make_dirs(root)
    os.chmod(root, 0o755)  # noqa: S103 - the tenants run ROOT/bin/nvidia-smi
    _traversable_parents(root)
    (root / "bin").mkdir(mode=0o755, exist_ok=True)
    etc = root / "etc"
    etc.mkdir(mode=0o700, exist_ok=True)
    os.chmod(etc, 0o700)
    write_cards(root, cards)
    (root / "platform").write_text(platform + "\n")
    tool = root / "bin" / "nvidia-smi"
    shutil.copyfile(STANDIN, tool)
    os.chmod(tool, 0o755)  # noqa: S103 - run by every account
    key = etc / "ssh_host_ed25519_key"
    host_key_line = _public_key(generate_key(key, "local host"))
    log_path = root / "sshd.log"
    # A free port can be taken before sshd binds it (an outgoing connection's ephemeral port).
    attempts = 1 + search if port is not None else 3
    for attempt in range(attempts):
        chosen = port + attempt if port is not None else free_port()
        if port is not None and attempt < attempts - 1 and not _bindable(chosen):
            continue
        config = _write_sshd_config(root, chosen, prefix)
        try:
            process = _start_sshd(config, chosen, log_path)
            break
        except RuntimeError:
            if attempt == attempts - 1:
                raise
    return LocalHost(
        root=root,
        host="127.0.0.1",
        port=chosen,
        process=process,
        host_key_line=host_key_line,
        device_dir=root / "dev",
        gpu_tool=str(tool),
        platform=platform,
        config_path=config,
    )
