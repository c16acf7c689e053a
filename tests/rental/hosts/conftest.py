"""Worker-managed hosts for real: a local host (sshd on loopback, real accounts, a fake device
directory and the nvidia-smi stand-in) registered through the services an operator uses."""

import subprocess
from pathlib import Path

import pytest

from rental.hosts import engine
from rental.hosts.services import host_check, host_confirm_key, host_fetch_key
from rental.models import Host, HostState
from rental.services.orders import order_mark_paid


@pytest.fixture
def register_host(local_host, catalogue, operator):
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
            admin_user=machine_admin(machine),
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


def machine_admin(machine) -> str:
    from django.conf import settings

    return f"{settings.HOSTS_ACCOUNT_PREFIX}adm"


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


@pytest.fixture
def paid_order(place_order, customer, customer_key):
    """paid_order(gpu_model, lots=1) -> the order, paid (tasks run at once after the commit:
    the worker's provisioning and verification included)."""

    def pay(gpu_model, lots: int = 1, who=None, key: Path | None = None, **options):
        who = who or customer
        who.ssh_public_key = (key or customer_key).with_suffix(".pub").read_text().strip()
        who.save(update_fields=["ssh_public_key"])
        order = place_order(who, gpu_model, lots=lots, **options)
        order_mark_paid(order_id=order.pk, actor=None, reason="Paid in the test")
        order.refresh_from_db()
        return order

    return pay
