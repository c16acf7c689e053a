"""The customer's USD balance: paying an order from it, and finance adjustments."""

from decimal import Decimal

from django.db import transaction

from accounts.models import User
from rental import services as rental_services
from rental.models import Order, OrderStatus

from ..exceptions import InsufficientBalance, OrderNotPayable
from ..locks import lock_order_for_payment_changes, lock_order_payments
from ..models import LedgerAccount, LedgerAccountKind, LedgerTransaction, TransactionKind
from .ledger import customer_account, ledger_post, system_account
from .settling import close, open_book


def balance_pay_order(*, order_id: int, customer: User) -> Order:
    """Pay the whole order from the customer's balance, in one database transaction.

    Locks the order's open crypto payments, then the balance and revenue accounts (pk order),
    then rental marks the order paid if it still awaits payment; debits the customer, credits
    revenue, closes the open crypto payments (money already on them goes to the balance) and
    queues what follows after the commit. Idempotent per order: a double click, a second tab
    or a replayed request finds the order paid by its one payment transaction.

    Raises Order.DoesNotExist for another customer's order, InsufficientBalance when the
    balance does not cover the whole total (no partial payment) and OrderNotPayable when the
    order has moved on otherwise (cancelled...).
    """
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=order_id)
        live = lock_order_payments(order_id=order_id)
        order = Order.objects.filter(pk=order_id, customer=customer).first()
        if order is None or any(payment.customer_id != customer.pk for payment in live):
            raise Order.DoesNotExist()
        book = open_book(live, actor=customer, customer_ids=[customer.pk])
        balance = book.accounts.customers[customer.pk]
        if order.status == OrderStatus.AWAITING_PAYMENT:
            available = LedgerAccount.objects.get(pk=balance.pk).balance
            if available < order.total_usd:
                raise InsufficientBalance(available=available, required=order.total_usd)
        if not rental_services.order_pay(
            order_id=order.pk,
            actor=customer,
            reason="Paid from the USD balance",
            customer=customer,
            statuses=(OrderStatus.AWAITING_PAYMENT,),
        ):
            if LedgerTransaction.objects.filter(
                order=order, kind=TransactionKind.ORDER_PAYMENT
            ).exists():
                return order
            raise OrderNotPayable()
        ledger_post(
            kind=TransactionKind.ORDER_PAYMENT,
            lines=[(balance, -order.total_usd), (book.accounts.revenue, order.total_usd)],
            memo=f"Order {order.reference} paid from the USD balance",
            idempotency_key=f"order-payment:{order.pk}",
            actor=customer,
            order=order,
        )
        for payment in live:
            close(book, payment, reason="the order was paid from the USD balance")
        book.flush()
    return Order.objects.get(pk=order.pk)


def balance_shortfall(*, customer: User, amount: Decimal) -> Decimal:
    """How much the balance lacks to cover `amount` (zero when it covers it)."""
    available = customer_account(customer).balance
    return max(amount - available, Decimal("0.00"))


def balance_adjust(
    *,
    customer: User,
    amount: Decimal,
    credit: bool,
    reason: str,
    actor: User,
    request_key: str,
) -> LedgerTransaction:
    """Finance credits or debits a customer's balance, with a mandatory reason.

    `amount` is positive; a debit never takes the balance below zero (InsufficientBalance).
    `request_key` makes a resubmitted form post one adjustment.
    """
    if amount <= 0:
        raise ValueError("adjustment amounts are positive; choose credit or debit")
    if not reason.strip():
        raise ValueError("an adjustment needs a reason")
    signed = amount if credit else -amount
    with transaction.atomic():  # a refused debit leaves not even an empty account behind
        balance = customer_account(customer)
        adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
        posted, _ = ledger_post(
            kind=TransactionKind.ADJUSTMENT,
            lines=[(balance, signed), (adjustments, -signed)],
            memo=reason.strip(),
            idempotency_key=f"adjustment:{request_key}",
            actor=actor,
        )
    return posted
