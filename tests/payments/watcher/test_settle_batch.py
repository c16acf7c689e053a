"""A backlog of confirmations settled in one batch, on a real local chain: two settlements of
the same batch at once, on separate PostgreSQL connections, credit every payment once; the
batch logs one summary line per entity and publishes its follow-up work from the outbox rows
written in its transaction."""

import logging
import time
from decimal import Decimal

import pytest
from django.db.models import Sum

from outbox.models import OutboxEvent, OutboxMessage
from payments.chain.confirming import confirm_transfers
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentEvent,
    PaymentStatus,
    Receipt,
    TransactionKind,
    TransferStatus,
)
from tests.concurrency import run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)
PAYMENTS = 6


def _backlog(chain, top_up_payment, scan):
    """PAYMENTS top-ups paid in one block and seen, with N confirmations now: a backlog to
    settle at once (as after a watcher's downtime)."""
    payments = [top_up_payment() for _ in range(PAYMENTS)]
    chain.rpc("evm_setAutomine", [False])
    try:
        for payment in payments:
            request = chain.transfer_request(
                payment.deposit_address.address, int(payment.amount_due_units)
            )
            chain.rpc("eth_sendTransaction", [request])
        chain.rpc("evm_mine")
    finally:
        chain.rpc("evm_setAutomine", [True])
    chain.mine(1)  # the watcher reads one block behind the head
    scan()
    assert CryptoPayment.objects.filter(status=PaymentStatus.DETECTED).count() == PAYMENTS
    chain.mine(3)
    return payments


def _assert_settled_once(customer, payments):
    ids = [p.pk for p in payments]
    assert CryptoPayment.objects.filter(pk__in=ids, status=PaymentStatus.CONFIRMED).count() == (
        PAYMENTS
    )
    for kind in (TransactionKind.CRYPTO_RECEIPT, TransactionKind.TOP_UP):
        per_payment = list(
            LedgerTransaction.objects.filter(payment_id__in=ids, kind=kind)
            .values_list("payment_id", flat=True)
            .order_by("payment_id")
        )
        assert per_payment == sorted(ids), kind
    balance = customer_account(customer)
    assert balance.balance == Decimal("50.00") * PAYMENTS
    assert LedgerEntry.objects.filter(account=balance).aggregate(s=Sum("amount"))["s"] == (
        balance.balance
    )
    assert LedgerEntry.objects.aggregate(s=Sum("amount"))["s"] == 0
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    assert Receipt.objects.filter(transaction__payment_id__in=ids).count() == PAYMENTS
    assert not ChainTransfer.objects.filter(
        payment_id__in=ids, status=TransferStatus.CONFIRMED, receipted=False
    ).exists()
    confirmed_events = PaymentEvent.objects.filter(
        payment_id__in=ids, kind="status", to_status=PaymentStatus.CONFIRMED
    )
    assert confirmed_events.count() == PAYMENTS


def test_two_settlements_of_the_same_batch_at_once_credit_each_payment_once(
    chain, top_up_payment, scan, customer
):
    payments = _backlog(chain, top_up_payment, scan)

    def settle(_index):
        started = time.monotonic()
        outcome = confirm_transfers(network_key="local")
        return started, time.monotonic(), outcome

    results = run_concurrently(settle, 2, workers=2)

    assert not any(isinstance(r, Exception) for r in results), results
    # Both ran at once (each started before the other finished), on its own connection.
    assert max(s for s, _, _ in results) < min(f for _, f, _ in results), results
    # Every transfer confirmed by exactly one of them.
    assert sum(confirmed for _, _, (confirmed, _) in results) == PAYMENTS
    _assert_settled_once(customer, payments)

    # Asked again (a retry of the task): nothing left to do, nothing written.
    count = LedgerTransaction.objects.count()
    assert confirm_transfers(network_key="local") == (0, 0)
    assert LedgerTransaction.objects.count() == count
    _assert_settled_once(customer, payments)


def test_a_batch_logs_one_line_per_kind_of_work_and_leaves_its_tasks_in_the_outbox(
    chain, top_up_payment, scan, customer, caplog
):
    payments = _backlog(chain, top_up_payment, scan)
    messages_before = set(OutboxMessage.objects.values_list("pk", flat=True))
    caplog.set_level(logging.INFO)
    caplog.clear()

    assert confirm_transfers(network_key="local") == (PAYMENTS, 0)

    _assert_settled_once(customer, payments)
    ledger = [r for r in caplog.records if r.name == "payments.ledger.services.posting"]
    statuses = [r for r in caplog.records if r.name == "payments.crypto.services.status"]
    (batch,) = ledger
    assert batch.kinds == {"crypto_receipt": PAYMENTS, "top_up": PAYMENTS}
    (changes,) = statuses
    assert changes.getMessage() == f"payment batch of {PAYMENTS} changes: 6 detected -> confirmed"
    assert changes.transitions == {"detected -> confirmed": PAYMENTS}
    # The webhooks' events of the batch (balance credited, payment confirmed) were written in
    # its transaction, and their dispatch with them: nothing is lost if the process dies now.
    events = OutboxEvent.objects.filter(account=customer)
    assert events.filter(event_type="balance.credited").count() == PAYMENTS
    assert events.filter(event_type="payment.confirmed").count() == PAYMENTS
    written = OutboxMessage.objects.exclude(pk__in=messages_before)
    assert written.exists()
    assert not written.filter(published_at__isnull=True).exists()  # published after the commit
