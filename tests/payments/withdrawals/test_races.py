"""Parallel requests on separate database connections: they never take more than the balance,
and one form sent twice at once makes one withdrawal."""

import threading
from decimal import Decimal
from uuid import uuid4

import pytest

from payments.models import LedgerTransaction, TransactionKind, Withdrawal
from payments.withdrawals import services as service
from tests.concurrency import run_concurrently

from .conftest import CUSTOMER_WALLET, balance_of, pending_total

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("local_network")]


def _racing(customer, keys, amount):
    """Each worker calls the service with its key; records that it got there."""
    reached = []
    lock = threading.Lock()

    def work(index):
        with lock:
            reached.append(index)
        return service.withdrawal_request(
            customer=customer,
            amount_usd=Decimal(amount),
            network="local",
            asset="tUSDC",
            to_address=CUSTOMER_WALLET,
            request_key=keys[index],
        )

    return work, reached


def test_two_requests_that_together_exceed_the_balance_take_it_once(funded):
    work, reached = _racing(funded, [str(uuid4()), str(uuid4())], "60.00")

    outcomes = run_concurrently(work, 2)

    assert sorted(reached) == [0, 1]  # both ran the service, at the same time (a barrier)
    made = [o for o in outcomes if isinstance(o, Withdrawal)]
    refused = [o for o in outcomes if isinstance(o, service.WithdrawalAmountError)]
    assert len(made) == 1 and len(refused) == 1, outcomes
    assert "Your balance is 40.00 USD" in str(refused[0].message)
    assert balance_of(funded) == Decimal("40.00")
    assert pending_total() == Decimal("60.00")
    assert Withdrawal.objects.count() == 1


def test_many_requests_never_take_the_balance_below_zero(funded):
    work, reached = _racing(funded, [str(uuid4()) for _ in range(8)], "30.00")

    outcomes = run_concurrently(work, 8, workers=8)

    assert sorted(reached) == list(range(8))
    made = [o for o in outcomes if isinstance(o, Withdrawal)]
    assert len(made) == 3, outcomes
    assert all(isinstance(o, (Withdrawal, service.WithdrawalAmountError)) for o in outcomes)
    assert balance_of(funded) == Decimal("10.00")
    assert pending_total() == Decimal("90.00")
    assert LedgerTransaction.objects.filter(kind=TransactionKind.WITHDRAWAL_REQUEST).count() == 3


def test_one_form_sent_twice_at_once_makes_one_withdrawal(funded):
    key = str(uuid4())
    work, reached = _racing(funded, [key, key], "25.00")

    outcomes = run_concurrently(work, 2)

    assert sorted(reached) == [0, 1]
    assert all(isinstance(o, Withdrawal) for o in outcomes), outcomes
    assert outcomes[0].pk == outcomes[1].pk
    assert Withdrawal.objects.count() == 1
    assert balance_of(funded) == Decimal("75.00")
