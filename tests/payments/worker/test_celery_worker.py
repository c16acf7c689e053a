"""A real Celery worker process (Redis broker, not eager) confirms crypto top-ups on the test
database and a real anvil chain; killed in the middle of a confirmation, it credits nothing,
and the restarted worker credits the money once."""

from decimal import Decimal

import psycopg
import pytest
from django.db import connection

from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentStatus,
    TransactionKind,
    TransferStatus,
)
from tests.celery_worker import tcp_socket_owner

from .conftest import pay_and_confirm_on_chain, wait_until

SCAN = "payments.tasks.scan_network"

pytestmark = pytest.mark.django_db(transaction=True)


def status_of(payment: CryptoPayment) -> str:
    return CryptoPayment.objects.values_list("status", flat=True).get(pk=payment.pk)


def receipts_of(payment: CryptoPayment):
    return LedgerTransaction.objects.filter(payment=payment, kind=TransactionKind.CRYPTO_RECEIPT)


def assert_credited_once(payment: CryptoPayment) -> None:
    assert status_of(payment) == PaymentStatus.CONFIRMED
    assert customer_account(payment.customer).balance == Decimal("50.00")
    assert receipts_of(payment).count() == 1
    assert (
        LedgerTransaction.objects.filter(payment=payment, kind=TransactionKind.TOP_UP).count() == 1
    )
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")


def test_the_worker_confirms_a_paid_top_up(chain, top_up, workers):
    pay_and_confirm_on_chain(chain, top_up)
    worker = workers.start()

    task_id = workers.send(SCAN, ["local"])

    wait_until(
        lambda: status_of(top_up) == PaymentStatus.CONFIRMED,
        what=f"payment {top_up.pk} confirmed by the worker",
        harness=workers,
    )
    worker.wait_for_task(task_id)
    assert_credited_once(top_up)
    transfer = ChainTransfer.objects.get(payment=top_up)
    assert transfer.status == TransferStatus.CONFIRMED
    assert transfer.amount_units == top_up.amount_due_units


BLOCKED_BACKEND = """
    SELECT a.pid, a.client_port, a.query, a.xact_start IS NOT NULL AS in_transaction
    FROM pg_stat_activity a
    WHERE a.application_name = %s
      AND a.wait_event_type = 'Lock'
      AND %s = ANY(pg_blocking_pids(a.pid))
"""


def blocked_backend(application_name: str, holder_pid: int):
    """The worker's backend waiting for a lock that `holder_pid` holds, or None."""
    with connection.cursor() as cursor:
        cursor.execute(BLOCKED_BACKEND, [application_name, holder_pid])
        return cursor.fetchone()


def backends_of(application_name: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", [application_name]
        )
        return [pid for (pid,) in cursor.fetchall()]


def row_is_locked(side_connection, model, **where) -> bool:
    """Whether another transaction holds a row lock on the row (FOR UPDATE NOWAIT fails)."""
    conn = side_connection("worker-test-probe")
    ((column, value),) = where.items()
    try:
        conn.execute(
            f"SELECT 1 FROM {model._meta.db_table} WHERE {column} = %s FOR UPDATE NOWAIT",
            [value],
        )
    except psycopg.errors.LockNotAvailable:
        return True
    finally:
        conn.rollback()
    return False


def test_a_worker_killed_mid_confirmation_credits_once_after_a_restart(
    chain, top_up, workers, side_connection
):
    unallocated = system_account(LedgerAccountKind.UNALLOCATED)
    customer_account(top_up.customer)
    # A short visibility timeout: the broker gives an unacknowledged task to a worker again
    # 5 s after it was delivered (acks_late: a task is acknowledged once it has run).
    first = workers.start(visibility_timeout=5)

    # The worker sees the transfer first, one confirmation short (its scan stores it).
    assert top_up.confirmations_required >= 3
    chain.transfer(top_up.deposit_address.address, int(top_up.amount_due_units))
    chain.mine(1)  # the watcher reads one block behind the head
    first.wait_for_task(workers.send(SCAN, ["local"]))
    assert ChainTransfer.objects.get(payment=top_up).status == TransferStatus.SEEN
    seen_status = status_of(top_up)
    assert seen_status != PaymentStatus.CONFIRMED
    chain.mine(top_up.confirmations_required)

    # The test holds the row lock of the receipts awaiting allocation: the confirmation, which
    # locks the ledger accounts before it posts, waits there inside its transaction.
    holder = side_connection("worker-test-lock-holder")
    holder.execute(
        f"SELECT id FROM {LedgerAccount._meta.db_table} WHERE id = %s FOR UPDATE",
        [unallocated.pk],
    )
    holder_pid = holder.info.backend_pid
    task_id = workers.send(SCAN, ["local"])

    pid, client_port, query, in_transaction = wait_until(
        lambda: blocked_backend(first.application_name, holder_pid),
        what="the worker's backend waiting on the ledger account's row lock",
        harness=workers,
    )
    # Proof that the worker is in the middle of the confirmation: its backend waits, in a
    # transaction, on the ledger accounts' FOR UPDATE, with the payment and the transfer locked
    # already; from outside, the transfer is still seen and nothing is posted.
    assert in_transaction
    assert LedgerAccount._meta.db_table in query and "FOR NO KEY UPDATE" in query, query
    assert row_is_locked(side_connection, CryptoPayment, id=top_up.pk)
    assert row_is_locked(side_connection, ChainTransfer, payment_id=top_up.pk)
    assert ChainTransfer.objects.get(payment=top_up).status == TransferStatus.SEEN
    assert not receipts_of(top_up).exists()
    # The process on the other end of that connection is the worker (solo pool: no child).
    candidates = [first.pid, *first.descendants()]
    if client_port and client_port > 0:  # TCP; a Unix socket has no port to trace
        assert tcp_socket_owner(client_port, candidates) == first.pid

    first.kill()
    assert first.process.returncode == -9

    # The orphaned backend gets the lock, finds its client gone and rolls back.
    holder.rollback()
    wait_until(
        lambda: not backends_of(first.application_name),
        what="the killed worker's backend ended",
        harness=workers,
    )
    assert ChainTransfer.objects.get(payment=top_up).status == TransferStatus.SEEN
    assert status_of(top_up) == seen_status
    assert not receipts_of(top_up).exists()
    assert customer_account(top_up.customer).balance == Decimal("0.00")

    # A fresh worker gets the unacknowledged task again from the broker and confirms.
    second = workers.start(visibility_timeout=5)
    wait_until(
        lambda: status_of(top_up) == PaymentStatus.CONFIRMED,
        what=f"payment {top_up.pk} confirmed by the restarted worker",
        harness=workers,
    )
    second.wait_for_task(task_id)  # the very task the killed worker had
    assert_credited_once(top_up)

    # One more scan finds nothing more to credit.
    again = workers.send(SCAN, ["local"])
    second.wait_for_task(again)
    assert_credited_once(top_up)
