"""Paying an order from the customer's USD balance: the order's crypto payments close (money
already on them goes to the balance), so this belongs to the crypto room, over the ledger."""

from django.db import transaction

from accounts.models import User
from rental import services as rental_services
from rental.models import Order, OrderStatus

from ...exceptions import InsufficientBalance, OrderNotPayable
from ...ledger.services.posting import ledger_post
from ...locks import lock_order_for_payment_changes, lock_order_payments
from ...models import LedgerAccount, LedgerTransaction, TransactionKind
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
