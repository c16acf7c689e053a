"""Customer emails: each event of an order is emailed once, after the commit that caused it."""

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import (
    REMINDER_HOURS,
    Order,
    OrderEmail,
    OrderEmailKind,
    OrderStatus,
    ProvisioningIssue,
)
from .lifecycle import reminder_due


def _still_relevant(order: Order, kind: str, now: datetime) -> bool:
    """An email queued a while ago may no longer be true when the worker gets to it."""
    match kind:
        case OrderEmailKind.PROVISIONING_DELAYED:
            return (
                order.status == OrderStatus.PAID
                and order.provisioning_issue == ProvisioningIssue.CAPACITY
            )
        case OrderEmailKind.READY:
            return order.status in (OrderStatus.ACTIVE, OrderStatus.ENDED)
        case OrderEmailKind.ENDED:
            return order.status == OrderStatus.ENDED
        case OrderEmailKind.REMINDER_72H | OrderEmailKind.REMINDER_24H | OrderEmailKind.REMINDER_1H:
            return reminder_due(order, now) == kind
    return True


def _period(order: Order, kind: str) -> int:
    """The rental period an email belongs to: reminders are sent again in every period (an
    extension starts one); the order's other emails belong to its first period (a paid
    extension's email is the payment-received one of the period it opened:
    rental.services.extensions)."""
    return order.period if kind in REMINDER_HOURS else 0


def order_email_send(*, order_id: int, kind: str, now: datetime | None = None) -> bool:
    """Send the `kind` email of this order unless it was sent already; True when sent now.

    The record and the send share one transaction: if sending fails, the record rolls back and
    a retry sends it; a task delivered twice, or two workers at once, send it once (the unique
    (order, kind, period) triple: the second insert waits for the first and then fails).
    """
    from ..notifications import send_order_email

    now = now or timezone.now()
    order = Order.objects.select_related("customer").get(pk=order_id)
    if not _still_relevant(order, kind, now):
        return False
    try:
        with transaction.atomic():
            OrderEmail.objects.create(order=order, kind=kind, period=_period(order, kind))
            send_order_email(order=order, kind=kind)
    except IntegrityError:
        return False
    return True
