"""The chain's confirmation racing the customer, on separate PostgreSQL connections: whoever
wins, the order is paid once or cancelled, and every unit received is on the balance or in
revenue — never twice, never nowhere."""

import time
from decimal import Decimal

import pytest
from django.db.models import Sum

from payments.chain.scanning import scan_network
from payments.crypto.services.balance_payment import balance_pay_order
from payments.crypto.services.order_payments import order_cancel
from payments.exceptions import PaymentError
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    CryptoPayment,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentStatus,
    TransactionKind,
)
from rental.exceptions import RentalError
from rental.models import Order, OrderStatus
from tests.concurrency import run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 4


def timed(work):
    """Run work(); return (started, finished, outcome) so the test can show the two overlapped."""

    def run(index):
        started = time.monotonic()
        try:
            outcome = work(index)
        except (PaymentError, RentalError) as refused:  # a refusal is an outcome, not a crash
            outcome = refused
        return started, time.monotonic(), outcome

    return run


def overlapped(results) -> bool:
    return max(started for started, _, _ in results) < min(finished for _, finished, _ in results)


def assert_ledger_whole():
    assert LedgerEntry.objects.aggregate(total=Sum("amount"))["total"] == 0
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")


def test_a_confirmation_racing_a_balance_payment_pays_the_order_once(
    chain, order_payment, pay, customer, credit
):
    credit(customer, "1000.00")
    winners = []
    for _ in range(ROUNDS):
        payment = order_payment()
        pay(payment)
        chain.mine(3)  # confirmed on chain; the next scan settles it

        results = run_concurrently(
            timed(
                lambda i, p=payment: (
                    scan_network(network_key="local")
                    if i == 0
                    else balance_pay_order(order_id=p.order_id, customer=customer)
                )
            ),
            2,
            workers=2,
        )

        assert overlapped(results), results
        assert not any(isinstance(outcome, Exception) for _, _, outcome in results), results
        order = Order.objects.get(pk=payment.order_id)
        assert order.status == OrderStatus.PROVISIONING
        assert (
            LedgerTransaction.objects.filter(
                order=order, kind=TransactionKind.ORDER_PAYMENT
            ).count()
            == 1
        )
        # The chain won (the balance was not charged) or the balance won (the crypto payment
        # closed and its money came back to the balance): the balance is the same either way.
        winners.append(CryptoPayment.objects.get(pk=payment.pk).status)
        assert customer_account(customer).balance == Decimal("1000.00")
        assert_ledger_whole()
    assert set(winners) <= {PaymentStatus.CONFIRMED, PaymentStatus.CLOSED}
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60") * ROUNDS


def test_a_confirmation_racing_a_cancellation_never_keeps_both(chain, order_payment, pay, customer):
    credited = Decimal("0.00")
    for _ in range(ROUNDS):
        payment = order_payment()
        pay(payment)
        chain.mine(3)

        results = run_concurrently(
            timed(
                lambda i, p=payment: (
                    scan_network(network_key="local")
                    if i == 0
                    else order_cancel(order_id=p.order_id, customer=customer, money_confirmed=True)
                )
            ),
            2,
            workers=2,
        )

        assert overlapped(results), results
        order = Order.objects.get(pk=payment.order_id)
        paid = CryptoPayment.objects.get(pk=payment.pk)
        if order.status == OrderStatus.CANCELLED:
            # Cancelled first: the payment closed, its money went to the balance.
            assert paid.status == PaymentStatus.CLOSED
            credited += Decimal("201.60")
        else:
            # Paid first: the cancellation was refused with its message, nothing credited.
            assert order.status == OrderStatus.PROVISIONING
            assert paid.status == PaymentStatus.CONFIRMED
            refused = results[1][2]
            assert isinstance(refused, RentalError), results
        assert customer_account(customer).balance == credited
        assert_ledger_whole()
