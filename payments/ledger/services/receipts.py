"""Receipts: one for every ledger transaction of RECEIPT_KINDS (an order or an extension paid,
a top-up credited, a refund, a withdrawal paid out), issued in the transaction that posts it.

Numbers follow each other without gaps: the batch takes the receipt counter's row lock (the
last lock of all, payments.locks), so a transaction that rolls back rolls its numbers back
too, and two transactions never hand out the same number. A batch of any size costs four
queries (the customers' language and billing details, the counter's lock, its new value, the
receipts), none when nothing in it issues a receipt.

What a receipt says is frozen when it is issued: the amount, a description written in the
customer's language, that language, and the optional billing details the customer had then.
A reversal of a receipted transaction issues no new receipt: the statement shows it.
"""

from collections.abc import Sequence
from decimal import Decimal

from django.utils import timezone, translation
from django.utils.translation import gettext, ngettext

from accounts.models import BillingDetails, User
from rental.models import Order

from ...bulk import insert_rows
from ...chain.selectors import network_name
from ...locks import lock_receipt_counter
from ...models import RECEIPT_KINDS, LedgerAccountKind, Receipt, TransactionKind

BILLING_FIELDS = ("company_name", "vat_number", "address")


def receipts_issue(postings: Sequence, posted: Sequence) -> int:
    """Issue the receipts of these just-inserted transactions (`posted`, anything with the
    transaction's `pk` and `kind`, in the order of their `postings`,
    payments.ledger.services.posting.Posting); the caller holds their accounts' locks. Written
    as plain rows in one INSERT (no Receipt instance per row); returns how many."""
    due = [
        (txn, posting)
        for txn, posting in zip(posted, postings, strict=True)
        if txn.kind in RECEIPT_KINDS
    ]
    if not due:
        return 0
    customer_of = {txn.pk: _customer_id(posting) for txn, posting in due}
    missing = [txn.pk for txn, _ in due if customer_of[txn.pk] is None]
    if missing:
        raise ValueError(f"no customer to issue a receipt to for transactions {missing}")
    customers = _customers(set(customer_of.values()))
    counter = lock_receipt_counter()
    first = counter.last_number + 1
    counter.last_number += len(due)
    counter.save(update_fields=["last_number"])
    now = timezone.now()
    rows = []
    names = _NetworkNames()
    for number, (txn, posting) in enumerate(due, start=first):
        language, billing = customers[customer_of[txn.pk]]
        with translation.override(language):
            description = _description(posting, names)
        rows.append(
            (
                number,
                txn.pk,
                customer_of[txn.pk],
                txn.kind,
                sum((a for _, a in posting.lines if a > 0), Decimal("0.00")),
                description[:300],
                language,
                billing,
                now,
            )
        )
    insert_rows(Receipt, _RECEIPT_FIELDS, rows)
    return len(rows)


_RECEIPT_FIELDS = (
    "number",
    "transaction",
    "customer",
    "kind",
    "amount_usd",
    "description",
    "language",
    "billing",
    "issued_at",
)


def _customer_id(posting) -> int | None:
    """Whose receipt: the customer of what the transaction is about, else the customer whose
    balance it moves."""
    for subject in (posting.order, posting.extension, posting.payment, posting.withdrawal):
        if subject is not None and getattr(subject, "customer_id", None):
            return subject.customer_id
    for account, _amount in posting.lines:
        if account.kind == LedgerAccountKind.CUSTOMER_BALANCE:
            return account.customer_id
    return None


def _customers(ids: set[int]) -> dict[int, tuple[str, dict]]:
    """Each customer's language and billing details as a receipt keeps them (one query)."""
    rows = User.objects.filter(pk__in=ids).values_list(
        "pk", "language", *(f"billing_details__{name}" for name in BILLING_FIELDS)
    )
    return {
        pk: (
            language,
            BillingDetails(
                **{n: v or "" for n, v in zip(BILLING_FIELDS, values, strict=True)}
            ).as_receipt(),
        )
        for pk, language, *values in rows
    }


class _NetworkNames(dict):
    """A network's name in the active language, read from the settings once per batch (not
    once per receipt: 500 receipts read every network's settings 500 times)."""

    def __call__(self, key: str) -> str:
        language = translation.get_language()
        if (language, key) not in self:
            self[(language, key)] = network_name(key)
        return self[(language, key)]


def _description(posting, network_name=network_name) -> str:
    """One line saying what was paid, in the active language."""
    order, payment = posting.order, posting.payment
    extension, withdrawal = posting.extension, posting.withdrawal
    if posting.kind == TransactionKind.ORDER_PAYMENT:
        return gettext("Order %(reference)s: %(model)s × %(lots)s, %(days)s days") % {
            "reference": order.reference,
            "model": order.model_name,
            "lots": order.lots,
            "days": order.duration_days,
        }
    if posting.kind == TransactionKind.EXTENSION_PAYMENT:
        return ngettext(
            "Extension %(reference)s of order %(order)s: %(days)s more days, %(lots)s lot",
            "Extension %(reference)s of order %(order)s: %(days)s more days, %(lots)s lots",
            extension.lots,
        ) % {
            "reference": extension.reference,
            "order": Order(pk=extension.order_id).reference,
            "days": extension.duration_days,
            "lots": extension.lots,
        }
    if posting.kind == TransactionKind.TOP_UP:
        if payment is None:
            return gettext("Top-up of the USD balance")
        return gettext("Top-up %(reference)s of the USD balance in %(asset)s on %(network)s") % {
            "reference": payment.reference,
            "asset": payment.asset,
            "network": network_name(payment.network),
        }
    if posting.kind == TransactionKind.REFUND:
        if order is not None:
            return gettext("Refund for order %(reference)s") % {"reference": order.reference}
        if payment is not None:
            return gettext("Refund of payment %(reference)s") % {"reference": payment.reference}
        return gettext("Refund")
    if posting.kind == TransactionKind.WITHDRAWAL_PAID:
        return gettext("Withdrawal %(reference)s in %(asset)s on %(network)s to %(address)s") % {
            "reference": withdrawal.reference,
            "asset": withdrawal.asset,
            "network": network_name(withdrawal.network),
            "address": withdrawal.to_address,
        }
    return str(TransactionKind(posting.kind).label)
