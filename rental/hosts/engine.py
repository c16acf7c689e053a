"""Run one of the host playbooks (rental/hosts/ansible/) against one host, with ansible-runner.

The worker logs in as the host's administrative user with the key from HOSTS_ADMIN_KEY_FILE,
against the pinned host key only (a known_hosts file written for this run,
StrictHostKeyChecking=yes): a host that answers with another key fails the run with
`host_key_changed`. Every run has a deadline (HOSTS_PLAYBOOK_TIMEOUT_SECONDS) and every SSH
connection a connect timeout; each task's start and end reach `on_step` as they happen, so the
caller can journal them (and renew its lease on the host) while the run goes on.

No database here: the services turn a PlaybookResult into state changes.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

PLAYBOOKS = Path(__file__).resolve().parent / "ansible"
HOST_KEY_CHANGED_SIGNS = (
    "REMOTE HOST IDENTIFICATION HAS CHANGED",
    "Host key verification failed",
)
OUTPUT_LIMIT = 1000


@dataclass(frozen=True)
class Target:
    """Where and as whom a playbook runs (the host's fields, never the database row)."""

    name: str
    address: str
    port: int
    admin_user: str
    host_key: str  # "ssh-ed25519 AAAA…", the pinned key


@dataclass(frozen=True)
class StepEvent:
    name: str  # the task's name
    finished: bool  # False when it starts
    outcome: str = ""  # ok, changed, failed, skipped, unreachable
    output: str = ""


@dataclass
class PlaybookResult:
    ok: bool
    unreachable: bool = False
    host_key_changed: bool = False
    timed_out: bool = False
    failed_step: str = ""
    message: str = ""
    # The result of each task that finished, by task name (the last item of a loop wins;
    # loops are also in `results` of that entry).
    results: dict[str, dict] = field(default_factory=dict)

    @property
    def summary(self) -> str:
        if self.ok:
            return "ok"
        if self.host_key_changed:
            return f"host key changed: {self.message}"[:OUTPUT_LIMIT]
        if self.unreachable:
            return f"host unreachable: {self.message}"[:OUTPUT_LIMIT]
        if self.timed_out:
            return f"timed out: {self.message}"[:OUTPUT_LIMIT]
        return f"{self.failed_step}: {self.message}"[:OUTPUT_LIMIT]


def known_hosts_line(address: str, port: int, host_key: str) -> str:
    where = address if port == 22 else f"[{address}]:{port}"
    return f"{where} {host_key.strip()}\n"


def _ssh_args(known_hosts: Path) -> str:
    return " ".join(
        [
            f"-o UserKnownHostsFile={known_hosts}",
            "-o StrictHostKeyChecking=yes",
            "-o GlobalKnownHostsFile=/dev/null",
            "-o BatchMode=yes",
            "-o IdentitiesOnly=yes",
            f"-o ConnectTimeout={settings.HOSTS_CONNECT_TIMEOUT_SECONDS}",
            "-o ServerAliveInterval=10",
            "-o ServerAliveCountMax=3",
        ]
    )


def _short(value) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text.strip()[:OUTPUT_LIMIT]


def _result_text(res: dict) -> str:
    for key in ("msg", "stderr", "stdout"):
        value = res.get(key)
        if value:
            return _short(value)
    if res.get("results"):
        for item in res["results"]:
            if item.get("failed"):
                return _result_text(item)
    return ""


def run_playbook(
    target: Target,
    playbook: str,
    extravars: dict,
    *,
    on_step: Callable[[StepEvent], None] | None = None,
    workdir: Path | None = None,
) -> PlaybookResult:
    """Run `playbook` (a file name in rental/hosts/ansible/) against `target`. Never raises for
    what happened on the host: the result says it."""
    import ansible_runner  # imported by the hosts' worker only

    key_file = settings.HOSTS_ADMIN_KEY_FILE
    if not key_file or not Path(key_file).is_file():
        return PlaybookResult(
            ok=False,
            failed_step="administrative key",
            message=f"HOSTS_ADMIN_KEY_FILE is not a readable file: {key_file!r}",
        )
    if not target.host_key:
        return PlaybookResult(
            ok=False, failed_step="host key", message="No host key is pinned for this host."
        )
    own_dir = workdir is None
    directory = Path(workdir or tempfile.mkdtemp(prefix="gpu-rental-run-"))
    try:
        known_hosts = directory / "known_hosts"
        known_hosts.write_text(known_hosts_line(target.address, target.port, target.host_key))
        variables = {
            "ansible_host": target.address,
            "ansible_port": target.port,
            "ansible_user": target.admin_user,
            "ansible_ssh_private_key_file": key_file,
            "ansible_ssh_common_args": _ssh_args(known_hosts),
            "ansible_python_interpreter": "/usr/bin/python3",
            "known_hosts_file": str(known_hosts),
            **extravars,
        }
        results: dict[str, dict] = {}
        failure: dict = {}

        def event_handler(event: dict) -> bool:
            kind = event.get("event", "")
            data = event.get("event_data") or {}
            task = data.get("task") or ""
            if kind == "playbook_on_task_start" and on_step:
                on_step(StepEvent(name=task, finished=False))
            elif kind in (
                "runner_on_ok",
                "runner_on_failed",
                "runner_on_unreachable",
                "runner_on_skipped",
            ):
                res = data.get("res") or {}
                outcome = {
                    "runner_on_ok": "changed" if res.get("changed") else "ok",
                    "runner_on_failed": "ignored" if data.get("ignore_errors") else "failed",
                    "runner_on_unreachable": "unreachable",
                    "runner_on_skipped": "skipped",
                }[kind]
                results[task] = res
                if outcome in ("failed", "unreachable") and not failure:
                    failure.update(task=task, outcome=outcome, message=_result_text(res))
                if on_step:
                    on_step(StepEvent(task, True, outcome, _result_text(res)))
            return True  # keep the event in the artifacts too

        runner = ansible_runner.run(
            private_data_dir=str(directory),
            playbook=str(PLAYBOOKS / playbook),
            inventory={"all": {"hosts": {"target": variables}}},
            envvars={
                "ANSIBLE_ROLES_PATH": str(PLAYBOOKS / "roles"),
                "ANSIBLE_PIPELINING": "True",
                "ANSIBLE_HOST_KEY_CHECKING": "True",
                "ANSIBLE_GATHERING": "explicit",
                "ANSIBLE_RETRY_FILES_ENABLED": "False",
                "ANSIBLE_LOCAL_TEMP": str(directory / "tmp"),
                "ANSIBLE_SSH_CONTROL_PATH_DIR": str(directory / "cp"),
                "ANSIBLE_SSH_RETRIES": "0",
                "ANSIBLE_TIMEOUT": str(settings.HOSTS_CONNECT_TIMEOUT_SECONDS),
                "ANSIBLE_NOCOLOR": "True",
                "ANSIBLE_DEPRECATION_WARNINGS": "False",
                "ANSIBLE_COLLECTIONS_PATH": str(directory / "collections"),
                "HOME": str(directory),
                # ansible-playbook of this interpreter's environment, however the worker started
                "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            },
            settings={"job_timeout": settings.HOSTS_PLAYBOOK_TIMEOUT_SECONDS},
            event_handler=event_handler,
            quiet=True,
            json_mode=False,
        )
        if runner.status == "successful" and not failure:
            return PlaybookResult(ok=True, results=results)
        message = failure.get("message") or ""
        if runner.status == "timeout":
            return PlaybookResult(
                ok=False,
                timed_out=True,
                failed_step=failure.get("task", ""),
                message=f"no answer within {settings.HOSTS_PLAYBOOK_TIMEOUT_SECONDS} s",
                results=results,
            )
        if not message:
            message = _short(_tail(runner))
        host_key_changed = any(sign in message for sign in HOST_KEY_CHANGED_SIGNS)
        return PlaybookResult(
            ok=False,
            unreachable=failure.get("outcome") == "unreachable" or (not failure and not results),
            host_key_changed=host_key_changed,
            failed_step=failure.get("task", ""),
            message=message,
            results=results,
        )
    finally:
        if own_dir:
            shutil.rmtree(directory, ignore_errors=True)


def _tail(runner) -> str:
    try:
        return runner.stdout.read()[-OUTPUT_LIMIT:]
    except (OSError, AttributeError, ValueError):
        return f"ansible-runner ended {runner.status} (rc {runner.rc})"


# ------------------------------------------------------------------------ keys


@dataclass(frozen=True)
class OneTimeKey:
    private_key_file: Path
    public_line: str  # "ssh-ed25519 AAAA… gpu-rental-verification-<id>"


def one_time_key(directory: Path) -> OneTimeKey:
    """A fresh ed25519 key for one verification login, its comment marking it for removal."""
    path = directory / f"verify_{secrets.token_hex(4)}"
    comment = f"gpu-rental-verification-{secrets.token_hex(4)}"
    subprocess.run(  # noqa: S603 - a fixed command, our own arguments
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],  # noqa: S607
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    return OneTimeKey(path, path.with_suffix(".pub").read_text().strip())


KEY_LINE = re.compile(r"^(?P<host>\S+)\s+(?P<type>(ssh|ecdsa)-\S+)\s+(?P<blob>[A-Za-z0-9+/=]+)")
KEY_PREFERENCE = ("ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "ssh-rsa")


def fetch_host_key(address: str, port: int) -> str:
    """The host key the host offers now ("type base64"), preferring ed25519. Raises OSError
    with what went wrong when nothing could be read."""
    try:
        scan = subprocess.run(  # noqa: S603 - the host's address and port, validated fields
            [  # noqa: S607 - the distribution's ssh-keyscan on the worker's PATH
                "ssh-keyscan",
                "-T",
                str(settings.HOSTS_CONNECT_TIMEOUT_SECONDS),
                "-p",
                str(port),
                "-t",
                "ed25519,ecdsa,rsa",
                address,
            ],
            capture_output=True,
            text=True,
            timeout=settings.HOSTS_CONNECT_TIMEOUT_SECONDS * 3,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise OSError(f"no host key from {address}:{port}: timed out") from exc
    keys = {}
    for line in scan.stdout.splitlines():
        match = KEY_LINE.match(line.strip())
        if match:
            keys[match["type"]] = f"{match['type']} {match['blob']}"
    for kind in KEY_PREFERENCE:
        if kind in keys:
            return keys[kind]
    if keys:
        return next(iter(keys.values()))
    raise OSError(f"no host key from {address}:{port}: {scan.stderr.strip()[-300:] or 'no answer'}")


def fingerprint(host_key: str) -> str:
    """SHA256:… as `ssh-keygen -l` shows it."""
    import base64
    import hashlib

    blob = base64.b64decode(host_key.split()[1])
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"
