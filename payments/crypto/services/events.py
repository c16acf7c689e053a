"""What crypto payments tell the outbox (webhooks): a payment detected, confirmed or sent to
review. Written in the transaction of the change."""

from collections.abc import Sequence

from outbox import events
from outbox.services import outbox_emit_many
from rental.models import Order

from ...models import CryptoPayment, PaymentEvent, PaymentStatus

# status reached → event type
STATUS_EVENTS = {
    PaymentStatus.DETECTED: events.PAYMENT_DETECTED,
    PaymentStatus.CONFIRMED: events.PAYMENT_CONFIRMED,
    PaymentStatus.NEEDS_REVIEW: events.PAYMENT_REVIEW,
}


def payment_data(payment: CryptoPayment) -> dict:
    return {
        "id": payment.pk,
        "reference": payment.reference,
        "status": payment.status,
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


def payment_status_emit(changes: Sequence[PaymentEvent]) -> None:
    """One event per status change (its PaymentEvent) that reached a status webhooks tell."""
    outbox_emit_many(
        (
            STATUS_EVENTS[change.to_status],
            change.payment.customer_id,
            {"payment": payment_data(change.payment)},
        )
        for change in changes
        if change.to_status in STATUS_EVENTS
    )
