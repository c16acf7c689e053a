"""Pytest plugin: local hosts (rental/hosts/localhost.py) for the tests of the host work.

A local host is the distribution's OpenSSH server on a 127.0.0.1 port of its own that logs in
REAL Unix accounts of this machine, with fake device files and an nvidia-smi stand-in: the
worker does on it exactly what it does on a GPU host. Needs root (accounts are made with
useradd) and OpenSSH and sudo (scripts/ensure-test-services installs them).

- `host_account_prefix` (session): "grt" + 4 random hex digits + "-", this pytest process's own
  (parallel runs never collide); every account and sudoers file made for the session starts
  with it and is removed at its end, with the hosts' folder.
- `host_admin` (session): the administrative account (AdminLogin: user, private_key_path) that
  logs in with its key and has passwordless sudo.
- `local_host`: a factory, local_host(cards=2, model_name="NVIDIA H100 80GB HBM3",
  memory_mib=81559, platform="cuda") -> LocalHost, started and answering; stopped when the test
  ends. It points the settings at the session's admin key and prefix (HOSTS_ADMIN_KEY_FILE,
  HOSTS_ACCOUNT_PREFIX).
- `ssh_as`: ssh_as(host, user, key, command) -> CompletedProcess, the real `ssh` client with
  the host key pinned (StrictHostKeyChecking=yes, BatchMode; known_hosts_line= pins another).

Registered in tests/conftest.py with `pytest_plugins = [..., "tests.host_fixtures"]`.
"""

import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rental.hosts import engine
from rental.hosts.localhost import (
    SSHD,
    TEST_HOSTS_BASE,
    AdminLogin,
    LocalHost,
    create_local_host,
    ensure_admin,
    fake_cards,
    remove_accounts,
)
from rental.hosts.services import host_check, host_confirm_key, host_fetch_key
from rental.models import Host, HostState

SUDO = "/usr/bin/sudo"
OWNER_FILE = "owner.pid"  # in TEST_HOSTS_BASE/<prefix>/: the pytest process that made it


def _require_local_hosts() -> None:
    if os.geteuid() != 0:
        pytest.fail("local hosts need root: they create Unix accounts and run sshd")
    for path, package in ((SSHD, "openssh-server"), (SUDO, "sudo")):
        if not os.access(path, os.X_OK):
            pytest.fail(
                f"{path} is missing: run scripts/ensure-test-services (it installs the "
                f"distribution package {package})."
            )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_abandoned() -> None:
    """Accounts and hosts of earlier pytest processes that were killed before their cleanup."""
    if not TEST_HOSTS_BASE.is_dir():
        return
    for folder in TEST_HOSTS_BASE.iterdir():
        prefix = folder.name
        if not (prefix.startswith("grt") and prefix.endswith("-") and len(prefix) == 8):
            continue
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if not _alive(owner):
            remove_accounts(prefix)
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def host_account_prefix() -> Iterator[str]:
    """This pytest process's account prefix, e.g. "grt3f0a-"; all removed at the end."""
    _require_local_hosts()
    _remove_abandoned()
    prefix = f"grt{secrets.token_hex(2)}-"
    folder = TEST_HOSTS_BASE / prefix
    folder.mkdir(mode=0o755, parents=True)
    for path in (TEST_HOSTS_BASE, folder):
        path.chmod(0o755)  # the tenant accounts go through them to their hosts' roots
    (folder / OWNER_FILE).write_text(str(os.getpid()))
    try:
        yield prefix
    finally:
        remove_accounts(prefix)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def host_admin(host_account_prefix) -> AdminLogin:
    """The administrative account f"{prefix}adm": its key and passwordless sudo."""
    key_dir = TEST_HOSTS_BASE / host_account_prefix / "admin-key"
    key_dir.mkdir(mode=0o700, exist_ok=True)
    return ensure_admin(host_account_prefix, key_dir)


@pytest.fixture
def local_host(
    host_account_prefix, host_admin, settings, request
) -> Iterator[Callable[..., LocalHost]]:
    """local_host(cards=2, model_name=..., memory_mib=..., platform="cuda") -> a started
    LocalHost; the settings point at the session's admin key and account prefix."""
    settings.HOSTS_ADMIN_KEY_FILE = str(host_admin.private_key_path)
    settings.HOSTS_ACCOUNT_PREFIX = host_account_prefix
    hosts: list[LocalHost] = []
    test_name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:40]

    def make(
        cards: int = 2,
        model_name: str = "NVIDIA H100 80GB HBM3",
        memory_mib: int = 81559,
        platform: str = "cuda",
    ) -> LocalHost:
        name = f"{test_name}-{secrets.token_hex(3)}"
        host = create_local_host(
            TEST_HOSTS_BASE / host_account_prefix / name,
            prefix=host_account_prefix,
            cards=fake_cards(model_name, cards, memory_mib, seed=name),
            platform=platform,
        )
        hosts.append(host)
        return host

    try:
        yield make
    finally:
        for host in hosts:
            host.stop()
            shutil.rmtree(host.root, ignore_errors=True)


@pytest.fixture
def ssh_as(tmp_path) -> Callable[..., subprocess.CompletedProcess]:
    """ssh_as(host, user, key, command, timeout=20, known_hosts_line=None): the real ssh
    client, the host's key pinned (or known_hosts_line, to pin another)."""
    counter = iter(range(10**6))

    def run(
        host: LocalHost,
        user: str,
        key: Path | None,
        command: str,
        *,
        timeout: float = 20,
        known_hosts_line: str | None = None,
    ) -> subprocess.CompletedProcess:
        known_hosts = tmp_path / f"known_hosts-{next(counter)}"
        known_hosts.write_text((known_hosts_line or host.known_hosts_line) + "\n")
        argv = ["ssh", "-p", str(host.port)]
        argv += ["-i", str(key)] if key else []
        argv += [
            "-o", "BatchMode=yes",
            "-o", "IdentitiesOnly=yes",
            "-o", "StrictHostKeyChecking=yes",
            "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "ConnectTimeout=5",
            "-F", "/dev/null",
            f"{user}@{host.host}",
            command,
        ]  # fmt: skip
        return subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )

    return run


# ------------------------------------------------------------------------ registered hosts


@pytest.fixture
def register_host(local_host, host_admin, catalogue, operator):
    """register_host(cards=2, model="h100") -> (Host row, LocalHost): registered unchecked,
    its key fetched and confirmed by the operator, then a passing host check made it
    available."""

    def register(cards: int = 2, model: str = "h100", name: str | None = None):
        gpu_model = catalogue[model]
        # Only the test's own hosts offer cards.
        Host.objects.filter(gpu_model=gpu_model, name__startswith="demo-").delete()
        machine = local_host(cards=cards)
        host = Host.objects.create(
            name=name or f"lh-{machine.port}",
            gpu_model=gpu_model,
            cards=cards,
            ssh_host=machine.host,
            ssh_port=machine.port,
            ssh_user="unused",
            management="worker",
            admin_user=host_admin.user,
            device_dir=str(machine.device_dir),
            gpu_tool=machine.gpu_tool,
            state=HostState.UNCHECKED,
        )
        host_fetch_key(host_id=host.pk)
        host.refresh_from_db()
        host_confirm_key(
            host_id=host.pk,
            actor=operator,
            fingerprint=engine.fingerprint(machine.host_key_line),
        )
        outcome = host_check(host_id=host.pk, actor=operator, make_available=True)
        assert outcome.passed, outcome.detail
        host.refresh_from_db()
        assert host.state == HostState.AVAILABLE
        return host, machine

    return register


@pytest.fixture
def customer_key(tmp_path) -> Path:
    """A real key pair of the customer's: the private key file (the public one beside it)."""
    path = tmp_path / "customer_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "customer", "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path


def run_page_command(
    command: str, key: Path, machine: LocalHost, remote: str
) -> subprocess.CompletedProcess:
    """The `ssh -p PORT ACCOUNT@HOST` shown on an order page, run with the customer's key."""
    import shlex

    known_hosts = key.with_name(f"known_hosts-{machine.port}")
    known_hosts.write_text(machine.known_hosts_line + "\n")
    argv = shlex.split(command)
    assert argv[0] == "ssh", command
    options = [
        "-i", str(key), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
        "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}",
        "-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=5", "-F", "/dev/null",
    ]  # fmt: skip
    return subprocess.run(
        ["ssh", *options, *argv[1:], remote], capture_output=True, text=True, timeout=30
    )
