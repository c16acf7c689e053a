"""The watcher on a real local chain (anvil) with the real test stablecoin."""

from datetime import timedelta
from decimal import Decimal

import pytest
from celery.exceptions import Retry
from django.db.models import Sum

from payments.chain.rpc import RpcError
from payments.chain.scanning import payment_check, scan_network
from payments.crypto.services.payments import payments_expire
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from rental.models import Order, OrderStatus
from tests.conftest import lots_available
from tests.states import payment_expire_now

from .conftest import units


def reload(payment) -> CryptoPayment:
    return CryptoPayment.objects.get(pk=payment.pk)


def order_of(payment) -> Order:
    return Order.objects.get(pk=payment.order_id)


def test_an_exact_payment_is_confirmed_at_n_confirmations_and_not_before(
    chain, order_payment, pay, scan
):
    payment = order_payment()
    assert payment.confirmations_required == 3
    pay(payment)
    block = chain.head()

    chain.mine(1)  # the watcher reads one block behind the head
    scan()
    seen = reload(payment)
    transfer = ChainTransfer.objects.get(payment=payment)
    assert (seen.status, transfer.status, transfer.block_number) == (
        PaymentStatus.DETECTED,
        TransferStatus.SEEN,
        block,
    )
    assert chain.head() - block + 1 == 2  # N-1 confirmations
    assert order_of(payment).status == OrderStatus.AWAITING_PAYMENT

    chain.mine(1)  # the N-th confirmation
    scan()

    confirmed = reload(payment)
    assert confirmed.status == PaymentStatus.CONFIRMED
    assert confirmed.received_units == payment.amount_due_units
    assert order_of(payment).status == OrderStatus.PROVISIONING  # paid, cards allocated
    payment_txn = LedgerTransaction.objects.get(kind=TransactionKind.ORDER_PAYMENT)
    assert payment_txn.order_id == payment.order_id and payment_txn.payment_id == payment.pk
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60")
    receipts = system_account(LedgerAccountKind.CRYPTO_RECEIPTS, asset="tUSDC", network="local")
    assert receipts.balance == Decimal("-201.60")
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")


def test_partial_then_the_rest(chain, order_payment, pay, scan):
    payment = order_payment()
    pay(payment, units("100.00"))
    chain.mine(3)
    scan()
    partial = reload(payment)
    assert partial.status == PaymentStatus.DETECTED
    assert partial.received_units == units("100.00")
    assert order_of(payment).status == OrderStatus.AWAITING_PAYMENT

    pay(payment, units("101.60"))
    chain.mine(3)
    scan()

    assert reload(payment).status == PaymentStatus.CONFIRMED
    assert order_of(payment).status == OrderStatus.PROVISIONING  # paid, cards allocated
    assert LedgerTransaction.objects.filter(kind=TransactionKind.CRYPTO_RECEIPT).count() == 2


def test_an_overpayment_leaves_the_surplus_on_the_balance(
    chain, order_payment, pay, scan, customer
):
    payment = order_payment()
    pay(payment, units("250.00"))
    chain.mine(3)
    scan()
    assert reload(payment).status == PaymentStatus.CONFIRMED
    assert customer_account(customer).balance == Decimal("48.40")
    surplus = LedgerTransaction.objects.get(kind=TransactionKind.OVERPAYMENT_CREDIT)
    assert surplus.payment_id == payment.pk


def test_a_top_up_is_credited_on_confirmation(chain, top_up_payment, pay, scan, customer):
    payment = top_up_payment("75.00")
    pay(payment)
    chain.mine(3)
    scan()
    assert reload(payment).status == PaymentStatus.CONFIRMED
    assert customer_account(customer).balance == Decimal("75.00")
    assert LedgerTransaction.objects.filter(kind=TransactionKind.TOP_UP).count() == 1


def test_a_transfer_mined_before_expiry_counts_even_if_the_worker_sees_it_later(
    chain, order_payment, pay, scan
):
    payment = order_payment()
    pay(payment)
    mined_at = chain.block_timestamp(chain.head())
    # The payment expired one second after that block, long before the worker looked.
    from datetime import UTC, datetime

    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=datetime.fromtimestamp(mined_at + 1, tz=UTC)
    )
    chain.mine(3)
    scan()
    assert reload(payment).status == PaymentStatus.CONFIRMED
    assert order_of(payment).status == OrderStatus.PROVISIONING  # paid, cards allocated


def test_a_payment_after_expiry_goes_to_review_with_the_money_recorded(
    chain, order_payment, pay, scan
):
    payment = order_payment()
    from datetime import UTC, datetime

    expiry = datetime.fromtimestamp(chain.block_timestamp(chain.head()) + 5, tz=UTC)
    CryptoPayment.objects.filter(pk=payment.pk).update(expires_at=expiry)
    chain.set_next_block_timestamp(int(expiry.timestamp()) + 60)
    pay(payment)
    chain.mine(3)
    scan()

    late = reload(payment)
    assert (late.status, late.review_reason) == (PaymentStatus.NEEDS_REVIEW, ReviewReason.PAID_LATE)
    assert order_of(payment).status == OrderStatus.PAYMENT_REVIEW
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("201.60")
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).exists()


def test_expiry_with_nothing_received_cancels_the_order_and_releases_the_stock(
    chain, order_payment, pay, scan, catalogue
):
    payment = order_payment()
    stock_before = lots_available(catalogue["h100"])
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=payment.created_at - timedelta(minutes=1)
    )
    scan()  # a scan after the expiry: the watcher has looked

    assert payments_expire() == 1

    assert reload(payment).status == PaymentStatus.EXPIRED
    assert order_of(payment).status == OrderStatus.CANCELLED
    assert lots_available(catalogue["h100"]) == stock_before + 1

    # Money that arrives afterwards, still within monitoring, is recorded and reviewed.
    pay(payment)
    chain.mine(3)
    scan()
    late = reload(payment)
    assert (late.status, late.review_reason) == (PaymentStatus.NEEDS_REVIEW, ReviewReason.PAID_LATE)
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("201.60")


def test_less_than_due_at_expiry_goes_to_review_as_underpaid(chain, order_payment, pay, scan):
    payment = order_payment()
    pay(payment, units("50.00"))
    chain.mine(3)
    scan()
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=payment.created_at - timedelta(minutes=1)
    )
    scan()
    assert payments_expire() == 1
    under = reload(payment)
    assert (under.status, under.review_reason) == (
        PaymentStatus.NEEDS_REVIEW,
        ReviewReason.UNDERPAID,
    )
    assert order_of(payment).status == OrderStatus.PAYMENT_REVIEW


def test_no_scan_since_expiry_means_no_expiry(chain, order_payment, scan, dead_rpc_url, settings):
    payment = order_payment()
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=payment.created_at - timedelta(minutes=1)
    )
    ChainCursor.objects.filter(network="local").update(
        last_scan_at=payment.created_at - timedelta(minutes=5)
    )
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    with pytest.raises(RpcError):
        scan()
    assert payments_expire() == 0
    assert reload(payment).status == PaymentStatus.AWAITING
    assert order_of(payment).status == OrderStatus.AWAITING_PAYMENT


def test_rpc_unreachable_during_a_scan_changes_nothing(
    chain, order_payment, pay, scan, dead_rpc_url, settings
):
    payment = order_payment()
    pay(payment)
    chain.mine(3)
    before = ChainCursor.objects.get(network="local")
    real_url = settings.PAYMENT_RPC_URLS["local"]
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}

    with pytest.raises(RpcError):
        scan()

    after = ChainCursor.objects.get(network="local")
    assert after.next_block == before.next_block
    assert after.last_error
    assert after.lease_token == ""
    assert not ChainTransfer.objects.exists()
    # Back online: nothing was skipped.
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": real_url}
    scan()
    assert reload(payment).status == PaymentStatus.CONFIRMED


def test_worker_stopped_while_payments_arrive_then_catches_up(
    chain, order_payment, pay, scan, make_customer
):
    payments = [order_payment(make_customer()) for _ in range(3)]
    for payment in payments:
        pay(payment)
        chain.mine(5)
    chain.mine(20)

    scan()
    scan()  # and again: nothing new, nothing doubled

    assert all(reload(p).status == PaymentStatus.CONFIRMED for p in payments)
    assert ChainTransfer.objects.count() == 3
    assert LedgerTransaction.objects.filter(kind=TransactionKind.CRYPTO_RECEIPT).count() == 3
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 3
    assert sum(LedgerEntry.objects.values_list("amount", flat=True)) == 0


def test_the_same_log_processed_twice_is_stored_and_credited_once(chain, order_payment, pay, scan):
    payment = order_payment()
    start = ChainCursor.objects.get(network="local").next_block
    pay(payment)
    chain.mine(3)
    scan()
    ChainCursor.objects.filter(network="local").update(next_block=start, last_block_hash="")
    scan()
    assert ChainTransfer.objects.count() == 1
    assert LedgerTransaction.objects.filter(kind=TransactionKind.CRYPTO_RECEIPT).count() == 1
    assert reload(payment).received_units == payment.amount_due_units


def test_a_transfer_after_monitoring_ended_is_recorded_and_sent_to_review(
    chain, order_payment, pay, scan
):
    payment = order_payment()
    assert payment_expire_now(payment).status == PaymentStatus.EXPIRED
    CryptoPayment.objects.filter(pk=payment.pk).update(
        expires_at=payment.created_at - timedelta(days=2),
        monitor_until=payment.created_at - timedelta(days=1),
    )
    pay(payment)
    chain.mine(3)
    scan()
    transfer = ChainTransfer.objects.get()
    assert (transfer.status, transfer.receipted) == (TransferStatus.CONFIRMED, True)
    # In the ledger, waiting in front of an operator.
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("201.60")
    late = reload(payment)
    assert (late.status, late.review_reason) == (PaymentStatus.NEEDS_REVIEW, ReviewReason.PAID_LATE)


def test_a_second_payment_to_a_settled_address_goes_to_the_balance(
    chain, order_payment, pay, scan, customer, mailoutbox, django_capture_on_commit_callbacks
):
    payment = order_payment()
    pay(payment)
    chain.mine(3)
    scan()
    pay(payment, units("5.00"))
    chain.mine(3)
    with django_capture_on_commit_callbacks(execute=True):
        scan()
    assert reload(payment).status == PaymentStatus.CONFIRMED
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("0.00")
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60")
    assert customer_account(customer).balance == Decimal("5.00")
    credit = LedgerTransaction.objects.get(kind=TransactionKind.PAYMENT_CREDIT)
    assert credit.payment_id == payment.pk and payment.reference in credit.memo
    assert any("5.00 USD credited" in mail.subject for mail in mailoutbox)


def test_a_declaration_with_a_hash_fetches_that_receipt_now(chain, order_payment, pay):
    payment = order_payment()
    tx_hash = pay(payment)
    CryptoPayment.objects.filter(pk=payment.pk).update(declared_tx_hash=tx_hash.lower())
    report = payment_check(payment_id=payment.pk)
    assert report.stored == 1
    assert reload(payment).status == PaymentStatus.DETECTED  # seen at once, not yet deep enough


def test_a_declaration_without_a_hash_rescans_the_address(chain, order_payment, pay):
    payment = order_payment()
    pay(payment)
    chain.mine(3)
    report = payment_check(payment_id=payment.pk)
    assert report.stored == 1
    assert reload(payment).status == PaymentStatus.CONFIRMED


def test_transfers_to_addresses_that_are_not_ours_are_ignored(chain, order_payment, scan):
    order_payment()
    chain.transfer("0x000000000000000000000000000000000000dEaD", units("10.00"))
    chain.mine(3)
    scan()
    assert not ChainTransfer.objects.exists()


def test_received_totals_match_the_chain(chain, order_payment, pay, scan):
    payment = order_payment()
    pay(payment, units("1.234567"))
    chain.mine(3)
    scan()
    assert ChainTransfer.objects.aggregate(total=Sum("amount_units"))["total"] == 1234567
    # The ledger is in cents: the sub-cent remainder is not credited.
    assert system_account(LedgerAccountKind.UNALLOCATED).balance == Decimal("1.23")
    assert reload(payment).status == PaymentStatus.DETECTED
    assert scan_network(network_key="local").stored == 0


def test_the_scan_task_schedules_a_retry_with_backoff_and_changes_nothing(
    chain, order_payment, pay, dead_rpc_url, settings
):
    from payments.chain import tasks  # the scan tasks and the scanning module they call

    payment = order_payment()
    pay(payment)
    before = ChainCursor.objects.get(network="local")
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    calls = []
    original = tasks.scanning.scan_network

    def counting(**kwargs):
        calls.append(kwargs)
        return original(**kwargs)

    tasks.scanning.scan_network = counting
    try:
        with pytest.raises(Retry) as retry:
            tasks.scan_network.delay("local")
    finally:
        tasks.scanning.scan_network = original
    assert len(calls) == 1
    assert isinstance(retry.value.exc, RpcError)
    assert retry.value.when == 2  # the first countdown of the exponential backoff (2, 4, 8 s...)
    after = ChainCursor.objects.get(network="local")
    assert (after.next_block, after.lease_token) == (before.next_block, "")
    assert reload(payment).status == PaymentStatus.AWAITING
