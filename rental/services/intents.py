"""What the payments app asks of an order: its intents.

Payments never locks or writes an Order row and never chooses a transition: it says what
happened to the money and calls one of these. Each locks the order itself (after the payment
and ledger locks its caller holds: see payments.locks), decides from the order's current status,
and changes nothing when the order has already moved on — it returns False (or raises, for the
one the customer asks for directly), so a late or repeated call is harmless.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User

from ..exceptions import OrderNotAwaitingPayment
from ..locks import lock_order
from ..models import Order, OrderStatus
from .orders import order_mark_paid, order_set_status

logger = logging.getLogger(__name__)

# Statuses from which money that settles the order makes it paid.
PAYABLE_STATUSES = frozenset({OrderStatus.AWAITING_PAYMENT, OrderStatus.PAYMENT_REVIEW})


def _locked(order_id: int, customer: User | None = None) -> Order:
    return lock_order(order_id, customer=customer)


def hold_deadline(now=None):
    return (now or timezone.now()) + timedelta(minutes=settings.ORDER_HOLD_MINUTES)


def order_hold_for_payment(*, order_id: int, customer: User) -> Order:
    """A crypto payment is being opened for the customer's order: the payment now holds its
    lots (until the payment's expiry, which releases them through `order_release_unpaid`).

    Raises Order.DoesNotExist for another customer's order and OrderNotAwaitingPayment once
    the order has moved on.
    """
    with transaction.atomic():
        order = _locked(order_id, customer)
        if order.status != OrderStatus.AWAITING_PAYMENT:
            raise OrderNotAwaitingPayment()
        if order.hold_until is not None:
            order.hold_until = None
            order.save(update_fields=["hold_until", "updated_at"])
    return order


def order_release_unpaid(*, order_id: int, actor: User | None, reason: str) -> bool:
    """Release an unpaid order's lots (it is cancelled): its payment expired with nothing
    received. False when the order is no longer awaiting payment."""
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.AWAITING_PAYMENT:
            return False
        order_set_status(
            order_id=order.pk, to_status=OrderStatus.CANCELLED, actor=actor, reason=reason
        )
    return True


def order_send_to_review(*, order_id: int, reason: str) -> bool:
    """Money arrived that the watcher cannot settle alone: operators review the order's payment.
    False when the order is no longer awaiting payment (paid, cancelled, already in review)."""
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.AWAITING_PAYMENT:
            return False
        order_set_status(
            order_id=order.pk, to_status=OrderStatus.PAYMENT_REVIEW, actor=None, reason=reason
        )
    return True


def order_pay(
    *,
    order_id: int,
    actor: User | None,
    reason: str,
    customer: User | None = None,
    statuses=PAYABLE_STATUSES,
) -> bool:
    """The money for the order is settled: mark it paid (and allocate its cards) if it is
    still awaiting payment or under payment review (or only in `statuses`). False when it has
    moved on (paid another way, cancelled): the caller then credits the money to the balance.

    With `customer`, only that customer's order (Order.DoesNotExist otherwise).
    """
    with transaction.atomic():
        order = _locked(order_id, customer)
        if order.status not in statuses or order.status not in PAYABLE_STATUSES:
            return False
        order_mark_paid(order_id=order.pk, actor=actor, reason=reason)
    return True


def order_back_to_awaiting(*, order_id: int, actor: User | None, reason: str) -> bool:
    """Operators credited the money under review to the balance: the order awaits payment
    again, holding its lots for ORDER_HOLD_MINUTES. False unless it was under review."""
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.PAYMENT_REVIEW:
            return False
        order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.AWAITING_PAYMENT,
            actor=actor,
            reason=reason,
            hold_until=hold_deadline(),
        )
    return True


def order_cancel_in_review(*, order_id: int, actor: User | None, reason: str) -> bool:
    """Operators found the payment under review void: the order is cancelled, its lots
    released. False unless it was under review."""
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.PAYMENT_REVIEW:
            return False
        order_set_status(
            order_id=order.pk, to_status=OrderStatus.CANCELLED, actor=actor, reason=reason
        )
    return True


def orders_release_expired_holds(*, now: datetime | None = None) -> list[int]:
    """Release the lots of every order whose hold ran out with no payment opened (it is
    cancelled); the ids of those released. Run by the minute tick, safe to run twice.

    An order a live crypto payment holds has no `hold_until` and is left alone: the payment's
    expiry releases it. One order that fails is logged and skipped: it never stops the others.
    """
    now = now or timezone.now()
    due = (
        Order.objects.filter(status=OrderStatus.AWAITING_PAYMENT, hold_until__lt=now)
        .order_by("hold_until", "pk")
        .values_list("pk", flat=True)
    )
    released = []
    for order_id in due:
        try:
            if order_release_expired_hold(order_id=order_id, now=now):
                released.append(order_id)
        except Exception:
            logger.exception("order %s: its expired hold could not be released", order_id)
    return released


def order_release_expired_hold(*, order_id: int, now: datetime) -> bool:
    """Cancel one order whose hold ran out by `now`, checked again under its row lock: False
    when it was paid, cancelled, or a payment took over its hold meanwhile."""
    with transaction.atomic():
        order = _locked(order_id)
        if (
            order.status != OrderStatus.AWAITING_PAYMENT
            or order.hold_until is None
            or order.hold_until >= now
        ):
            return False
        order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.CANCELLED,
            actor=None,
            reason=f"Lots held for {settings.ORDER_HOLD_MINUTES} minutes without a payment",
        )
    return True
