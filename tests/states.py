"""States reached the way operators and workers reach them: through the setters and services,
never by writing a status on a row, so every state a test sees is one the house can reach."""

from rental.hosts.services import host_set_state
from rental.models import Host


def hosts_set_state(hosts, to_state: str, reason: str = "Set by an operator (test)") -> None:
    """Move each host (a queryset or a list) through the one host setter, in pk order; a
    transition outside HOST_TRANSITIONS raises."""
    ids = sorted(host.pk if isinstance(host, Host) else host for host in hosts)
    for host_id in ids:
        host_set_state(host_id=host_id, to_state=to_state, actor=None, reason=reason)


def order_to_active(order, *, starts_at=None, reason="SSH answered (test)", **fields):
    """A provisioning order made active as the readiness check makes it: through the order
    setter, with its rental period (from `starts_at`, now by default)."""
    from datetime import timedelta

    from django.utils import timezone

    from rental.models import OrderStatus
    from rental.services import order_set_status

    starts_at = starts_at or timezone.now()
    fields.setdefault("ends_at", starts_at + timedelta(days=order.duration_days))
    return order_set_status(
        order_id=order.pk,
        to_status=OrderStatus.ACTIVE,
        actor=None,
        reason=reason,
        starts_at=starts_at,
        **fields,
    )


def payment_path(from_status: str, to_status: str) -> list[str]:
    """The shortest walk through PAYMENT_TRANSITIONS from one status to another (the statuses
    after `from_status`); KeyError when the map offers none."""
    from payments.models import PAYMENT_TRANSITIONS

    paths = {from_status: []}
    frontier = [from_status]
    while frontier:
        status = frontier.pop(0)
        for following in sorted(PAYMENT_TRANSITIONS[status]):
            if following not in paths:
                paths[following] = [*paths[status], following]
                frontier.append(following)
    return paths[to_status]


def payment_walk(payment, to_status: str, *, review_reason: str = "underpaid", **data):
    """Move a payment to `to_status` through the one payment setter, along the map's shortest
    path, under its row lock (what an operator's or the worker's decision would do, without
    the money that usually comes with it); `data` goes with the last step."""
    from django.db import transaction

    from payments.crypto.services.status import payment_set_status
    from payments.locks import lock_payments
    from payments.models import PaymentStatus

    with transaction.atomic():
        locked = lock_payments([payment.pk])[payment.pk]
        path = payment_path(locked.status, to_status)
        for number, status in enumerate(path, start=1):
            extra = data if number == len(path) else {}
            if status == PaymentStatus.NEEDS_REVIEW:
                extra = {**extra, "review_reason": review_reason}
            payment_set_status(locked, to_status=status, reason="test: on the way", **extra)
    payment.refresh_from_db()
    return payment


def payment_expire_now(payment):
    """The payment's time ran out and the worker's minute sweep expired it (nothing received:
    expired; less than due: under review, underpaid)."""
    from datetime import timedelta

    from django.utils import timezone

    from payments.crypto.services.payments import payment_expire
    from payments.models import CryptoPayment

    past = timezone.now() - timedelta(minutes=1)
    CryptoPayment.objects.filter(pk=payment.pk).update(expires_at=past)
    assert payment_expire(payment_id=payment.pk) == 1
    payment.refresh_from_db()
    return payment


def withdrawal_path(from_status: str, to_status: str) -> list[str]:
    """The shortest walk through WITHDRAWAL_TRANSITIONS from one status to another (the
    statuses after `from_status`); KeyError when the map offers none."""
    from payments.models import WITHDRAWAL_TRANSITIONS

    paths = {from_status: []}
    frontier = [from_status]
    while frontier:
        status = frontier.pop(0)
        for following in sorted(WITHDRAWAL_TRANSITIONS[status]):
            if following not in paths:
                paths[following] = [*paths[status], following]
                frontier.append(following)
    return paths[to_status]


def withdrawal_walk(
    withdrawal,
    to_status: str,
    *,
    actor=None,
    tx_hash: str = "0x" + "cd" * 32,
    block: int = 7,
    reason: str = "test: on the way",
):
    """Move a withdrawal to `to_status` through the one withdrawal setter, along the map's
    shortest path, under its row lock, as finance and the worker take it (approved by `actor`,
    sent with `tx_hash`, paid in `block`), without the ledger postings that usually come with
    it."""
    from django.db import transaction

    from payments.locks import lock_withdrawal
    from payments.models import WithdrawalStatus
    from payments.withdrawals.services import withdrawal_set_status

    with transaction.atomic():
        locked = lock_withdrawal(withdrawal_id=withdrawal.pk)
        for status in withdrawal_path(locked.status, to_status):
            data = {}
            if status == WithdrawalStatus.SENT:
                data = {"tx_hash": tx_hash}
            elif status == WithdrawalStatus.PAID:
                data = {"block": block}
            withdrawal_set_status(locked, status, actor=actor, reason=reason, **data)
    withdrawal.refresh_from_db()
    return withdrawal
