"""The one way a crypto payment changes status.

PAYMENT_STATES is the payment's state machine (statemachine.StateMachine): the map
PAYMENT_TRANSITIONS (payments.models), a `PaymentEvent` of kind "status" per change (from, to,
acting user, reason), a log line after the commit (one per change; a batch of many changes logs
one summary line, each change at DEBUG). `payment_set_status` makes one
change; `PaymentStatusBatch` makes many, each checked and applied as it is decided (so later
decisions of the batch see it), then writes them together with the other columns the caller
changed on these payments: one UPDATE and one INSERT whatever their number, so 500
confirmations arriving at once cost what one does, give or take the rows.

Nothing else assigns a payment's status fields (status, review reason, confirmation time).
The caller holds the payments' row locks (payments.locks). In the transaction: the webhooks'
outbox rows; after the commit: the log lines and the customer's emails.
"""

import logging
from collections.abc import Iterable, Sequence

from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from outbox.messages import enqueue
from rental.models import Order
from statemachine import StateMachine

from ...bulk import insert_rows, update_rows
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


def _describe(payment: CryptoPayment) -> tuple[str, dict]:
    """The log line's subject and fields: the payment's and its order's references."""
    order = Order(pk=payment.order_id).reference if payment.order_id else ""
    in_review = payment.status == PaymentStatus.NEEDS_REVIEW
    return f"payment {payment.reference}" + (f" (order {order})" if order else ""), {
        "payment": payment.reference,
        "order": order,
        "review_reason": payment.review_reason if in_review else "",
    }


# The payment's states: PAYMENT_TRANSITIONS, PaymentEvent as the audit row, the log line. Its
# effects (webhooks, emails) are written per batch by PaymentStatusBatch.write.
PAYMENT_STATES = StateMachine(
    name="payment",
    transitions=PAYMENT_TRANSITIONS,
    audit_model=PaymentEvent,
    refuse=lambda payment, to_status: InvalidPaymentTransition(payment.status, to_status),
    logger=logger,
    describe=_describe,
)

# The columns a status change writes (with the caller's own, in the same UPDATE).
_STATUS_FIELDS = ("status", "review_reason", "confirmed_at", "updated_at")

# The customer is emailed when their payment reaches one of these. (A payment closes because
# of what the customer did — paid another way, cancelled, chose another coin — so it is not
# emailed; money found on it is, as a credit.)
NOTIFIED_STATUSES = frozenset({PaymentStatus.NEEDS_REVIEW})


def can_change(from_status: str, to_status: str) -> bool:
    return PAYMENT_STATES.allows(from_status, to_status)


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
    when the map does not allow it. A payment sent to review needs `review_reason`; `data`
    goes into the event."""
    batch = PaymentStatusBatch(actor=actor)
    batch.change(payment, to_status, reason, review_reason=review_reason, **data)
    batch.write()
    return payment


# A status event's columns, as the batch inserts them (plain rows: payments.bulk.insert_rows).
_EVENT_FIELDS = ("payment", "from_status", "to_status", "actor", "reason", "kind", "data")


class PaymentStatusBatch:
    """Status changes of locked payments, decided one after another and written together.

    `change` checks one change against the map and applies it to the payment in memory at
    once; `write` stores every change of the batch, the caller's other changed columns of
    these (and other) payments with them, and the events (as plain rows: no model instance
    per event)."""

    def __init__(self, *, actor=None):
        self.actor = actor
        # (payment, from status, the event's values in _EVENT_FIELDS order)
        self._changes: list[tuple[CryptoPayment, str, tuple]] = []
        self._touched: dict[int, CryptoPayment] = {}

    def change(
        self, payment: CryptoPayment, to_status: str, reason: str = "", *, review_reason="", **data
    ) -> None:
        """Check and apply one change (InvalidPaymentTransition; ValueError for a review
        without its reason). Written by `write`."""
        PAYMENT_STATES.check(payment, to_status)
        if to_status == PaymentStatus.NEEDS_REVIEW and not review_reason:
            raise ValueError("a payment sent to review needs a review reason")
        if review_reason:
            data["review"] = review_reason
        values = PAYMENT_STATES.audit_values(
            payment,
            from_status=payment.status,
            to_status=to_status,
            actor=self.actor,
            reason=reason,
            kind=PaymentEventKind.STATUS,
            data=data,
        )
        self._changes.append((payment, payment.status, tuple(values[f] for f in _EVENT_FIELDS)))
        payment.status = to_status
        if to_status == PaymentStatus.NEEDS_REVIEW:
            payment.review_reason = review_reason
        if to_status == PaymentStatus.CONFIRMED:
            payment.confirmed_at = timezone.now()
        self._touched[payment.pk] = payment

    def review_reason_change(self, payment: CryptoPayment, review_reason: str) -> None:
        """A payment already under review is now in review for another reason (no status
        change, no status event: the caller records why in the payment's history)."""
        if payment.status != PaymentStatus.NEEDS_REVIEW:
            raise InvalidPaymentTransition(payment.status, PaymentStatus.NEEDS_REVIEW)
        payment.review_reason = review_reason
        self._touched[payment.pk] = payment

    def write(
        self, *, also: Iterable[CryptoPayment] = (), also_fields: Sequence[str] = ()
    ) -> list[int]:
        """Store the batch: one UPDATE of the status columns and `also_fields` of every
        payment changed and of `also` (the caller's other changed payments), one INSERT of
        the status events; the webhooks' outbox rows, the log lines and emails after the
        commit. Returns the ids of the events written; the batch is empty again after."""
        rows = {payment.pk: payment for payment in also} | self._touched
        changes, self._changes, self._touched = self._changes, [], {}
        now = timezone.now()
        if rows:
            for payment in rows.values():
                payment.updated_at = now
            update_rows(list(rows.values()), list(dict.fromkeys([*_STATUS_FIELDS, *also_fields])))
        if not changes:
            return []
        written = insert_rows(
            PaymentEvent,
            (*_EVENT_FIELDS, "created_at"),
            [(*values, now) for _, _, values in changes],
            returning=("id", "to_status"),
        )
        # webhooks: payment.<status> (events.STATUS_EVENTS)
        payment_status_emit([(payment, values[2]) for payment, _, values in changes])
        PAYMENT_STATES.log_many_on_commit(
            [
                (payment, from_status, values[2], self.actor, values[4])
                for payment, from_status, values in changes
            ]
        )

        notified = [pk for pk, to_status in written if to_status in NOTIFIED_STATUSES]
        if notified:
            enqueue("payments.tasks.payment_event_emails", notified)
        return [pk for pk, _ in written]
