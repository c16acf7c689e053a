"""Receipt numbers have no gap and no duplicate when many customers pay at the same moment,
each on its own database connection."""

import threading
import time
from decimal import Decimal

import pytest
from django.db import connection, transaction

from payments.crypto.services.balance_payment import balance_pay_order
from payments.exceptions import InsufficientBalance
from payments.locks import lock_receipt_counter
from payments.models import Receipt, ReceiptCounter
from rental.models import Order
from tests.concurrency import run_concurrently

PAYERS, SHORT = 8, 2


def _waiting_for_the_counter() -> int:
    """Connections blocked on the receipt counter's row lock right now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # fresh, inside our transaction
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            " AND query LIKE %s",
            ['%"payments_receiptcounter"%FOR NO KEY UPDATE%'],
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_parallel_payments_get_the_numbers_1_to_n(make_customer, cheap_model, place_order, credit):
    assert connection.vendor == "postgresql"
    ReceiptCounter.objects.get_or_create(pk=1)  # (the emptied test database lost it)
    customers = [make_customer() for _ in range(PAYERS + SHORT)]
    orders = [place_order(c, cheap_model, lots=1, duration_days=3) for c in customers]
    for payer in customers[:PAYERS]:
        credit(payer, "1.00")  # the SHORT others have no balance: refused, rolled back

    entered: list[int] = []

    def pay(i):
        entered.append(i)  # past the barrier, in the service
        return balance_pay_order(order_id=orders[i].pk, customer=customers[i])

    results: list = []
    payments = threading.Thread(
        target=lambda: results.extend(run_concurrently(pay, PAYERS + SHORT))
    )
    # Hold the receipt counter while they start: no payment can take a number until every
    # one of them is in the service and the first is blocked on the counter.
    with transaction.atomic():
        lock_receipt_counter()
        payments.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            len(entered) == PAYERS + SHORT and _waiting_for_the_counter()
        ):
            time.sleep(0.05)
        all_in_flight = len(entered) == PAYERS + SHORT
        blocked_on_counter = _waiting_for_the_counter()
        issued_meanwhile = Receipt.objects.count()
    payments.join(timeout=60)

    assert all_in_flight and blocked_on_counter >= 1 and issued_meanwhile == 0
    paid = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, InsufficientBalance)]
    assert (len(paid), len(refused)) == (PAYERS, SHORT), results
    numbers = sorted(Receipt.objects.values_list("number", flat=True))
    assert numbers == list(range(1, PAYERS + 1))
    assert set(Receipt.objects.values_list("customer_id", flat=True)) == {
        c.pk for c in customers[:PAYERS]
    }
    assert all(r.amount_usd == Decimal("1.00") for r in Receipt.objects.all())
    assert ReceiptCounter.objects.get(pk=1).last_number == PAYERS
