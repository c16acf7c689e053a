"""The customer's side of the ledger: balance and statement."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery, Sum, Window
from django.db.models.functions import Coalesce, RowNumber
from django.utils.translation import gettext

from accounts.models import User
from accounts.statements import CompiledPages, CompiledQuery
from rental.models import OrderExtension

from ...models import (
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    Receipt,
    TransactionKind,
)

# Stands for the customer's id while the statements are compiled (CompiledQuery).
_ANY_CUSTOMER_ID = -7_951


@cache
def _balance_account_query() -> CompiledQuery:
    return CompiledQuery(
        LedgerAccount.objects.filter(
            kind=LedgerAccountKind.CUSTOMER_BALANCE, customer_id=_ANY_CUSTOMER_ID
        ).order_by("pk")[:1],
        customer=_ANY_CUSTOMER_ID,
    )


def customer_balance_account(*, customer: User) -> LedgerAccount | None:
    """The customer's balance account (one at most), its statement compiled once per process."""
    accounts = _balance_account_query().objects(customer=customer.pk)
    return accounts[0] if accounts else None


@cache
def _statement_account_query() -> CompiledQuery:
    return CompiledQuery(
        LedgerAccount.objects.filter(
            kind=LedgerAccountKind.CUSTOMER_BALANCE, customer_id=_ANY_CUSTOMER_ID
        )
        .annotate(entry_count=Count("entries"))
        .order_by("pk")[:1],
        customer=_ANY_CUSTOMER_ID,
    )


def customer_statement_account(*, customer: User) -> LedgerAccount | None:
    """customer_balance_account with `entry_count`, the length of its statement (what the
    balance page's paginator counts), in the same query."""
    accounts = _statement_account_query().objects(customer=customer.pk)
    return accounts[0] if accounts else None


def _statement(customer_id: int) -> QuerySet[LedgerEntry]:
    paid_out = Receipt.objects.filter(
        transaction__withdrawal_id=OuterRef("transaction__withdrawal_id"),
        kind=TransactionKind.WITHDRAWAL_PAID,
    ).values("number")[:1]
    extension_paid = LedgerTransaction.objects.filter(
        payment_id=OuterRef("transaction__payment_id"),
        kind=TransactionKind.EXTENSION_PAYMENT,
        pk__gt=OuterRef("transaction_id"),
    ).order_by("pk")
    return (
        LedgerEntry.objects.filter(
            account__kind=LedgerAccountKind.CUSTOMER_BALANCE, account__customer_id=customer_id
        )
        .select_related(
            "transaction",
            "transaction__order",
            "transaction__payment",
            "transaction__withdrawal",
        )
        .annotate(
            running_balance=Window(
                Sum("amount"), order_by=[F("transaction__created_at").asc(), F("pk").asc()]
            ),
            receipt_number=Coalesce(
                F("transaction__receipt__number"),
                Subquery(paid_out, output_field=IntegerField()),
                output_field=IntegerField(),
            ),
            for_extension_id=Subquery(
                extension_paid.values("extension_id")[:1], output_field=IntegerField()
            ),
        )
        .order_by("transaction__created_at", "pk")
    )


def customer_statement(*, customer: User) -> QuerySet[LedgerEntry]:
    """Every entry of the customer's balance, oldest first, each with its running balance.

    The running balance is a window over all the customer's entries, computed before any
    pagination slices the result, so every page shows true running balances. Each entry also
    carries `receipt_number` (its transaction's receipt or, for a withdrawal's request, the
    receipt issued when it was paid out) and `for_extension_id` (a payment credited to the
    balance to pay, at once, the extension it was sent for: the extension payment that
    follows it on the same crypto payment).
    """
    return _statement(customer.pk)


@cache
def _statement_query() -> CompiledQuery:
    return CompiledQuery(_statement(_ANY_CUSTOMER_ID), customer=_ANY_CUSTOMER_ID)


def customer_statement_pages(*, customer: User, count: int) -> CompiledPages:
    """customer_statement's entries for a Paginator, `count` known already (the account's
    entry_count), a page read by the statement compiled once per process with its window."""
    return CompiledPages(_statement_query(), count=lambda: count, customer=customer.pk)


def customer_statement_between(
    *, customer: User, created_after: datetime | None = None, created_before: datetime | None = None
) -> QuerySet[LedgerEntry]:
    """customer_statement's entries created from `created_after` (included) until
    `created_before` (excluded), oldest first, each with the running balance of the whole
    statement and its `sequence` in it (1 for the oldest entry).

    The statement is ordered by (created, pk), so the entries before a time are its first n:
    the range is a range of `sequence`, a window over every entry, and filtering on it wraps
    the query, so running balances stay those of the whole statement.
    """
    entries = customer_statement(customer=customer).annotate(
        sequence=Window(RowNumber(), order_by=[F("transaction__created_at").asc(), F("pk").asc()])
    )
    own = LedgerEntry.objects.filter(
        account__kind=LedgerAccountKind.CUSTOMER_BALANCE, account__customer=customer
    )
    if created_after is not None:
        before_range = own.filter(transaction__created_at__lt=created_after).count()
        entries = entries.filter(sequence__gt=before_range)
    if created_before is not None:
        until_end = own.filter(transaction__created_at__lt=created_before).count()
        entries = entries.filter(sequence__lte=until_end)
    return entries


@dataclass(frozen=True, slots=True)
class StatementRow:
    """What a statement line shows beside its amount (templates compare no kinds)."""

    entry: LedgerEntry

    @property
    def transaction(self) -> LedgerTransaction:
        return self.entry.transaction

    @property
    def kind_label(self) -> str:
        payment = self.extension_payment
        if payment is not None:
            return gettext("Received in %(asset)s for extension %(extension)s") % {
                "asset": payment.asset,
                "extension": OrderExtension(pk=self.entry.for_extension_id).reference,
            }
        return self.transaction.get_kind_display()

    @property
    def extension_payment(self):
        """The crypto payment credited here to pay, at once, the extension it was sent for."""
        return self.transaction.payment if self.entry.for_extension_id else None

    @property
    def withdrawal_label(self) -> str:
        withdrawal = self.transaction.withdrawal
        if withdrawal is None:
            return ""
        if self.transaction.kind == TransactionKind.WITHDRAWAL_REQUEST:
            return gettext("Held for withdrawal %(reference)s") % {
                "reference": withdrawal.reference
            }
        if self.transaction.kind == TransactionKind.WITHDRAWAL_RETURN:
            return gettext("Withdrawal %(reference)s rejected: the amount is back") % {
                "reference": withdrawal.reference
            }
        return ""

    @property
    def adjustment_reason(self) -> str:
        """Finance's reason, written for the customer (system memos are English bookkeeping)."""
        return self.transaction.memo if self.transaction.kind == TransactionKind.ADJUSTMENT else ""

    @property
    def is_early_end_refund(self) -> bool:
        return self.transaction.kind == TransactionKind.REFUND and bool(self.transaction.order_id)

    @property
    def receipt_reference(self) -> str:
        number = self.entry.receipt_number
        return Receipt(number=number).reference if number else ""


def statement_rows(entries: Iterable[LedgerEntry]) -> list[StatementRow]:
    return [StatementRow(entry) for entry in entries]
