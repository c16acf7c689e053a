"""The one way a crypto payment changes status.

`payments_set_status` checks every change against PAYMENT_TRANSITIONS (payments.models),
writes the status, the `PaymentEvent` that records it (kind "status", from, to, acting user,
reason) and queues what follows after the commit. Nothing else assigns `payment.status`. The
caller holds the payments' row locks (payments.locks). Batches write in a fixed number of
queries, so 500 confirmations arriving at once cost what one does, give or take the rows.
"""

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from rental.models import Order

from ...bulk import create_rows, update_rows
from ...exceptions import PaymentError
from ...models import (
    PAYMENT_TRANSITIONS,
    CryptoPayment,
    PaymentEvent,
    PaymentEventKind,
    PaymentStatus,
)
from .events import payment_status_emit

logger = logging.getLogger(__name__)


class InvalidPaymentTransition(PaymentError):
    message = _("This payment cannot change to that status now.")

    def __init__(self, from_status: str = "", to_status: str = ""):
        self.from_status, self.to_status = from_status, to_status
        super().__init__()

    def __str__(self) -> str:
        return f"payment status {self.from_status!r} cannot become {self.to_status!r}"


def can_change(from_status: str, to_status: str) -> bool:
    return to_status in PAYMENT_TRANSITIONS.get(from_status, frozenset())


@dataclass(slots=True)
class StatusChange:
    payment: CryptoPayment
    to_status: str
    reason: str = ""
    actor: object | None = None
    review_reason: str = ""
    data: dict = field(default_factory=dict)
    event: PaymentEvent | None = None


def payment_set_status(
    payment: CryptoPayment,
    *,
    to_status: str,
    reason: str = "",
    actor=None,
    review_reason: str = "",
    **data,
) -> CryptoPayment:
    """Change one payment's status (the caller holds its row lock); InvalidPaymentTransition
    when the map does not allow it. A payment sent to review needs `review_reason`."""
    payments_set_status([StatusChange(payment, to_status, reason, actor, review_reason, data)])
    return payment


def payments_set_status(changes: Sequence[StatusChange]) -> None:
    """Check and apply status changes to locked payments, then write them: one UPDATE and
    one INSERT whatever their number."""
    for change in changes:
        if change.event is None:
            status_apply(change)
    status_write(changes)


def status_apply(change: StatusChange) -> StatusChange:
    """Check one change against the map and apply it to the payment in memory (so later
    decisions in the same batch see it); `status_write` stores it."""
    payment, to_status = change.payment, change.to_status
    if not can_change(payment.status, to_status):
        raise InvalidPaymentTransition(payment.status, to_status)
    if to_status == PaymentStatus.NEEDS_REVIEW and not change.review_reason:
        raise ValueError("a payment sent to review needs a review reason")
    now = timezone.now()
    data = dict(change.data)
    if change.review_reason:
        data["review"] = change.review_reason
    change.event = PaymentEvent(
        payment=payment,
        kind=PaymentEventKind.STATUS,
        from_status=payment.status,
        to_status=to_status,
        actor=change.actor,
        reason=change.reason[:500],
        data=data,
    )
    payment.status = to_status
    if to_status == PaymentStatus.NEEDS_REVIEW:
        payment.review_reason = change.review_reason
    if to_status == PaymentStatus.CONFIRMED:
        payment.confirmed_at = now
    payment.updated_at = now
    return change


STATUS_FIELDS = ["status", "review_reason", "confirmed_at", "updated_at"]


def status_write(changes: Sequence[StatusChange], *, rows_written: bool = False) -> None:
    """Store applied changes and their events; queue the emails after the commit. With
    `rows_written`, the caller has already saved STATUS_FIELDS of these payments."""
    if not changes:
        return
    if not rows_written:
        latest = {change.payment.pk: change.payment for change in changes}
        update_rows(list(latest.values()), STATUS_FIELDS)
    events = create_rows([change.event for change in changes])
    payment_status_emit(changes)  # webhooks: payment.detected, .confirmed, .review
    transaction.on_commit(lambda: _log(events))
    from .. import tasks

    notified = [event.pk for event in events if event.to_status in NOTIFIED_STATUSES]
    if notified:
        tasks.payment_event_emails.delay_on_commit(notified)


def _log(events: Sequence[PaymentEvent]) -> None:
    """One log line per committed status change, with the payment's and the order's references."""
    for event in events:
        payment = event.payment
        order = Order(pk=payment.order_id).reference if payment.order_id else ""
        logger.info(
            "payment %s %s -> %s%s: %s",
            payment.reference,
            event.from_status,
            event.to_status,
            f" (order {order})" if order else "",
            event.reason or "-",
            extra={
                "event": "payment_status",
                "payment": payment.reference,
                "order": order,
                "from_status": event.from_status,
                "to_status": event.to_status,
                "review_reason": event.data.get("review", ""),
                "actor_id": event.actor_id,
                "reason": event.reason,
            },
        )


# The customer is emailed when their payment reaches one of these. (A payment closes because
# of what the customer did — paid another way, cancelled, chose another coin — so it is not
# emailed; money found on it is, as a credit.)
NOTIFIED_STATUSES = frozenset({PaymentStatus.NEEDS_REVIEW})
