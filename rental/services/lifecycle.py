"""The rental's life: unpaid holds that ran out, then, once active, reminders before the end
and a hard stop.

`rentals_tick` runs from Celery beat every minute with the real clock; tests pass `now`.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from accounts.models import User
from outbox.messages import enqueue

from ..exceptions import InvalidTransition
from ..hosts.tenancy import tenancies_resume_stalled, tenancies_revoke
from ..locks import lock_order
from ..models import (
    REMINDER_HOURS,
    Order,
    OrderEmail,
    OrderEmailKind,
    OrderStatus,
    OrderStatusChange,
)
from .events import order_ending_emit
from .extensions import extensions_cancel_for_order, extensions_release_expired_holds
from .intents import orders_release_expired_holds
from .orders import order_set_status

# Hours before the end → the reminder sent then, most imminent first.
REMINDERS: tuple[tuple[int, str], ...] = tuple(
    sorted((hours, kind) for kind, hours in REMINDER_HOURS.items())
)
LONGEST_REMINDER = timedelta(hours=max(hours for hours, _kind in REMINDERS))
# A prepared order whose readiness checks stopped (a check lost in a crash, a broker outage
# when the next one was queued) is checked again after this long without news. The longest
# pause between two checks is 5 minutes.
STALLED_READINESS = timedelta(minutes=15)


def reminder_due(order: Order, now: datetime) -> str | None:
    """The reminder this active order should have had by `now`, or None.

    Only the most imminent passed threshold counts: after a worker outage, a rental ending in
    30 minutes gets the one-hour reminder, not a stale "24 hours left". A threshold at or before
    the start (the 72-hour one of a 3-day rental) is never due: the ready email says it all.
    """
    if order.status != OrderStatus.ACTIVE or order.ends_at is None or now >= order.ends_at:
        return None
    for hours, kind in REMINDERS:
        threshold = order.ends_at - timedelta(hours=hours)
        if threshold <= now and threshold > order.starts_at:
            return kind
    return None


def order_end(*, order_id: int, now: datetime | None = None, actor: User | None = None) -> Order:
    """The hard stop: the rental is over, every host's access is revoked (the teardown is
    queued; the cards go back to stock only once it is verified); an extension still awaiting
    payment is cancelled.

    Raises InvalidTransition when the order is not active or its end has not come yet.
    """

    now = now or timezone.now()
    with transaction.atomic():
        order = lock_order(order_id)
        if order.status != OrderStatus.ACTIVE or order.ends_at > now:
            raise InvalidTransition()
        order = order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.ENDED,
            actor=actor,
            reason="Rental period over: access being revoked",
        )
        tenancies_revoke(order_id=order.pk, actor=actor, reason="Rental period over")
        extensions_cancel_for_order(
            order_id=order.pk, reason="The rental ended before the extension was paid"
        )
        enqueue("rental.tasks.order_email", order.pk, OrderEmailKind.ENDED)
    return order


@dataclass
class TickReport:
    released: list[int] = field(default_factory=list)
    extensions_released: list[int] = field(default_factory=list)
    ended: list[int] = field(default_factory=list)
    reminded: list[tuple[int, str]] = field(default_factory=list)
    rechecked: list[int] = field(default_factory=list)
    emails_requeued: list[int] = field(default_factory=list)
    host_work_resumed: list[int] = field(default_factory=list)


def rentals_tick(*, now: datetime | None = None) -> TickReport:
    """Release unpaid orders whose hold ran out, end what is over, queue the reminders that
    are due, restart stalled readiness checks, queue again a lost "payment received" email.
    Safe to run twice: releasing and ending check the order under its row lock, each email is
    sent at most once per order, and a readiness check of an order that changed meanwhile
    does nothing."""

    now = now or timezone.now()
    report = TickReport(released=orders_release_expired_holds(now=now))
    report.extensions_released = extensions_release_expired_holds(now=now)
    closing = (
        Order.objects.filter(status=OrderStatus.ACTIVE, ends_at__lte=now + LONGEST_REMINDER)
        .prefetch_related("emails")
        .order_by("ends_at", "pk")
    )
    for order in closing:
        if order.ends_at <= now:
            try:
                order_end(order_id=order.pk, now=now)
            except InvalidTransition:
                continue  # ended by another run meanwhile
            report.ended.append(order.pk)
            continue
        kind = reminder_due(order, now)
        # Only this rental period's emails count: an extension's period has its own reminders.
        sent = {email.kind for email in order.emails.all() if email.period == order.period}
        if kind and kind not in sent:
            # The webhook event is written here, apart from the email: a mail server that is
            # down for the whole reminder window loses the email, never the event.
            order_ending_emit(order, kind)
            enqueue("rental.tasks.order_email", order.pk, kind, now.isoformat())
            report.reminded.append((order.pk, kind))
    stalled = Order.objects.filter(
        status=OrderStatus.PROVISIONING,
        prepared_at__isnull=False,
        provisioning_issue="",
        updated_at__lt=now - STALLED_READINESS,
    ).values_list("pk", flat=True)
    for order_id in stalled:
        enqueue("rental.tasks.order_readiness", order_id)
        report.rechecked.append(order_id)
    report.host_work_resumed = tenancies_resume_stalled(now=now)
    for order_id in _payment_emails_lost(now):
        enqueue("rental.tasks.order_email", order_id, OrderEmailKind.PAYMENT_RECEIVED)
        report.emails_requeued.append(order_id)
    return report


# The "payment received" email is queued after the commit that paid the order: a process that
# dies in between loses the queueing. Orders paid between these bounds ago without that email
# have it queued again (sent once: OrderEmail's unique row).
LOST_EMAIL_AFTER = timedelta(minutes=5)
LOST_EMAIL_WITHIN = timedelta(hours=24)


def _payment_emails_lost(now: datetime) -> list[int]:
    paid = OrderStatusChange.objects.filter(
        to_status=OrderStatus.PAID,
        created_at__gte=now - LOST_EMAIL_WITHIN,
        created_at__lt=now - LOST_EMAIL_AFTER,
    ).values("order_id")
    sent = OrderEmail.objects.filter(
        order=OuterRef("pk"), kind=OrderEmailKind.PAYMENT_RECEIVED, period=0
    )
    return list(
        Order.objects.filter(pk__in=paid)
        .exclude(status=OrderStatus.CANCELLED)
        .filter(~Exists(sent))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
