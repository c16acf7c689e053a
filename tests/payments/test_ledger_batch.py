"""The ledger's batch path (ledger_post_many, as settlement uses it): plain-row inserts, one
balance UPDATE per account, idempotent on retry, and one summary log line per batch."""

import logging
from decimal import Decimal

import pytest
from django.db import transaction
from django.db.models import Sum

from payments.bulk import any_of, any_pk
from payments.ledger.services.posting import (
    Posting,
    customer_account,
    ledger_post,
    ledger_post_many,
    system_account,
)
from payments.models import (
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    Receipt,
    TransactionKind,
)

pytestmark = pytest.mark.django_db


def _top_ups(customers, amount="5.00", prefix="batch"):
    adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
    return [
        Posting(
            TransactionKind.TOP_UP,
            [(customer_account(c), Decimal(amount)), (adjustments, Decimal(f"-{amount}"))],
            f"top-up of {c.email}",
            f"{prefix}:{c.pk}",
            order=None,
        )
        for c in customers
    ]


def test_a_batch_writes_each_posting_with_its_own_entries_and_moves_each_balance_once(
    make_customer,
):
    customers = [make_customer() for _ in range(4)]
    postings = _top_ups(customers) + _top_ups(customers[:2], "2.50", prefix="more")

    with transaction.atomic():
        posted = ledger_post_many(postings)

    assert [p.idempotency_key for p in posted] == [p.idempotency_key for p in postings]
    stored = {t.pk: t for t in LedgerTransaction.objects.filter(pk__in=[p.pk for p in posted])}
    for txn, posting in zip(posted, postings, strict=True):
        assert stored[txn.pk].idempotency_key == posting.idempotency_key
        assert stored[txn.pk].kind == TransactionKind.TOP_UP
        assert stored[txn.pk].memo == posting.memo
        assert sorted(stored[txn.pk].entries.values_list("account_id", "amount")) == sorted(
            (account.pk, amount) for account, amount in posting.lines
        )
    for customer, expected in zip(customers, ["7.50", "7.50", "5.00", "5.00"], strict=True):
        account = customer_account(customer)
        assert account.balance == Decimal(expected)
        assert LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount"))[
            "s"
        ] == Decimal(expected)
    # Every top-up has its receipt, numbered without gaps.
    numbers = sorted(Receipt.objects.values_list("number", flat=True))
    assert numbers == list(range(1, len(postings) + 1))
    assert LedgerEntry.objects.aggregate(s=Sum("amount"))["s"] == 0


def test_a_batch_posted_again_writes_nothing(make_customer):
    postings = _top_ups([make_customer() for _ in range(3)])
    with transaction.atomic():
        first = ledger_post_many(postings)
    with transaction.atomic():
        again = ledger_post_many(postings)

    assert len(first) == 3 and again == []
    assert LedgerTransaction.objects.count() == 3
    assert Receipt.objects.count() == 3
    for posting in postings:
        assert posting.lines[0][0].__class__.objects.get(pk=posting.lines[0][0].pk).balance == (
            Decimal("5.00")
        )


def test_ledger_post_still_answers_a_saved_transaction(customer):
    adjustments = system_account(LedgerAccountKind.ADJUSTMENTS)
    posted, created = ledger_post(
        kind=TransactionKind.ADJUSTMENT,
        lines=[(customer_account(customer), Decimal("1.00")), (adjustments, Decimal("-1.00"))],
        memo="one",
        idempotency_key="single:1",
    )
    assert created
    assert posted.pk == LedgerTransaction.objects.get(idempotency_key="single:1").pk
    assert posted.entries.count() == 2
    assert posted.created_at is not None
    assert not posted._state.adding


def test_a_batch_logs_one_summary_line_and_each_transaction_at_debug(
    make_customer, caplog, django_capture_on_commit_callbacks
):
    postings = _top_ups([make_customer() for _ in range(3)])
    caplog.set_level(logging.INFO, logger="payments.ledger.services.posting")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        posted = ledger_post_many(postings)

    lines = [r for r in caplog.records if r.name == "payments.ledger.services.posting"]
    (summary,) = lines
    assert summary.levelno == logging.INFO and summary.event == "ledger_batch"
    assert summary.ledger_transactions == 3
    assert summary.kinds == {"top_up": 3}
    assert summary.amount_usd == {"top_up": "15.00"}
    assert (summary.first_ledger_transaction, summary.last_ledger_transaction) == (
        posted[0].pk,
        posted[-1].pk,
    )

    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="payments.ledger.services.posting")
    more = _top_ups([make_customer() for _ in range(2)], prefix="debug")
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        ledger_post_many(more)
    lines = [r for r in caplog.records if r.name == "payments.ledger.services.posting"]
    assert [r.levelno for r in lines] == [logging.DEBUG, logging.DEBUG, logging.INFO]
    assert [r.event for r in lines] == ["ledger_posting", "ledger_posting", "ledger_batch"]


def test_any_of_finds_what_the_plain_list_finds(make_customer):
    postings = _top_ups([make_customer() for _ in range(3)], prefix="any")
    with transaction.atomic():
        posted = ledger_post_many(postings)
    ids = [p.pk for p in posted]
    keys = [p.idempotency_key for p in posted] + ["any:none"]

    by_pk = LedgerTransaction.objects.filter(pk__in=any_pk([*ids[:2], 10**12]))
    assert sorted(by_pk.values_list("pk", flat=True)) == sorted(ids[:2])
    by_key = LedgerTransaction.objects.filter(idempotency_key__in=any_of(keys))
    assert sorted(by_key.values_list("pk", flat=True)) == sorted(ids)
    assert not LedgerTransaction.objects.filter(pk__in=any_pk([])).exists()
    with pytest.raises(ValueError):
        any_of(["x"], cast="text); DROP TABLE x; --")
