"""What crypto payments tell the outbox (webhooks): one event per status a payment reaches
that its customer sees (detected, confirmed, review, expired, closed, resolved, invalid).
Written in the transaction of the change, by the one setter (PaymentStatusBatch.write).

The payload's `status` is the REST API's (`GET /api/v1/payments/{id}/` → `status`): the
payment's state for its customer (PaymentState), one vocabulary for both."""

from collections.abc import Iterable

from django.utils import timezone

from outbox import events
from outbox.services import outbox_emit_many
from rental.models import Order

from ...models import CryptoPayment, PaymentStatus
from ..selectors.state import payment_state

# status reached → event type
STATUS_EVENTS = {
    PaymentStatus.DETECTED: events.PAYMENT_DETECTED,
    PaymentStatus.CONFIRMED: events.PAYMENT_CONFIRMED,
    PaymentStatus.NEEDS_REVIEW: events.PAYMENT_REVIEW,
    PaymentStatus.EXPIRED: events.PAYMENT_EXPIRED,
    PaymentStatus.CLOSED: events.PAYMENT_CLOSED,
    PaymentStatus.RESOLVED: events.PAYMENT_RESOLVED,
    PaymentStatus.INVALID: events.PAYMENT_INVALID,
}


def payment_data(payment: CryptoPayment, now=None) -> dict:
    return {
        "id": payment.pk,
        "reference": payment.reference,
        "status": payment_state(
            status=payment.status,
            due=payment.amount_due_units,
            received=payment.received_units,
            seen=payment.seen_units,
            expires_at=payment.expires_at,
            now=now or timezone.now(),
        ),
        "review_reason": payment.review_reason,
        "purpose": payment.purpose,
        "order": {"id": payment.order_id, "reference": Order(pk=payment.order_id).reference}
        if payment.order_id
        else None,
        "asset": payment.asset,
        "network": payment.network,
        "amount_due_usd": f"{payment.amount_due_usd:.2f}",
        "amount_due_units": str(int(payment.amount_due_units)),
        "received_units": str(int(payment.received_units)),
        "seen_units": str(int(payment.seen_units)),
        "decimals": payment.decimals,
        "confirmations_required": payment.confirmations_required,
    }


def payment_status_emit(changes: Iterable[tuple[CryptoPayment, str]]) -> None:
    """One event per status change (the payment, the status it reached) that reached a
    status webhooks tell (moving back to awaiting, after a reorg, tells nothing: the customer
    sees no new state)."""
    now = timezone.now()
    outbox_emit_many(
        (
            STATUS_EVENTS[to_status],
            payment.customer_id,
            {"payment": payment_data(payment, now)},
        )
        for payment, to_status in changes
        if to_status in STATUS_EVENTS
    )
