"""The customer's payment history: every crypto payment with its state (the payment page's own
view of it, payment_page.payment_view) and every movement of the USD balance with its receipt.

Each list is one query per page whatever its length (plus the paginator's count).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from rental.models import Order, OrderExtension

from ...models import (
    LIVE_STATUSES,
    CryptoPayment,
    LedgerAccountKind,
    LedgerEntry,
    PaymentStatus,
    Receipt,
    TransactionKind,
)
from .payment_page import PaymentView, payment_view
from .state import PaymentState


def customer_payments(*, customer: User) -> QuerySet[CryptoPayment]:
    """The customer's crypto payments, newest first (no join: what a row shows is on it)."""
    return CryptoPayment.objects.filter(customer=customer).order_by("-created_at", "-pk")


def state_condition(state: str, now: datetime | None = None) -> Q:
    """The payments whose page state (state.payment_state) is `state` now, as a condition on
    their columns: the same decision, made by the database for a whole list."""
    now = now or timezone.now()
    live = Q(status__in=LIVE_STATUSES)
    still_due = Q(amount_due_units__gt=F("received_units") + F("seen_units"))
    before_expiry = Q(expires_at__gt=now)
    nothing_yet = Q(received_units=0, seen_units=0)
    conditions = {
        PaymentState.AWAITING: live & still_due & before_expiry & nothing_yet,
        PaymentState.PARTLY_RECEIVED: live & still_due & before_expiry & ~nothing_yet,
        PaymentState.CONFIRMING: live & ~still_due,
        PaymentState.TIME_UP: live & still_due & ~before_expiry,
        PaymentState.PAID: Q(status=PaymentStatus.CONFIRMED),
        PaymentState.EXPIRED: Q(status=PaymentStatus.EXPIRED),
        PaymentState.CLOSED: Q(status=PaymentStatus.CLOSED),
        PaymentState.IN_REVIEW: Q(status=PaymentStatus.NEEDS_REVIEW),
        PaymentState.RESOLVED: Q(status=PaymentStatus.RESOLVED),
        PaymentState.INVALID: Q(status=PaymentStatus.INVALID),
    }
    return conditions[PaymentState(state)]


def order_condition(order_id: int) -> Q:
    """An order's payments: its own and its extensions'."""
    return Q(order__pk=order_id) | Q(extension__order__pk=order_id)


@dataclass(frozen=True, slots=True)
class PaymentRow:
    view: PaymentView  # the payment page's view: its state label, what arrived

    @property
    def payment(self) -> CryptoPayment:
        return self.view.payment

    @property
    def order_reference(self) -> str:
        order_id = self.view.payment.order_id
        return Order(pk=order_id).reference if order_id else ""

    @property
    def extension_reference(self) -> str:
        extension_id = self.view.payment.extension_id
        return OrderExtension(pk=extension_id).reference if extension_id else ""


def payment_rows(payments: Iterable[CryptoPayment]) -> list[PaymentRow]:
    """Each payment as its page sees its state (no transfers: the state does not need them)."""
    return [PaymentRow(payment_view(p, transfers=(), cursor_next_block=None)) for p in payments]


def customer_movements(*, customer: User) -> QuerySet[LedgerEntry]:
    """Every entry of the customer's balance, newest first, with its transaction, the
    withdrawal it belongs to, and `receipt_number`: the transaction's receipt or, for a
    withdrawal's request, the receipt issued when it was paid out (None when none)."""
    paid_out = Receipt.objects.filter(
        transaction__withdrawal_id=OuterRef("transaction__withdrawal_id"),
        kind=TransactionKind.WITHDRAWAL_PAID,
    ).values("number")[:1]
    return (
        LedgerEntry.objects.filter(
            account__kind=LedgerAccountKind.CUSTOMER_BALANCE, account__customer=customer
        )
        .select_related("transaction", "transaction__withdrawal")
        .annotate(
            receipt_number=Coalesce(
                F("transaction__receipt__number"),
                Subquery(paid_out, output_field=IntegerField()),
                output_field=IntegerField(),
            )
        )
        .order_by("-transaction__created_at", "-pk")
    )


@dataclass(frozen=True, slots=True)
class MovementRow:
    entry: LedgerEntry

    @property
    def transaction(self):
        return self.entry.transaction

    @property
    def kind_label(self) -> str:
        return self.entry.transaction.get_kind_display()

    @property
    def adjustment_reason(self) -> str:
        """A finance adjustment's reason (its memo), shown with it; "" for other movements."""
        txn = self.entry.transaction
        return txn.memo if txn.kind == TransactionKind.ADJUSTMENT else ""

    @property
    def state_label(self) -> str:
        """A withdrawal's state; other movements are final once posted."""
        withdrawal = self.entry.transaction.withdrawal
        return withdrawal.get_status_display() if withdrawal else ""

    @property
    def order_reference(self) -> str:
        order_id = self.entry.transaction.order_id
        return Order(pk=order_id).reference if order_id else ""

    @property
    def payment_reference(self) -> str:
        payment_id = self.entry.transaction.payment_id
        return CryptoPayment(pk=payment_id).reference if payment_id else ""

    @property
    def receipt_reference(self) -> str:
        number = self.entry.receipt_number
        return Receipt(number=number).reference if number else ""


def movement_rows(entries: Iterable[LedgerEntry]) -> list[MovementRow]:
    return [MovementRow(entry) for entry in entries]
