"""The on-chain check through the real Celery path: a worker process on Redis (not eager),
the test database and the test anvil; the beat's sweep queues the check of every sent
withdrawal, and the worker marks the one whose transfer has its confirmations paid."""

from decimal import Decimal

import pytest

from payments.chain import local
from payments.chain.local import PAYER_KEY
from payments.models import Withdrawal, WithdrawalStatus
from payments.withdrawals.services import withdrawal_approve, withdrawal_enter_hash
from tests.payments.worker.conftest import wait_until, workers  # noqa: F401

from .conftest import CUSTOMER_WALLET, balance_of, paid_total, pending_total

pytestmark = pytest.mark.django_db(transaction=True)


def status_of(withdrawal) -> str:
    return Withdrawal.objects.values_list("status", flat=True).get(pk=withdrawal.pk)


def test_the_worker_pays_a_confirmed_withdrawal(chain, workers, request_withdrawal, finance_user):  # noqa: F811
    withdrawal = request_withdrawal("15.00")
    withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    tx_hash = local.transfer(chain.w3, chain.token_address, PAYER_KEY, CUSTOMER_WALLET, 15_000_000)
    # Entered in this process: its check runs here at once (tasks are eager outside a worker)
    # and finds one confirmation of three.
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash)
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "1 of 3 confirmations"
    chain.mine(2)
    worker = workers.start()

    worker.wait_for_task(workers.send("payments.tasks.withdrawals_check_sent"))

    wait_until(
        lambda: status_of(withdrawal) == WithdrawalStatus.PAID,
        what=f"withdrawal {withdrawal.pk} paid by the worker",
        harness=workers,
    )
    assert "payments.tasks.withdrawal_check" in worker.log()
    withdrawal.refresh_from_db()
    assert withdrawal.check_detail == "paid with 3 confirmations (3 required)"
    assert balance_of(withdrawal.customer) == Decimal("85.00")
    assert pending_total() == Decimal("0.00")
    assert paid_total() == Decimal("15.00")
    # The same task again (a redelivery) changes nothing.
    worker.wait_for_task(workers.send("payments.tasks.withdrawal_check", [withdrawal.pk]))
    assert paid_total() == Decimal("15.00")
