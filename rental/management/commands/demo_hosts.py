"""`make run`'s demo hosts, for real: each a real login on this machine that the worker manages.

As root, every demo host of a CUDA model becomes a local host (rental.hosts.localhost): the
distribution's OpenSSH server on 127.0.0.1 from DEMO_SSH_PORT up (a taken port is skipped, the
host's record gets the port it listens on), real accounts named with HOSTS_ACCOUNT_PREFIX
("grdemo-"), a device directory and an nvidia-smi stand-in under var/demo-hosts/<host>/. The
command registers each as an operator would (the host key it generated itself is the one
confirmed, then a host check), then keeps the SSH servers running until it is stopped (Ctrl-C,
honcho's SIGTERM). An order paid on `make run` then gets a tenant account on its demo host;
the `ssh` command on its page logs the customer in with their key.

Not as root (no useradd, no sshd of its own), or for ROCm models (no rocm-smi stand-in), the
demo hosts stay hosts prepared by hand: operators mark orders prepared in /ops/ and confirm
the teardown there.
"""

import os
import shutil
import signal
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from rental.hosts import engine
from rental.hosts.localhost import create_local_host, ensure_admin, fake_cards
from rental.hosts.services import host_check, host_confirm_key, host_fetch_key, host_set_state
from rental.models import ComputePlatform, Host, HostManagement, HostState


class _StopRequest:
    """Ctrl-C or honcho's SIGTERM. The host checks run playbooks through ansible-runner in this
    process, and ansible-runner installs SIGINT and SIGTERM handlers of its own, which stayed:
    the command never heard honcho's SIGTERM (seen: still up ten minutes later, until honcho's
    SIGKILL, its SSH servers' sessions left behind). Ours are installed again before each wait;
    a flag, not a threading.Event, whose lock a handler may find held by the thread it
    interrupted."""

    def __init__(self):
        self.requested = False
        self.listen()

    def listen(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handler)

    def _handler(self, *_args) -> None:
        self.requested = True

    def wait(self) -> None:
        self.listen()
        while not self.requested:
            time.sleep(0.5)


PORT_SEARCH = 50  # ports tried after a taken one (another program's, a connection's)
CARD_NAMES = {"h100": "NVIDIA H100 80GB HBM3", "h200": "NVIDIA H200", "b200": "NVIDIA B200"}


class Command(BaseCommand):
    help = "Start make run's demo hosts (real logins on this machine, as root) and keep them up."

    def handle(self, *args, **options):
        stop = _StopRequest()
        demo = Host.objects.filter(name__startswith="demo-").select_related("gpu_model")
        missing = [tool for tool in ("useradd", "sudo", "sshd") if not _found(tool)]
        if os.geteuid() != 0 or missing:
            why = "not run as root" if os.geteuid() != 0 else f"missing: {', '.join(missing)}"
            self.stdout.write(
                f"demo hosts: {why}: they stay hosts prepared by hand (mark orders prepared "
                "in /ops/provisioning/ and confirm each teardown in /ops/teardown/)."
            )
            stop.wait()
            return
        prefix = settings.HOSTS_ACCOUNT_PREFIX
        base = settings.VAR_DIR / "demo-hosts"
        admin = ensure_admin(prefix, base / "admin-key")
        if str(admin.private_key_path) != str(settings.HOSTS_ADMIN_KEY_FILE):
            self.stderr.write(
                f"HOSTS_ADMIN_KEY_FILE is {settings.HOSTS_ADMIN_KEY_FILE!r}, the demo's key is "
                f"{admin.private_key_path}: the worker could not log in."
            )
        machines = []
        port = settings.DEMO_SSH_PORT  # the next host's first choice
        for host in demo.order_by("name"):
            if host.gpu_model.compute_platform == ComputePlatform.ROCM:
                port += 1
                continue  # no rocm-smi stand-in: prepared by hand
            slug = host.gpu_model.slug.split("-")[0]
            machine = create_local_host(
                base / host.name, prefix=prefix, port=port, search=PORT_SEARCH,
                cards=fake_cards(
                    CARD_NAMES.get(slug, host.gpu_model.name), host.cards,
                    host.gpu_model.memory_gb_per_card * 1024, seed=host.name,
                ),
            )  # fmt: skip
            machines.append(machine)
            port = machine.port + 1  # a taken port moved this host up: the next follow it
            Host.objects.filter(pk=host.pk).update(
                ssh_host=machine.host, ssh_port=machine.port,
                management=HostManagement.WORKER, admin_user=admin.user,
                device_dir=str(machine.device_dir), gpu_tool=machine.gpu_tool,
            )  # fmt: skip
            self._register(host.pk, machine)
        ports = ", ".join(str(machine.port) for machine in machines)
        self.stdout.write(
            f"demo hosts: {len(machines)} local hosts on 127.0.0.1 ports {ports}, "
            f"accounts {prefix}*; `make clean` removes them."
        )
        stop.wait()
        for machine in machines:
            machine.stop()

    def _register(self, host_id: int, machine) -> None:
        host = Host.objects.get(pk=host_id)
        if host.host_key != machine.host_key_line.strip():
            if host.host_key and host.state != HostState.UNCHECKED:
                host_set_state(
                    host_id=host_id, to_state=HostState.UNCHECKED, actor=None,
                    reason="Demo host started with a new host key",
                )  # fmt: skip
            host_fetch_key(host_id=host_id)
            # The demo made this key itself: comparing with its own file is the confirmation.
            host_confirm_key(
                host_id=host_id, actor=None, fingerprint=engine.fingerprint(machine.host_key_line)
            )
        outcome = host_check(host_id=host_id, actor=None, make_available=True)
        self.stdout.write(
            f"  {host.name} 127.0.0.1:{machine.port} "
            f"{'available' if outcome.passed else 'check failed: ' + outcome.detail}"
        )


def _found(tool: str) -> bool:
    return bool(shutil.which(tool) or os.path.exists(f"/usr/sbin/{tool}"))
