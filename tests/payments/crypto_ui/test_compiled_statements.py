"""The customer pages' statements compiled once per process (payments.compiled) read the same
rows into the same objects as the ORM's querysets they are compiled from: fields, related rows
(select_related), annotations, order, and a page's slice."""

from decimal import Decimal

import pytest
from django.core.paginator import Paginator

from payments.crypto.selectors.payment_page import customer_payment, customer_payment_view
from payments.crypto.selectors.state import _ledger_sum, _money_annotations
from payments.ledger.selectors.receipts import customer_receipt_pages, customer_receipts
from payments.ledger.selectors.statement import (
    customer_statement,
    customer_statement_account,
    customer_statement_pages,
)
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    TransactionKind,
    TransferStatus,
)


def fields(obj) -> dict:
    return {key: value for key, value in vars(obj).items() if key != "_state"}


def orm_payment(customer, payment_id) -> CryptoPayment:
    return (
        CryptoPayment.objects.select_related("deposit_address", "order", "extension__order")
        .annotate(
            **_money_annotations(),
            extension_paid_usd=_ledger_sum(
                LedgerAccountKind.REVENUE, (TransactionKind.EXTENSION_PAYMENT,)
            ),
        )
        .filter(customer=customer)
        .get(pk=payment_id)
    )


def test_the_payment_its_related_rows_and_its_money_are_the_orms(
    customer, payment, transfer, other_customer
):
    # Overpaid and confirmed: money paid for the order and credited to the balance.
    transfer(payment, units=900_000_000, status=TransferStatus.CONFIRMED)
    ours, theirs = (
        customer_payment(customer=customer, payment_id=payment.pk),
        orm_payment(customer, payment.pk),
    )
    assert fields(ours) == fields(theirs)
    assert ours.paid_usd == Decimal("893.76") and ours.credited_usd == Decimal("6.24")
    assert fields(ours.order) == fields(theirs.order)
    assert fields(ours.deposit_address) == fields(theirs.deposit_address)
    assert ours.extension is None and theirs.extension is None
    with pytest.raises(CryptoPayment.DoesNotExist):
        customer_payment(customer=other_customer, payment_id=payment.pk)
    with pytest.raises(CryptoPayment.DoesNotExist):
        customer_payment(customer=customer, payment_id=2**63)


def test_the_payment_views_transfers_are_the_orms_in_chain_order(customer, payment, transfer):
    transfer(payment, units=100_000_000, block=120)
    transfer(payment, units=200_000_000, block=110)
    reorged = transfer(payment, units=300_000_000, block=115, status=TransferStatus.REORGED)
    view = customer_payment_view(customer=customer, payment_id=payment.pk)
    expected = (
        ChainTransfer.objects.filter(payment=payment)
        .exclude(status=TransferStatus.REORGED)
        .order_by("block_number", "log_index")
    )
    assert [t.tx_hash for t in view.transfers] == [t.tx_hash for t in expected]
    assert [t.block_number for t in view.transfers] == [110, 120]
    assert reorged.tx_hash not in {t.tx_hash for t in view.transfers}


def test_statement_pages_are_the_orms_slices(customer, credit):
    for amount in ("10.00", "20.00", "30.00", "40.00", "50.00"):
        credit(customer, amount, reason=f"Credit {amount}")
    account = customer_statement_account(customer=customer)
    assert account.entry_count == 5
    pages = Paginator(customer_statement_pages(customer=customer, count=5), 2)
    orm = Paginator(customer_statement(customer=customer), 2)
    assert pages.num_pages == orm.num_pages == 3
    for number in (1, 2, 3):
        ours, theirs = pages.page(number).object_list, list(orm.page(number).object_list)
        assert [fields(e) for e in ours] == [fields(e) for e in theirs]
        assert [fields(e.transaction) for e in ours] == [fields(e.transaction) for e in theirs]
    assert [e.running_balance for e in pages.page(3).object_list] == [Decimal("150.00")]


def test_receipt_pages_are_the_orms_with_and_without_an_order(
    customer, payment, transfer, top_up, order
):
    transfer(payment, status=TransferStatus.CONFIRMED)
    transfer(top_up(), status=TransferStatus.CONFIRMED)
    for order_id in (None, order.pk, order.pk + 1000, 2**70):
        pages = Paginator(customer_receipt_pages(customer=customer, order_id=order_id), 25)
        expected = list(customer_receipts(customer=customer, order_id=order_id))
        assert pages.count == len(expected)
        ours = list(pages.page(1).object_list)
        assert [fields(r) for r in ours] == [fields(r) for r in expected]
    assert Paginator(customer_receipt_pages(customer=customer), 25).count == 2
    assert Paginator(customer_receipt_pages(customer=customer, order_id=order.pk), 25).count == 1
