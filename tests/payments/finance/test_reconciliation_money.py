"""Reconciliation of the money: the ledger's receipts against the chain, the receipts awaiting
allocation against the payments, and money left unallocated where nobody will act on it.

On anvil with the watcher's fixtures where the chain matters; otherwise transfers written with
the ORM (tests/payments/crypto_ui/conftest.py `transfer`), some deliberately left unsettled.
"""

from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from payments.chain.confirming import transfers_reversed
from payments.crypto.services.payments import payment_create_top_up
from payments.crypto.services.review import payment_write_off_reversed
from payments.crypto.services.settling import settle
from payments.finance.services import reconciliation_run
from payments.ledger.services.posting import ledger_post, system_account
from payments.locks import lock_payments_with_siblings
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from rental.models import Order, OrderStatus
from tests.payments.crypto_ui.conftest import SENDER, tx_hash
from tests.payments.watcher.conftest import units
from tests.states import payment_expire_now, payment_walk

MONEY_CHECKS = (
    "receipts_vs_chain",
    "transfer_not_in_ledger",
    "reversed_in_ledger",
    "unallocated_vs_payments",
    "stranded",
)


def run_today():
    today = timezone.now().date()
    return reconciliation_run(period_start=today, period_end=today)


def of_check(run, check) -> list[dict]:
    return [row for d in run.discrepancies if d["check"] == check for row in d["rows"]]


def checks_of(run) -> list[str]:
    return [d["check"] for d in run.discrepancies]


def receipts_account():
    return system_account(LedgerAccountKind.CRYPTO_RECEIPTS, asset="tUSDC", network="local")


def reload(payment) -> CryptoPayment:
    return CryptoPayment.objects.get(pk=payment.pk)


@pytest.fixture
def top_up(local_network, customer):
    def make(amount="50.00", who=None) -> CryptoPayment:
        return payment_create_top_up(
            customer=who or customer,
            amount_usd=Decimal(amount),
            network_key="local",
            asset_symbol="tUSDC",
        )

    return make


def unsettled_confirmed_transfer(payment, units_: int) -> ChainTransfer:
    """A confirmed transfer as the watcher stores it, whose settlement never ran: the chain has
    the money, the ledger does not."""
    return ChainTransfer.objects.create(
        network=payment.network,
        chain_id=payment.chain_id,
        tx_hash=tx_hash(),
        log_index=0,
        block_number=100,
        block_hash=tx_hash(),
        block_timestamp=timezone.now(),
        token_address=payment.token_address,
        from_address=SENDER,
        to_address=payment.deposit_address.address,
        amount_units=units_,
        payment=payment,
        status=TransferStatus.CONFIRMED,
        confirmed_at=timezone.now(),
    )


# ------------------------------------------------------------------ on the local chain


@pytest.fixture
def split_below_the_cent(chain, order_payment, pay, scan):
    """The 201.60 order paid in two transfers that each end below the cent: 100.005000 and
    101.595000 tUSDC (rounded down one by one they make 201.59)."""
    payment = order_payment()
    assert payment.amount_due_usd == Decimal("201.60")
    pay(payment, units("100.005"))
    pay(payment, units("101.595"))
    chain.mine(3)
    scan()
    return reload(payment)


def test_a_payment_split_below_the_cent_is_booked_whole_and_reconciles(split_below_the_cent):
    payment = split_below_the_cent

    assert payment.status == PaymentStatus.CONFIRMED
    assert payment.received_units == units("201.60")
    assert Order.objects.get(pk=payment.order_id).status in (
        OrderStatus.PAID,
        OrderStatus.PROVISIONING,
    )
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60")
    assert receipts_account().balance == Decimal("-201.60")
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    run = run_today()
    assert run.ok, run.discrepancies
    assert run.discrepancies == []


def test_a_ledger_a_cent_below_the_chain_is_flagged(split_below_the_cent):
    """What rounding each transfer on its own left behind: the ledger's receipts at 201.59
    for 201.60 confirmed on chain. The reconciliation used to say OK."""
    ledger_post(
        kind=TransactionKind.ADJUSTMENT,
        lines=[
            (receipts_account(), Decimal("0.01")),
            (system_account("adjustments"), Decimal("-0.01")),
        ],
        memo="the cent the old per-transfer rounding dropped",
        idempotency_key="test-lost-cent",
    )

    run = run_today()

    assert run.ok is False
    assert of_check(run, "receipts_vs_chain") == [
        {
            "network": "local",
            "asset": "tUSDC",
            "ledger": "201.59",
            "chain": "201.60",
            "difference": "-0.01",
        }
    ]
    assert checks_of(run) == ["receipts_vs_chain"]
    assert "201.59" in run.discrepancies[0]["detail"]


def test_a_reversal_on_chain_is_flagged_until_it_is_written_off(split_below_the_cent, finance_user):
    payment = split_below_the_cent
    first = ChainTransfer.objects.filter(payment=payment).order_by("pk").first()
    assert first.amount_units == units("100.005")

    transfers_reversed(transfer_ids=[first.pk])

    run = run_today()
    assert run.ok is False
    # The ledger keeps the 201.60 received; the chain now confirms 101.595 of it.
    assert of_check(run, "receipts_vs_chain") == [
        {
            "network": "local",
            "asset": "tUSDC",
            "ledger": "201.60",
            "chain": "101.59",
            "difference": "100.01",
        }
    ]
    assert of_check(run, "reversed_in_ledger") == [
        {
            "transfer_id": first.pk,
            "network": "local",
            "asset": "tUSDC",
            "tx_hash": first.tx_hash,
            "log_index": first.log_index,
            "status": "reversed",
            "units": str(units("100.005")),
            "amount": "100.00",
            "payment_id": payment.pk,
            "payment_reference": payment.reference,
        }
    ]
    assert checks_of(run) == ["receipts_vs_chain", "reversed_in_ledger"]

    payment_write_off_reversed(payment_id=payment.pk, actor=finance_user, reason="reorg 4711")

    assert receipts_account().balance == Decimal("-101.59")
    after = run_today()
    assert after.ok, after.discrepancies


# ------------------------------------------------------------------ without a chain


def test_each_payment_is_rounded_on_its_own_total(top_up, transfer):
    """Two payments 10.005 each: 20.00 in the ledger (10.00 each), not 20.01."""
    for _ in range(2):
        payment = top_up("20.00")
        transfer(payment, units=units("10.005"), status=TransferStatus.CONFIRMED)

    assert receipts_account().balance == Decimal("-20.00")
    run = run_today()
    assert run.ok, run.discrepancies


def test_a_confirmed_transfer_missing_from_the_ledger_is_flagged(top_up, transfer):
    booked = top_up("20.00")
    transfer(booked, units=units("5.00"), status=TransferStatus.CONFIRMED)
    payment = top_up("30.00")
    row = unsettled_confirmed_transfer(payment, units("30.00"))

    run = run_today()

    assert run.ok is False
    assert of_check(run, "receipts_vs_chain") == [
        {
            "network": "local",
            "asset": "tUSDC",
            "ledger": "5.00",
            "chain": "35.00",
            "difference": "-30.00",
        }
    ]
    assert of_check(run, "transfer_not_in_ledger") == [
        {
            "transfer_id": row.pk,
            "network": "local",
            "asset": "tUSDC",
            "tx_hash": row.tx_hash,
            "log_index": 0,
            "status": "confirmed",
            "units": str(units("30.00")),
            "amount": "30.00",
            "payment_id": payment.pk,
            "payment_reference": payment.reference,
        }
    ]
    assert checks_of(run) == ["receipts_vs_chain", "transfer_not_in_ledger"]

    # Settled, as the watcher would: the ledger has it, and the checks pass again.
    with transaction.atomic():
        settle(lock_payments_with_siblings([payment.pk]), touched=[payment.pk])
    assert run_today().ok


def test_a_network_with_nothing_in_the_ledger_is_flagged(top_up):
    """No receipts account exists yet for the asset: the chain side alone is a difference."""
    payment = top_up("30.00")
    unsettled_confirmed_transfer(payment, units("30.00"))

    rows = of_check(run_today(), "receipts_vs_chain")

    assert rows == [
        {
            "network": "local",
            "asset": "tUSDC",
            "ledger": "0.00",
            "chain": "30.00",
            "difference": "-30.00",
        }
    ]


def test_a_payment_that_says_allocated_without_a_posting_is_flagged(top_up, transfer):
    payment = top_up("50.00")
    transfer(payment, units=units("20.00"), status=TransferStatus.CONFIRMED)  # partly paid
    payment = reload(payment)
    assert payment.unallocated_usd == Decimal("20.00")
    CryptoPayment.objects.filter(pk=payment.pk).update(allocated_usd=Decimal("20.00"))

    run = run_today()

    assert of_check(run, "unallocated_vs_payments") == [
        {"ledger": "20.00", "payments": "0.00", "difference": "20.00"}
    ]
    assert checks_of(run) == ["unallocated_vs_payments"]


def test_a_receipt_reversed_in_the_ledger_is_flagged(top_up, transfer):
    """A finance reversal of a crypto receipt: the ledger no longer has what the chain and
    the payment say; both sides of the money say so."""
    from payments.ledger.services.posting import ledger_reverse
    from payments.models import LedgerTransaction

    payment = top_up("50.00")
    transfer(payment, units=units("20.00"), status=TransferStatus.CONFIRMED)
    receipt = LedgerTransaction.objects.get(kind=TransactionKind.CRYPTO_RECEIPT)
    ledger_reverse(transaction_id=receipt.pk, memo="posted by mistake", actor=None)

    run = run_today()

    assert of_check(run, "unallocated_vs_payments") == [
        {"ledger": "0.00", "payments": "20.00", "difference": "-20.00"}
    ]
    assert of_check(run, "receipts_vs_chain")[0]["difference"] == "-20.00"


@pytest.mark.parametrize(
    "status",
    [
        PaymentStatus.CONFIRMED,
        PaymentStatus.CLOSED,
        PaymentStatus.RESOLVED,
        PaymentStatus.INVALID,
        PaymentStatus.EXPIRED,
    ],
)
def test_unallocated_money_on_a_payment_nobody_looks_at_is_stranded(
    top_up, transfer, make_customer, status
):
    payment = top_up("50.00", who=make_customer(email="ada@example.com"))
    transfer(payment, units=units("20.00"), status=TransferStatus.CONFIRMED)
    # A status change that forgot the money: reachable through the setter alone, which is
    # what this check is there to catch.
    payment_walk(payment, status)

    run = run_today()

    assert run.ok is False
    assert of_check(run, "stranded") == [
        {
            "payment_id": payment.pk,
            "payment_reference": payment.reference,
            "customer_email": "ada@example.com",
            "status": status,
            "unallocated": "20.00",
        }
    ]
    assert checks_of(run) == ["stranded"]


@pytest.mark.parametrize(
    ("status", "review_reason"),
    [
        (PaymentStatus.AWAITING, ""),
        (PaymentStatus.DETECTED, ""),
        (PaymentStatus.NEEDS_REVIEW, ReviewReason.UNDERPAID),
    ],
)
def test_unallocated_money_that_someone_will_act_on_is_not_stranded(
    top_up, transfer, status, review_reason
):
    payment = top_up("50.00")
    transfer(payment, units=units("20.00"), status=TransferStatus.CONFIRMED)
    if status == PaymentStatus.AWAITING:
        # A confirmed part of the amount leaves it "detected"; a seen transfer dropped by a
        # reorganisation takes it back to "awaiting" (the setter's step).
        payment_walk(payment, status)
    elif status == PaymentStatus.NEEDS_REVIEW:
        payment_expire_now(payment)  # underpaid at the expiry
    assert (reload(payment).status, reload(payment).review_reason) == (status, review_reason)

    run = run_today()

    assert reload(payment).unallocated_usd == Decimal("20.00")
    assert run.ok, run.discrepancies


def test_a_fully_allocated_payment_in_a_final_status_is_not_stranded(top_up, transfer):
    payment = top_up("20.00")
    transfer(payment, status=TransferStatus.CONFIRMED)
    payment = reload(payment)
    assert (payment.status, payment.unallocated_usd) == (PaymentStatus.CONFIRMED, Decimal("0"))
    assert run_today().ok


def queries_of_a_run() -> int:
    with CaptureQueriesContext(connection) as queries:
        run_today()
    return len(queries)


def test_the_checks_of_the_money_do_not_grow_with_the_payments(top_up, transfer, make_customer):
    first = top_up("20.00")
    transfer(first, units=units("20.00"), status=TransferStatus.CONFIRMED)
    with_one = queries_of_a_run()

    for _ in range(10):
        payment = top_up("30.00", who=make_customer())
        transfer(payment, units=units("10.005"), status=TransferStatus.CONFIRMED)
        unsettled_confirmed_transfer(payment, units("1.00"))
    # Closed with money on them (a CONFIRMED one cannot close: the first stays confirmed).
    for payment in CryptoPayment.objects.exclude(status=PaymentStatus.CONFIRMED):
        payment_walk(payment, PaymentStatus.CLOSED)
    with_eleven = queries_of_a_run()

    assert with_one == with_eleven


def test_every_new_check_has_a_translated_title_and_columns():
    from payments.finance.selectors import CHECK_COLUMNS
    from payments.finance.services import Check

    for check in MONEY_CHECKS:
        assert Check(check).label
        assert CHECK_COLUMNS[Check(check)]


def test_the_chain_side_is_rounded_down_exactly_for_an_18_decimal_token(top_up):
    """0.999999999999999999 of an 18-decimal token is 0.99 USD, not 1.00: no division that
    rounds on the way."""
    payment = top_up("30.00")
    CryptoPayment.objects.filter(pk=payment.pk).update(decimals=18)
    unsettled_confirmed_transfer(payment, 10**18 - 1)

    run = run_today()

    assert of_check(run, "receipts_vs_chain")[0]["chain"] == "0.99"
    assert of_check(run, "transfer_not_in_ledger")[0]["amount"] == "0.99"
