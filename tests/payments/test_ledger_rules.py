"""The ledger's rules hold in the database itself, not only in Python."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from payments.exceptions import InsufficientBalance
from payments.ledger.services.posting import (
    customer_account,
    ledger_post,
    ledger_reverse,
    system_account,
)
from payments.models import (
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    TransactionKind,
)


def insert_raw_transaction(amounts, accounts):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO payments_ledgertransaction (kind, memo, idempotency_key, created_at)"
            " VALUES ('adjustment', 'raw', %s, now()) RETURNING id",
            [f"raw-{amounts}"],
        )
        txn_id = cursor.fetchone()[0]
        for account, amount in zip(accounts, amounts, strict=True):
            cursor.execute(
                "INSERT INTO payments_ledgerentry (transaction_id, account_id, amount)"
                " VALUES (%s, %s, %s)",
                [txn_id, account.pk, amount],
            )
    return txn_id


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "amounts",
    [["10.00", "-9.99"], ["10.00"], []],
    ids=["unbalanced", "single entry", "no entry"],
)
def test_an_unbalanced_transaction_inserted_straight_into_the_database_is_rejected_at_commit(
    customer, amounts
):
    accounts = [customer_account(customer), system_account(LedgerAccountKind.ADJUSTMENTS)]
    with pytest.raises(IntegrityError, match="unbalanced|at least two"), transaction.atomic():
        insert_raw_transaction(amounts, accounts[: len(amounts)])
    assert LedgerTransaction.objects.count() == 0
    assert LedgerEntry.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_balanced_raw_transaction_commits(customer):
    accounts = [customer_account(customer), system_account(LedgerAccountKind.ADJUSTMENTS)]
    with transaction.atomic():
        insert_raw_transaction(["10.00", "-10.00"], accounts)
    assert LedgerEntry.objects.count() == 2


def test_entries_and_transactions_cannot_be_edited_or_deleted(customer, credit):
    posted = credit(customer, "50.00")
    entry = posted.entries.first()
    for statement in (
        lambda: LedgerEntry.objects.filter(pk=entry.pk).update(amount=Decimal("1.00")),
        lambda: LedgerEntry.objects.filter(pk=entry.pk).delete(),
        lambda: LedgerTransaction.objects.filter(pk=posted.pk).update(memo="edited"),
    ):
        with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
            statement()
    assert LedgerEntry.objects.get(pk=entry.pk).amount == entry.amount


def test_zero_entries_and_negative_customer_balances_are_refused_by_the_database(customer, credit):
    posted = credit(customer, "5.00")
    account = customer_account(customer)
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.create(transaction=posted, account=account, amount=Decimal("0"))
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerAccount.objects.filter(pk=account.pk).update(balance=Decimal("-0.01"))


@pytest.mark.parametrize(
    "amounts",
    [
        (Decimal("10.00"), Decimal("-9.00")),
        (Decimal("10.001"), Decimal("-10.001")),
        (Decimal("0"), Decimal("0")),
        (10.0, -10.0),
    ],
)
def test_ledger_post_refuses_malformed_lines(customer, amounts):
    accounts = (customer_account(customer), system_account(LedgerAccountKind.ADJUSTMENTS))
    with pytest.raises(ValueError):
        ledger_post(
            kind=TransactionKind.ADJUSTMENT,
            lines=list(zip(accounts, amounts, strict=True)),
            memo="bad",
            idempotency_key="bad",
        )
    assert LedgerTransaction.objects.count() == 0


def test_posting_twice_with_one_key_writes_once(customer):
    account = customer_account(customer)
    adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
    lines = [(account, Decimal("20.00")), (adjustments, Decimal("-20.00"))]
    first, created = ledger_post(
        kind=TransactionKind.ADJUSTMENT, lines=lines, memo="x", idempotency_key="k"
    )
    second, created_again = ledger_post(
        kind=TransactionKind.ADJUSTMENT, lines=lines, memo="x", idempotency_key="k"
    )
    assert (created, created_again) == (True, False)
    assert first.pk == second.pk
    account.refresh_from_db()
    assert account.balance == Decimal("20.00")


def test_a_debit_beyond_the_balance_is_refused_and_writes_nothing(customer, credit):
    credit(customer, "10.00")
    account = customer_account(customer)
    adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
    with pytest.raises(InsufficientBalance):
        ledger_post(
            kind=TransactionKind.ADJUSTMENT,
            lines=[(account, Decimal("-10.01")), (adjustments, Decimal("10.01"))],
            memo="too much",
            idempotency_key="too-much",
        )
    account.refresh_from_db()
    assert account.balance == Decimal("10.00")
    assert LedgerTransaction.objects.count() == 1


def test_a_reversal_mirrors_the_original_once(customer, credit, finance_user):
    original = credit(customer, "30.00")
    reversal = ledger_reverse(transaction_id=original.pk, memo="entered twice", actor=finance_user)
    again = ledger_reverse(transaction_id=original.pk, memo="entered twice", actor=finance_user)
    assert again.pk == reversal.pk
    assert reversal.kind == TransactionKind.REVERSAL
    assert reversal.reverses == original
    assert sorted(e.amount for e in reversal.entries.all()) == [Decimal("-30.00"), Decimal("30.00")]
    assert customer_account(customer).balance == Decimal("0.00")


def test_the_admin_shows_the_ledger_read_only(client, make_customer, customer, credit):
    from django.urls import reverse

    posted = credit(customer, "12.00")
    from tests.mfa_fixtures import enrol_totp

    admin = make_customer(is_staff=True, is_superuser=True)
    enrol_totp(admin)  # the admin, like staff pages, needs a second factor
    client.force_login(admin)
    change_url = reverse("admin:payments_ledgertransaction_change", args=[posted.pk])
    page = client.get(change_url)
    assert page.status_code == 200
    assert "12.00" in page.content.decode()
    assert client.get(reverse("admin:payments_ledgertransaction_add")).status_code == 403
    client.post(change_url, {"memo": "edited", "kind": "refund"})
    client.post(
        reverse("admin:payments_ledgertransaction_delete", args=[posted.pk]), {"post": "yes"}
    )
    posted.refresh_from_db()
    assert posted.memo == "Bank transfer received"
    assert posted.entries.count() == 2
