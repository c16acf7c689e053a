"""The customer's receipts, always looked up through their owner (another customer's → 404),
and what a receipt shows of its issuer (from settings)."""

from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.db import connection
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext

from accounts.models import User
from accounts.statements import CompiledPages, CompiledQuery
from rental.models import Order

from ...chain.selectors import network_name
from ...models import LedgerTransaction, Receipt, TransactionKind


def customer_receipts(*, customer: User, order_id: int | None = None) -> QuerySet[Receipt]:
    """The customer's receipts, newest first; with `order_id`, those of that order (its
    payment, its extensions, its refund)."""
    return _receipts(customer.pk, order_id)


# Stand for the customer's and the order's ids while the statements are compiled.
_ANY_CUSTOMER_ID, _ANY_ORDER_ID = -7_973, -7_979


@cache
def _receipt_list_queries(by_order: bool) -> tuple[CompiledQuery, CompiledQuery]:
    """customer_receipts' statement (with or without an order) and how many rows it has:
    compiled once per process."""
    stand_ins = {"customer": _ANY_CUSTOMER_ID, **({"order": _ANY_ORDER_ID} if by_order else {})}
    receipts = _receipts(_ANY_CUSTOMER_ID, _ANY_ORDER_ID if by_order else None)
    count = (receipts.order_by().values("customer_id").annotate(receipts=Count("pk"))).values_list(
        "receipts"
    )
    return CompiledQuery(receipts, **stand_ins), CompiledQuery(count, **stand_ins)


def customer_receipt_pages(*, customer: User, order_id: int | None = None) -> CompiledPages:
    """customer_receipts for a Paginator (the receipts page), its count and pages read by
    statements compiled once per process."""
    if order_id is None:
        values = {"customer": customer.pk}
    else:
        low, high = connection.ops.integer_field_range(Order._meta.pk.get_internal_type())
        if not low <= order_id <= high:  # no such order (the ORM's guard finds none either)
            return CompiledPages(_receipt_list_queries(False)[0], count=lambda: 0)
        values = {"customer": customer.pk, "order": order_id}
    receipts, count = _receipt_list_queries(order_id is not None)

    def counted() -> int:
        rows = count.values(**values)
        return rows[0][0] if rows else 0

    return CompiledPages(receipts, count=counted, **values)


def _receipts(customer_id: int, order_id: int | None) -> QuerySet[Receipt]:
    receipts = Receipt.objects.filter(customer_id=customer_id)
    if order_id is not None:
        receipts = receipts.filter(
            # Through the primary keys: Django's guard for a number too large for an integer
            # column applies to them, not to a foreign key's column (a 500 on SQLite).
            Q(transaction__order__pk=order_id) | Q(transaction__extension__order__pk=order_id)
        )
    return receipts.order_by("-number")


def customer_receipt(*, customer: User, number: int) -> Receipt:
    """The customer's receipt with this number; another customer's raises
    Receipt.DoesNotExist, as a number that does not exist."""
    reversal = LedgerTransaction.objects.filter(reverses_id=OuterRef("transaction_id"))
    return (
        Receipt.objects.select_related(
            "customer", "transaction__payment", "transaction__withdrawal"
        )
        .annotate(reversed_at=Subquery(reversal.values("created_at")[:1]))
        .filter(customer=customer)
        .get(number=number)
    )


def customer_order_receipt(*, customer: User, order_id: int) -> Receipt:
    """The receipt of the customer's order payment; Receipt.DoesNotExist if none."""
    return Receipt.objects.filter(
        customer=customer, transaction__order__pk=order_id, kind=TransactionKind.ORDER_PAYMENT
    ).get()


def customer_extension_receipt(*, customer: User, extension_id: int) -> Receipt:
    """The receipt of the customer's paid extension; Receipt.DoesNotExist if none (another
    customer's extension included)."""
    return Receipt.objects.filter(
        customer=customer,
        transaction__extension__pk=extension_id,
        kind=TransactionKind.EXTENSION_PAYMENT,
    ).get()


def with_receipt_numbers(extensions: QuerySet) -> QuerySet:
    """Extensions annotated with `receipt_number`, their payment's receipt (None before it is
    paid): a correlated subquery, no query of its own."""
    receipt = Receipt.objects.filter(
        transaction__extension_id=OuterRef("pk"), kind=TransactionKind.EXTENSION_PAYMENT
    ).values("number")[:1]
    return extensions.annotate(receipt_number=Subquery(receipt))


def customer_order_receipt_numbers(*, customer_id: int, order_id: int) -> dict[str, int]:
    """The numbers of the customer's order's payment receipt and of its refund's
    ({"order_payment": n, "refund": m}, each only when issued): one query."""
    rows = Receipt.objects.filter(
        customer_id=customer_id,
        transaction__order__pk=order_id,
        kind__in=(TransactionKind.ORDER_PAYMENT, TransactionKind.REFUND),
    ).values_list("kind", "number")
    return {kind: number for kind, number in rows}


@dataclass(frozen=True, slots=True)
class Issuer:
    name: str
    address_lines: tuple[str, ...]
    vat_number: str
    email: str


def receipt_issuer() -> Issuer:
    """Who issues the receipts (RECEIPT_ISSUER_* settings)."""
    address = settings.RECEIPT_ISSUER_ADDRESS or ""
    return Issuer(
        name=settings.RECEIPT_ISSUER_NAME,
        address_lines=tuple(line.strip() for line in address.splitlines() if line.strip()),
        vat_number=settings.RECEIPT_ISSUER_VAT_NUMBER,
        email=settings.RECEIPT_ISSUER_EMAIL,
    )


@dataclass(frozen=True, slots=True)
class ReceiptDocument:
    """What a receipt shows, HTML and PDF alike; built with the receipt's language active."""

    receipt: Receipt
    issuer: Issuer
    title: str
    kind_label: str
    customer_name: str
    customer_email: str
    billing: tuple[tuple[str, str], ...]  # (label, value) of the details filled in
    method_label: str
    method: str  # how the money moved
    tx_hash: str  # a withdrawal's transfer on chain
    amount_text: str  # in the receipt's language: "1,234.50" / "1.234,50"
    issued_text: str
    note: str
    reversal_note: str  # the transaction was reversed since (the receipt itself never changes)

    @property
    def filename(self) -> str:
        return f"receipt-{self.receipt.reference}.pdf"


def receipt_document(receipt: Receipt) -> ReceiptDocument:
    """The document of a receipt from customer_receipt (no query of its own)."""
    labels = {
        "company_name": gettext("Company"),
        "vat_number": gettext("VAT number"),
        "address": gettext("Address"),
    }
    billing = tuple(
        (labels[key], receipt.billing[key]) for key in labels if receipt.billing.get(key)
    )
    txn = receipt.transaction
    payment, withdrawal = txn.payment, txn.withdrawal
    if withdrawal is not None:
        method = gettext("%(asset)s on %(network)s to %(address)s") % {
            "asset": withdrawal.asset,
            "network": network_name(withdrawal.network),
            "address": withdrawal.to_address,
        }
    elif receipt.kind == TransactionKind.REFUND:
        # An early end's refund is credited to the balance; an invalid payment's money was
        # sent back outside the site.
        method = (
            gettext("Sent back outside the site")
            if payment is not None and txn.order_id is None
            else gettext("Credited to the USD balance")
        )
    elif payment is not None:
        method = gettext("%(asset)s on %(network)s, payment %(reference)s") % {
            "asset": payment.asset,
            "network": network_name(payment.network),
            "reference": payment.reference,
        }
    else:
        method = gettext("USD balance")
    if withdrawal is not None:
        method_label = gettext("Sent")
    elif receipt.kind == TransactionKind.REFUND:
        method_label = gettext("Refunded")
    else:
        method_label = gettext("Paid with")
    issuer = receipt_issuer()
    customer = receipt.customer
    return ReceiptDocument(
        receipt=receipt,
        issuer=issuer,
        title=gettext("Receipt %(reference)s") % {"reference": receipt.reference},
        kind_label=str(TransactionKind(receipt.kind).label),
        customer_name=f"{customer.first_name} {customer.last_name}".strip(),
        customer_email=customer.email,
        billing=billing,
        method_label=method_label,
        method=method,
        tx_hash=withdrawal.tx_hash if withdrawal is not None else "",
        amount_text=number_format(
            receipt.amount_usd, decimal_pos=2, use_l10n=True, force_grouping=True
        ),
        issued_text=date_format(timezone.localtime(receipt.issued_at), "DATETIME_FORMAT"),
        reversal_note=(
            gettext("This transaction was reversed on %(date)s: the reversal is on your statement.")
            % {"date": date_format(timezone.localtime(receipt.reversed_at), "DATETIME_FORMAT")}
            if getattr(receipt, "reversed_at", None)
            else ""
        ),
        note=gettext(
            "Amounts in USD; stablecoins count 1:1 to USD. Questions about this receipt: %(email)s"
        )
        % {"email": issuer.email},
    )
