"""Receipts are issued by the transaction that posts the money: one per receipted kind, none
for an adjustment or a reversal, numbered without gaps, frozen once issued."""

from decimal import Decimal

import pytest
from django.db import DatabaseError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.models import BillingDetails
from payments.crypto.services.balance_payment import balance_pay_order
from payments.exceptions import InsufficientBalance
from payments.ledger.services.posting import (
    Posting,
    customer_account,
    ledger_post_many,
    ledger_reverse,
    system_account,
)
from payments.models import (
    LedgerAccountKind,
    LedgerTransaction,
    Receipt,
    ReceiptCounter,
    TransactionKind,
)


def test_an_order_paid_from_the_balance_gets_one_receipt(customer, paid_order):
    BillingDetails.objects.create(
        user=customer, company_name="Hopper Computing Srl", vat_number="IT01234567890"
    )
    order = paid_order(customer)  # two H100 lots for 7 days: 893.76

    receipt = Receipt.objects.get()
    payment = LedgerTransaction.objects.get(kind=TransactionKind.ORDER_PAYMENT)
    assert receipt.transaction == payment
    assert receipt.number == 1 and receipt.reference == "R-000001"
    assert (receipt.customer, receipt.kind, receipt.amount_usd) == (
        customer,
        TransactionKind.ORDER_PAYMENT,
        Decimal("893.76"),
    )
    assert receipt.description == f"Order {order.reference}: {order.model_name} × 2, 7 days"
    assert receipt.language == "en"
    assert receipt.billing == {
        "company_name": "Hopper Computing Srl",
        "vat_number": "IT01234567890",
    }
    assert ReceiptCounter.objects.get(pk=1).last_number == 1


def test_a_finance_adjustment_gets_no_receipt(customer, credit):
    credit(customer, "250.00")
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ADJUSTMENT).count() == 1
    assert not Receipt.objects.exists()


def test_a_reversal_of_a_receipted_transaction_issues_no_new_receipt(
    customer, paid_order, finance_user
):
    paid_order(customer)
    payment = LedgerTransaction.objects.get(kind=TransactionKind.ORDER_PAYMENT)
    reversal = ledger_reverse(transaction_id=payment.pk, memo="test: reversed", actor=finance_user)
    assert reversal.kind == TransactionKind.REVERSAL
    assert list(Receipt.objects.values_list("transaction_id", flat=True)) == [payment.pk]
    # The receipt stays as issued; its page says the transaction was reversed since.
    browser = Client()
    browser.force_login(customer)
    html = browser.get(reverse("payments:receipt", kwargs={"number": 1})).content.decode()
    assert 'data-field="amount">893.76 USD<' in html
    assert "This transaction was reversed on " in html


def test_an_italian_customer_gets_the_description_in_italian(make_customer, paid_order):
    italian = make_customer(language="it")
    order = paid_order(italian, lots=1, duration_days=3)
    receipt = Receipt.objects.get()
    assert receipt.language == "it"
    assert receipt.description == f"Ordine {order.reference}: {order.model_name} × 1, 3 giorni"


def test_a_refused_payment_takes_no_number(make_customer, catalogue, place_order, paid_order):
    first, short, third = make_customer(), make_customer(), make_customer()
    paid_order(first)
    order = place_order(short, catalogue["h100"], lots=1)
    with pytest.raises(InsufficientBalance):
        balance_pay_order(order_id=order.pk, customer=short)
    paid_order(third)
    assert list(Receipt.objects.order_by("number").values_list("number", "customer")) == [
        (1, first.pk),
        (2, third.pk),
    ]


def test_a_rolled_back_transaction_rolls_its_number_back(make_customer, paid_order):
    first, rolled_back, third = make_customer(), make_customer(), make_customer()
    paid_order(first)
    with pytest.raises(RuntimeError), transaction.atomic():
        paid_order(rolled_back)
        assert Receipt.objects.filter(customer=rolled_back).get().number == 2  # issued...
        raise RuntimeError("test: something after the payment failed")
    paid_order(third)
    assert list(Receipt.objects.order_by("number").values_list("number", "customer")) == [
        (1, first.pk),
        (2, third.pk),  # ...and the number went back with the transaction
    ]
    assert ReceiptCounter.objects.get(pk=1).last_number == 2


def test_billing_details_changed_later_leave_an_issued_receipt_as_it_was(customer, paid_order):
    details = BillingDetails.objects.create(user=customer, company_name="Old Name Srl")
    paid_order(customer)
    details.company_name = "New Name Srl"
    details.address = "Via Roma 1\nMilano"
    details.save()
    paid_order(customer, lots=1)
    billed = list(Receipt.objects.order_by("number").values_list("billing", flat=True))
    assert billed == [
        {"company_name": "Old Name Srl"},
        {"company_name": "New Name Srl", "address": "Via Roma 1\nMilano"},
    ]


def test_the_database_refuses_to_change_or_delete_a_receipt(customer, paid_order):
    paid_order(customer)
    with pytest.raises(DatabaseError, match="receipts are never changed"), transaction.atomic():
        Receipt.objects.update(amount_usd=Decimal("1.00"))
    with pytest.raises(DatabaseError, match="receipts are never changed"), transaction.atomic():
        Receipt.objects.all().delete()
    with pytest.raises(DatabaseError, match="only moves forward"), transaction.atomic():
        ReceiptCounter.objects.update(last_number=0)
    assert Receipt.objects.get().amount_usd == Decimal("893.76")


def _top_ups(customers) -> list[Posting]:
    adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
    return [
        Posting(
            TransactionKind.TOP_UP,
            [(customer_account(c), Decimal("5.00")), (adjustments, Decimal("-5.00"))],
            "test top-up",
            f"test-top-up:{c.pk}",
        )
        for c in customers
    ]


def _queries_to_post(postings) -> int:
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        ledger_post_many(postings)
    return len(queries)


def test_a_batch_issues_its_receipts_in_four_queries_whatever_its_size(make_customer):
    one = _top_ups([make_customer()])
    twenty = _top_ups([make_customer() for _ in range(20)])  # (their accounts exist now)
    first, without_receipts = (
        [Posting(TransactionKind.ADJUSTMENT, p.lines, p.memo, f"adj:{p.idempotency_key}")]
        for p in _top_ups([make_customer(), make_customer()])
    )
    # The transaction's first events also queue its one outbox dispatch (once per commit).
    _queries_to_post(first)

    plain = _queries_to_post(without_receipts)
    assert _queries_to_post(one) == _queries_to_post(twenty) == plain + 4
    numbers = list(Receipt.objects.order_by("number").values_list("number", flat=True))
    assert numbers == list(range(1, 22))
    assert Receipt.objects.filter(description="Top-up of the USD balance").count() == 21
