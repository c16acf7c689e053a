"""Ending an order early with its refund: the hours not delivered go back to the customer's
balance (rental.refunds has the rule and the one rounding).

One transaction: the order's payment mutex, the customer's balance and revenue accounts, then
rental ends the order (its intent locks the order row, checks the case, releases the cards),
then the refund is posted: revenue −x, the customer's balance +x, kind REFUND with the order
and the acting operator, idempotency key `refund:order:<id>`; the database allows one refund
per order (ledgertransaction_one_refund_per_order). The ledger's own `balance.credited` event,
the order's `order.ended` event and the receipt are written with it; the customer's "ended"
email, which tells the hours refunded, the amount, the reason and the balance, goes after the
commit (rental.services.early_end).
"""

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import User
from rental import services as rental_services
from rental.models import Order
from rental.refunds import EarlyEndCase

from ...exceptions import PaymentError
from ...locks import lock_accounts, lock_order_for_payment_changes
from ...models import LedgerAccountKind, LedgerTransaction, TransactionKind
from ..selectors.refunds import capped_to_revenue
from .posting import customer_accounts, ledger_post, system_account


class RefundQuoteChanged(PaymentError):
    """The refund is no longer the amount the operator confirmed (an hour went by)."""

    def __init__(self, *, hours: int, amount: Decimal):
        self.hours, self.amount = hours, amount
        super().__init__(
            gettext(
                "The refund changed since the page was shown: now %(hours)d hours, "
                "%(amount)s USD. Nothing was done; check it and confirm again."
            )
            % {"hours": hours, "amount": amount}
        )


class OrderNotEndable(PaymentError):
    def __init__(self, order: Order):
        super().__init__(
            gettext("This order can no longer be ended early: it is %(status)s. Nothing was done.")
            % {"status": order.get_status_display().lower()}
        )


# The journal's memos are written in English, like every memo.
MEMO_CASES = {
    EarlyEndCase.WAITING_FOR_CARDS: "no cards in time",
    EarlyEndCase.HOST_FAILED: "host failed",
}


@dataclass(frozen=True, slots=True)
class RefundOutcome:
    order: Order
    refund: LedgerTransaction | None  # None when the hours were worth less than a cent
    hours: int
    amount: Decimal
    created: bool  # False: the order had been ended early already (a repeated click)


def _refund_of(order_id: int) -> LedgerTransaction | None:
    return LedgerTransaction.objects.filter(order_id=order_id, kind=TransactionKind.REFUND).first()


def _already_done(order_id: int, refund: LedgerTransaction | None) -> RefundOutcome:
    from rental.refunds import early_end_summary

    order = Order.objects.get(pk=order_id)
    summary = early_end_summary(order)
    amount = summary.amount if summary else Decimal("0.00")
    if refund is not None:  # what was credited: the positive entry, the customer's
        amount = refund.entries.filter(amount__gt=0).values_list("amount", flat=True).get()
    return RefundOutcome(
        order=order,
        refund=refund,
        hours=summary.hours if summary else 0,
        amount=amount,
        created=False,
    )


def order_end_early_with_refund(
    *,
    order_id: int,
    actor: User,
    reason: str,
    host_failed: bool = False,
    expected_amount: Decimal | None = None,
    now: datetime | None = None,
) -> RefundOutcome:
    """End the order early and credit the hours not delivered to its customer's balance.

    `host_failed` is the operator's statement that the order's host failed (needed for an
    active order, and a provisioning one that has not waited EARLY_END_WAITING_HOURS);
    `expected_amount` is the refund the operator saw and confirmed: when the refund at `now`
    differs, RefundQuoteChanged and nothing is done. Raises rental's EarlyEndRefused when the
    order is not eligible, OrderNotEndable when it had moved on (ended, cancelled),
    Order.DoesNotExist for an unknown id.

    Repeated or concurrent calls post once: the order's payment mutex makes them wait for each
    other, and the later ones find the order ended early (created=False). Locks, in the order
    of payments.locks: the mutex (0), the balance and revenue accounts (4), the order (5).
    """
    reason = reason.strip()
    if not reason:
        raise ValueError("ending an order early needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=order_id)
        customer_id = Order.objects.filter(pk=order_id).values_list("customer_id", flat=True)
        customer_id = customer_id.first()
        if customer_id is None:
            raise Order.DoesNotExist()
        balance = customer_accounts([customer_id])[customer_id]
        revenue = system_account(LedgerAccountKind.REVENUE)
        lock_accounts([balance, revenue])
        done = _refund_of(order_id)
        if done is not None:
            return _already_done(order_id, done)
        order = rental_services.order_end_early(
            order_id=order_id, actor=actor, reason=reason, now=now, host_failed=host_failed
        )
        if order is None:
            current = Order.objects.get(pk=order_id)
            if current.ended_early_at is not None:
                return _already_done(order_id, None)
            raise OrderNotEndable(current)
        # Never more than the revenue booked: an operator may have accepted less than the
        # total on an underpaid payment.
        check = capped_to_revenue(order.early_end, order_id=order.pk)
        quote = check.quote
        if expected_amount is not None and quote.amount != expected_amount:
            raise RefundQuoteChanged(hours=quote.hours, amount=quote.amount)
        refund = None
        if quote.amount > 0:
            case = MEMO_CASES[check.case]
            refund, _ = ledger_post(
                kind=TransactionKind.REFUND,
                lines=[(balance, quote.amount), (revenue, -quote.amount)],
                memo=(
                    f"Order {order.reference} ended early ({case}): {quote.hours} hours not "
                    f"delivered credited back. {reason}"
                ),
                idempotency_key=f"refund:order:{order.pk}",
                actor=actor,
                order=order,
            )
    return RefundOutcome(
        order=order, refund=refund, hours=quote.hours, amount=quote.amount, created=True
    )
