"""The README's API walkthrough, run as written against a live server: a token from
`manage.py api_token_create`, then scripts/api_walkthrough.py (webhook endpoint, quote, order,
pay from the balance, wait for order.paid and order.active by webhook, signatures checked)
while an operator marks the hosts prepared with `manage.py ops_mark_prepared`."""

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from api.models import ApiToken
from rental.models import Host, Order, OrderStatus
from rental.selectors import order_access

pytestmark = pytest.mark.django_db(transaction=True)

SCRIPT = Path(settings.BASE_DIR) / "scripts" / "api_walkthrough.py"


def command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def test_the_walkthrough_orders_pays_and_sees_the_order_active_by_webhook(
    live_server, customer, make_customer, credit, catalogue, sshd
):
    Host.objects.filter(gpu_model=catalogue["h100"]).update(ssh_host=sshd.host, ssh_port=sshd.port)
    customer.ssh_public_key = (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 a@b"
    )
    customer.save(update_fields=["ssh_public_key"])
    credit(customer, "1000.00")
    operator = make_customer(email="olga@example.com", first_name="Olga", is_staff=True)
    operator.groups.add(Group.objects.get_or_create(name="operators")[0])
    token = command("api_token_create", customer.email, "--name", "walkthrough")
    assert token.startswith("gr_") and ApiToken.objects.get(owner=customer).name == "walkthrough"

    walk = subprocess.Popen(  # noqa: S603
        [
            sys.executable,
            str(SCRIPT),
            "--base",
            live_server.url,
            "--token",
            token,
            "--listen",
            "0",
            "--wait",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not Order.objects.filter(customer=customer, status=OrderStatus.PROVISIONING).exists():
            assert walk.poll() is None, walk.stdout.read()
            assert time.monotonic() < deadline, "the script did not pay an order"
            time.sleep(0.2)
        order = Order.objects.get(customer=customer)
        time.sleep(1)  # the script now waits for order.active
        shown = command(
            "ops_mark_prepared",
            str(order.pk),
            "--operator",
            operator.email,
            "--notes",
            "venv in /opt",
        )
        assert order.reference in shown
        output, _ = walk.communicate(timeout=60)
    finally:
        if walk.poll() is None:
            walk.kill()
    assert walk.returncode == 0, output
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert f"3. order {order.reference}" in output
    assert "2. quote: 1 × " in output and "4. paid from the balance: provisioning" in output
    assert "webhook order.paid" in output and "webhook order.active" in output
    for host in order_access(order):
        assert host.ssh_command in output
    assert "notes: venv in /opt" in output
    assert "bad signature" not in output


def test_the_commands_refuse_what_they_cannot_do(customer, catalogue, place_order):
    with pytest.raises(CommandError, match="No account"):
        command("api_token_create", "nobody@example.com")
    with pytest.raises(CommandError):
        command("api_token_create", customer.email, "--scopes", "admin")
    assert not ApiToken.objects.exists()
    order = place_order(customer, catalogue["h100"])
    with pytest.raises(CommandError, match="not an operator"):
        command("ops_mark_prepared", str(order.pk), "--operator", customer.email)
    order.refresh_from_db()
    assert order.prepared_at is None
