"""An order ended early as its customer and the operators see it: rental's summary (when, the
hours, the reason) with the amount the ledger credited."""

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db.models import Sum

from rental.models import Order
from rental.refunds import early_end_check, early_end_summary

from ...models import LedgerAccountKind, LedgerEntry, TransactionKind


@dataclass(frozen=True, slots=True)
class OrderRefund:
    ended_at: datetime
    hours: int
    amount: Decimal  # credited to the customer's balance (0.00 when worth less than a cent)
    reason: str
    actor_email: str


def order_refund(*, order: Order) -> OrderRefund | None:
    """The refund of an order ended early (None for any other order): two queries."""
    summary = early_end_summary(order)
    if summary is None:
        return None
    credited = (
        LedgerEntry.objects.filter(
            transaction__order_id=order.pk,
            transaction__kind=TransactionKind.REFUND,
            account__kind=LedgerAccountKind.CUSTOMER_BALANCE,
        )
        .values_list("amount", flat=True)
        .first()
    )
    return OrderRefund(
        ended_at=summary.ended_at,
        hours=summary.hours,
        amount=credited if credited is not None else Decimal("0.00"),
        reason=summary.reason,
        actor_email=summary.actor_email,
    )


def revenue_booked(*, order_id: int) -> Decimal:
    """What the ledger booked as revenue for the order: its payment and its extensions' (an
    operator may have accepted less than the total on an underpaid payment). A refund never
    gives back more than this (one query)."""
    total = LedgerEntry.objects.filter(
        transaction__order_id=order_id,
        transaction__kind__in=(TransactionKind.ORDER_PAYMENT, TransactionKind.EXTENSION_PAYMENT),
        account__kind=LedgerAccountKind.REVENUE,
    ).aggregate(total=Sum("amount"))["total"]
    return total or Decimal("0.00")


def capped_to_revenue(check, *, order_id: int):
    """The early-end check with its refund capped at the revenue booked for the order (the
    operators' page and the service show and post the same amount)."""
    if check is None or check.quote is None:
        return check
    cap = revenue_booked(order_id=order_id)
    if check.quote.amount <= cap:
        return check
    return dataclasses.replace(check, quote=dataclasses.replace(check.quote, amount=cap))


def end_early_check(order: Order, now: datetime):
    """Whether the operators may end the order early now, in which case, and the refund they
    would post: rental's check with its amount capped at the revenue booked (the one view of
    it for the ops page, its form and the form's page)."""
    return capped_to_revenue(early_end_check(order, now), order_id=order.pk)
