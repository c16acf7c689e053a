"""Active rentals for the extension tests (rental's and payments'): paid from the balance,
prepared by an operator, started by the real readiness check against the test sshd."""

from datetime import timedelta

from django.utils import timezone

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, Order, OrderStatus
from rental.services.provisioning import order_mark_prepared, order_set_ssh_key

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 grace@laptop"
)


def make_active(order: Order, sshd, capture) -> Order:
    with capture(execute=True):
        balance_pay_order(order_id=order.pk, customer=order.customer)
    Host.objects.filter(allocations__order=order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    order_set_ssh_key(order_id=order.pk, customer=order.customer, key_text=SSH_KEY)
    with capture(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04")
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    return order


def end_in(order: Order, left: timedelta):
    """Move the rental so that it ends `left` after the real clock's now; returns that now."""
    now = timezone.now()
    ends_at = now + left
    Order.objects.filter(pk=order.pk).update(
        ends_at=ends_at, starts_at=ends_at - timedelta(days=order.duration_days)
    )
    order.refresh_from_db()
    return now
