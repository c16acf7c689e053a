"""A payment's history: one row per thing that happened to it, with who and why."""

from ..models import CryptoPayment, PaymentEvent


def payment_event(
    payment: CryptoPayment, kind: str, *, actor=None, reason: str = "", **data
) -> PaymentEvent:
    return PaymentEvent.objects.create(
        payment=payment, kind=kind, actor=actor, reason=reason, data=data
    )
