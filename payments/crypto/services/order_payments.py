"""An order's payments when the order moves on: cancelled by the customer, paid another way.

Its other open payments close at once; money that had arrived on them goes to the customer's
balance (now, and whatever still arrives: payments.crypto.services.settling). Lock order:
the order's live payments, the ledger accounts, then rental's order (payments.locks).
"""

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental import services as rental_services
from rental.models import Order

from ...chain.networks import units_to_usd
from ...exceptions import PaymentError
from ...locks import lock_order_for_payment_changes, lock_order_payments
from ...models import LIVE_STATUSES, CryptoPayment
from .settling import close, open_book


class CancelNeedsConfirmation(PaymentError):
    message = _(
        "Money has already arrived for this order. Confirm the cancellation: what arrived "
        "goes to your USD balance."
    )


@dataclass(frozen=True, slots=True)
class MoneyOnOrder:
    """What arrived on an order's open payments, for the cancellation's confirmation."""

    payment: CryptoPayment
    confirmed_usd: Decimal
    confirming_usd: Decimal


def order_money_received(*, order: Order) -> list[MoneyOnOrder]:
    """The order's live payments on which something arrived (one query)."""
    return [
        MoneyOnOrder(
            payment=payment,
            confirmed_usd=units_to_usd(payment.received_units, payment.decimals),
            confirming_usd=units_to_usd(payment.seen_units, payment.decimals),
        )
        for payment in CryptoPayment.objects.filter(order=order, status__in=LIVE_STATUSES)
        if payment.received_units or payment.seen_units
    ]


def order_cancel(*, order_id: int, customer: User, money_confirmed: bool = False) -> Order:
    """Cancel the customer's order awaiting payment and close its open payments.

    When money has arrived on them, the customer must have confirmed that it goes to the
    balance (CancelNeedsConfirmation otherwise; nothing changes). Raises Order.DoesNotExist
    for another customer's order and OrderNotCancellable once it has moved on.
    """
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=order_id)
        live = lock_order_payments(order_id=order_id)
        if any(payment.customer_id != customer.pk for payment in live):
            raise Order.DoesNotExist()
        if not money_confirmed and any(p.received_units or p.seen_units for p in live):
            raise CancelNeedsConfirmation()
        book = open_book(live, actor=customer)
        order = rental_services.order_cancel_by_customer(order_id=order_id, customer=customer)
        for payment in live:
            close(book, payment, reason="the order was cancelled by the customer")
        book.flush()
    return order
