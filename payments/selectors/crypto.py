"""Reads for the customer's crypto payment pages: choices, and what a page must show of a
payment — the payment page (`payment_view`) and the order page (`order_payments_view`).

Pages render from these views, never from status strings: instructions, QR code, copy buttons
and countdown only while money is still due, for the amount still due; otherwise what
happened to the money (paid, credited to the balance, in review).

Nothing here calls a node: confirmations are counted from the watcher's cursor, which is read
from the database (the watcher reads up to HEAD_LAG blocks behind the head).
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from functools import cached_property

import segno
from django.db import models
from django.db.models import DecimalField, FilteredRelation, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental.models import Order, OrderStatus

from ..models import (
    DECLARABLE_STATUSES,
    FINAL_STATUSES,
    LIVE_STATUSES,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from ..networks import (
    HEAD_LAG,
    Network,
    all_networks,
    confirmations_at,
    enabled_networks,
    units_to_usd,
)

# ------------------------------------------------------------------------------ choices


@dataclass(frozen=True, slots=True)
class StablecoinChoice:
    network_key: str
    network_name: str
    asset_symbol: str

    @property
    def value(self) -> str:
        return f"{self.network_key}:{self.asset_symbol}"

    @property
    def label(self) -> str:
        return gettext("%(asset)s on %(network)s") % {
            "asset": self.asset_symbol,
            "network": self.network_name,
        }


def stablecoin_choices() -> list[StablecoinChoice]:
    """One choice per asset of every enabled network (read from settings, no query)."""
    return [
        StablecoinChoice(network.key, str(network.name), asset.symbol)
        for network in enabled_networks().values()
        for asset in network.assets
    ]


def network_name(key: str) -> str:
    network = all_networks().get(key)
    return str(network.name) if network else key


# ---------------------------------------------------------------------------- amounts


def token_amount(units: Decimal | int, decimals: int) -> str:
    """Base units as the token's decimal amount with all its decimals: "893.760000".

    A string on purpose: it is what a wallet expects, so it is never localised.
    """
    return f"{Decimal(int(units)).scaleb(-decimals):f}"


def transfer_confirmations(
    *, block_number: int, cursor_next_block: int | None, required: int
) -> int:
    """Confirmations of a transfer in `block_number`, from the watcher's cursor alone.

    The watcher has read up to `cursor_next_block - 1`, which is HEAD_LAG blocks behind the
    head it saw; the block holding the transfer counts as the first confirmation. Never below
    0 (a cursor behind the transfer's block) nor above `required`.
    """
    if cursor_next_block is None:
        return 0
    head = cursor_next_block - 1 + HEAD_LAG
    return min(required, confirmations_at(head=head, block_number=block_number))


# ------------------------------------------------------------------ what a page must show

ZERO_USD = Decimal("0.00")
CENT = Decimal("0.01")
USD_FIELD = DecimalField(max_digits=14, decimal_places=2)
# Ledger transactions that credit a payment's money to the customer's balance: a top-up, the
# money of a payment its order no longer needed, the surplus over an order's total.
CREDIT_KINDS = (
    TransactionKind.TOP_UP,
    TransactionKind.PAYMENT_CREDIT,
    TransactionKind.OVERPAYMENT_CREDIT,
)


class PaymentState(models.TextChoices):
    """What a payment means to its customer now: the one vocabulary of the pages."""

    AWAITING = "awaiting", _("Waiting for the transfer")
    PARTLY_RECEIVED = "partly_received", _("Partly received")
    CONFIRMING = "confirming", _("Transfer seen, confirming")
    TIME_UP = "time_up", _("Time to pay is over")
    PAID = "paid", _("Confirmed")
    EXPIRED = "expired", _("Expired")
    CLOSED = "closed", _("Closed")
    IN_REVIEW = "in_review", _("Under review")
    RESOLVED = "resolved", _("Resolved")
    INVALID = "invalid", _("Invalid")


# The states in which the customer is asked to send money (the amount still due).
ASKING_STATES = (PaymentState.AWAITING, PaymentState.PARTLY_RECEIVED)

_STATE_OF_STATUS = {
    PaymentStatus.CONFIRMED: PaymentState.PAID,
    PaymentStatus.EXPIRED: PaymentState.EXPIRED,
    PaymentStatus.CLOSED: PaymentState.CLOSED,
    PaymentStatus.NEEDS_REVIEW: PaymentState.IN_REVIEW,
    PaymentStatus.RESOLVED: PaymentState.RESOLVED,
    PaymentStatus.INVALID: PaymentState.INVALID,
}

REVIEW_REASON_TEXT = {
    ReviewReason.UNDERPAID: _("Less than the amount due arrived before the expiry."),
    ReviewReason.PAID_LATE: _("The money arrived after the payment expired."),
    ReviewReason.OVERPAID: _("More than the amount due arrived."),
    ReviewReason.UNMATCHED: _("A transfer arrived that does not match this payment."),
    ReviewReason.REVERSED: _("A confirmed transfer was reversed by the network."),
}


def still_due_units(*, status: str, due, received, seen) -> int:
    """What the payment still lacks (due minus received minus seen, never negative); nothing
    once it is no longer live: an expired, closed or settled payment asks for nothing."""
    if status not in LIVE_STATUSES:
        return 0
    return max(int(due) - int(received) - int(seen), 0)


def payment_state(*, status: str, due, received, seen, expires_at, now) -> str:
    """The payment's state for its customer (a PaymentState value)."""
    if status not in LIVE_STATUSES:
        return _STATE_OF_STATUS.get(status, PaymentState.IN_REVIEW)
    if not still_due_units(status=status, due=due, received=received, seen=seen):
        return PaymentState.CONFIRMING
    if now >= expires_at:
        return PaymentState.TIME_UP
    if int(received) or int(seen):
        return PaymentState.PARTLY_RECEIVED
    return PaymentState.AWAITING


def _ledger_sum(account_kind: str, kinds, outer: str = "pk"):
    """The sum of a payment's ledger entries on accounts of `account_kind`, in transactions
    of `kinds` (a correlated subquery: no query of its own)."""
    entries = (
        LedgerEntry.objects.filter(
            transaction__payment=OuterRef(outer),
            transaction__kind__in=kinds,
            account__kind=account_kind,
        )
        .order_by()
        .values("transaction__payment")
        .annotate(total=Sum("amount"))
        .values("total")[:1]
    )
    return Coalesce(Subquery(entries), Value(ZERO_USD), output_field=USD_FIELD)


def _money_annotations(outer: str = "pk") -> dict:
    """Where the ledger put each payment's money: the customer's balance, an order, a refund."""
    return {
        "credited_usd": _ledger_sum(LedgerAccountKind.CUSTOMER_BALANCE, CREDIT_KINDS, outer),
        "paid_usd": _ledger_sum(LedgerAccountKind.REVENUE, (TransactionKind.ORDER_PAYMENT,), outer),
        "refunded_usd": _ledger_sum(LedgerAccountKind.REFUNDS, (TransactionKind.REFUND,), outer),
    }


def _ceil_usd(units: int, decimals: int) -> Decimal:
    """USD of an amount to send, rounded up: the USD shown never asks for less than due."""
    return Decimal(units).scaleb(-decimals).quantize(CENT, rounding=ROUND_UP)


# ------------------------------------------------------------------------ the payment


def customer_payment(*, customer: User, payment_id: int) -> CryptoPayment:
    """The customer's own payment, with where the ledger put its money (credited_usd,
    paid_usd, refunded_usd); another customer's raises CryptoPayment.DoesNotExist."""
    return (
        CryptoPayment.objects.select_related("deposit_address", "order")
        .annotate(**_money_annotations())
        .filter(customer=customer)
        .get(pk=payment_id)
    )


@dataclass(frozen=True, slots=True)
class TransferProgress:
    tx_hash: str
    explorer_url: str
    block_number: int
    amount_units: int
    amount: str  # machine form, "100.000000"
    confirmations: int
    required: int
    confirmed: bool
    reversed: bool


def payment_uri(payment: CryptoPayment, units: int | None = None) -> str:
    """EIP-681: a transfer of `units` (by default the whole amount due) of the token to the
    deposit address."""
    units = int(payment.amount_due_units) if units is None else int(units)
    return (
        f"ethereum:{payment.token_address}@{payment.chain_id}/transfer"
        f"?address={payment.deposit_address.address}&uint256={units}"
    )


def payment_qr_svg(uri: str) -> SafeString:
    svg = segno.make(uri, error="m", micro=False).svg_inline(
        scale=4, light="#fff", svgclass="payment-qr"
    )
    # segno writes the whole SVG from the QR matrix: no text of ours is embedded in it.
    return mark_safe(svg)  # noqa: S308


@dataclass
class PaymentView:
    """What the payment page shows, decided here once from the payment's state.

    Instructions (what to send, where, the QR code, the copy buttons and the countdown) only
    while money is still due, before the expiry, and then for the amount still due; in every
    other state what happened to the money instead.
    """

    payment: CryptoPayment
    network: Network | None
    transfers: list[TransferProgress]
    state: str
    amount_still_due_units: int
    credited_usd: Decimal  # of this payment's money, credited to the customer's balance
    paid_usd: Decimal  # of this payment's money, paid for its order
    refunded_usd: Decimal  # of this payment's money, refunded outside the site

    @property
    def shows_instructions(self) -> bool:
        return self.state in ASKING_STATES

    @property
    def shows_countdown(self) -> bool:
        return self.shows_instructions

    @property
    def state_label(self) -> str:
        return PaymentState(self.state).label

    @property
    def received_units(self) -> int:
        """Confirmed on chain."""
        return int(self.payment.received_units)

    @property
    def confirming_units(self) -> int:
        """Seen on chain, not yet confirmed."""
        return int(self.payment.seen_units)

    @property
    def partly_received(self) -> bool:
        return self.state == PaymentState.PARTLY_RECEIVED

    @property
    def amount_still_due(self) -> str:
        """Machine form, what a wallet expects and the copy button copies: "793.760000"."""
        return token_amount(self.amount_still_due_units, self.payment.decimals)

    @property
    def amount_still_due_usd(self) -> Decimal:
        if self.amount_still_due_units == int(self.payment.amount_due_units):
            return self.payment.amount_due_usd
        return _ceil_usd(self.amount_still_due_units, self.payment.decimals)

    @property
    def uri(self) -> str:
        """The EIP-681 request for the amount still due; none when nothing is asked for."""
        if not self.shows_instructions:
            return ""
        return payment_uri(self.payment, units=self.amount_still_due_units)

    @cached_property
    def qr_svg(self) -> SafeString:
        return payment_qr_svg(self.uri) if self.uri else mark_safe("")

    @property
    def review_text(self) -> str:
        if self.state != PaymentState.IN_REVIEW:
            return ""
        reason = REVIEW_REASON_TEXT.get(self.payment.review_reason)
        return str(reason or REVIEW_REASON_TEXT[ReviewReason.UNMATCHED])

    @property
    def polling(self) -> bool:
        return self.payment.status not in FINAL_STATUSES

    @property
    def can_declare(self) -> bool:
        return self.payment.declared_at is None and self.payment.status in DECLARABLE_STATUSES

    @property
    def instructions_key(self) -> str:
        """What the upper part of the page shows; the polled status brings a new one when
        this changes (a partial transfer, the payment paid, closed or expired)."""
        return f"{self.state}-{self.amount_still_due_units}"


def payment_view(
    payment: CryptoPayment,
    *,
    transfers: Iterable[ChainTransfer],
    cursor_next_block: int | None,
    now=None,
) -> PaymentView:
    """The view of `payment` (from customer_payment: its money annotations are read) with its
    transfers (reorganised ones left out by the caller)."""
    now = now or timezone.now()
    network = all_networks().get(payment.network)
    explorer = network.explorer_tx_url if network else ""
    required = payment.confirmations_required
    progress = []
    for transfer in transfers:
        confirmed = transfer.status == TransferStatus.CONFIRMED
        progress.append(
            TransferProgress(
                tx_hash=transfer.tx_hash,
                explorer_url=f"{explorer}{transfer.tx_hash}" if explorer else "",
                block_number=transfer.block_number,
                amount_units=int(transfer.amount_units),
                amount=token_amount(transfer.amount_units, payment.decimals),
                confirmations=(
                    required
                    if confirmed
                    else transfer_confirmations(
                        block_number=transfer.block_number,
                        cursor_next_block=cursor_next_block,
                        required=required,
                    )
                ),
                required=required,
                confirmed=confirmed,
                reversed=transfer.status == TransferStatus.REVERSED,
            )
        )
    money = {
        "status": payment.status,
        "due": payment.amount_due_units,
        "received": payment.received_units,
        "seen": payment.seen_units,
    }
    return PaymentView(
        payment=payment,
        network=network,
        transfers=progress,
        state=payment_state(**money, expires_at=payment.expires_at, now=now),
        amount_still_due_units=still_due_units(**money),
        credited_usd=getattr(payment, "credited_usd", None) or ZERO_USD,
        paid_usd=getattr(payment, "paid_usd", None) or ZERO_USD,
        refunded_usd=getattr(payment, "refunded_usd", None) or ZERO_USD,
    )


def customer_payment_view(*, customer: User, payment_id: int) -> PaymentView:
    """The customer's payment as its page shows it, in three queries (the payment with its
    money in the ledger, the watcher's cursor, the transfers)."""
    payment = customer_payment(customer=customer, payment_id=payment_id)
    cursor_next_block = (
        ChainCursor.objects.filter(network=payment.network)
        .values_list("next_block", flat=True)
        .first()
    )
    transfers = (
        ChainTransfer.objects.filter(payment=payment)
        .exclude(status=TransferStatus.REORGED)
        .order_by("block_number", "log_index")
    )
    return payment_view(payment, transfers=transfers, cursor_next_block=cursor_next_block)


# The page and its polled status partial render the same view.
payment_page = customer_payment_view
payment_progress = customer_payment_view


# ---------------------------------------------------------------------- the order page


@dataclass(frozen=True, slots=True)
class OrderPaymentRow:
    """One of the order's payments, as the order page lists it."""

    pk: int
    asset: str
    network_name: str
    decimals: int
    status: str
    state: str
    received_units: int
    confirming_units: int
    amount_still_due_units: int
    credited_usd: Decimal
    refunded_usd: Decimal
    live: bool

    @property
    def reference(self) -> str:
        return CryptoPayment(pk=self.pk).reference

    @property
    def state_label(self) -> str:
        return PaymentState(self.state).label

    @property
    def arrived_units(self) -> int:
        return self.received_units + self.confirming_units


@dataclass(frozen=True, slots=True)
class OrderPayments:
    """The order's stablecoin payments (newest first) and the customer's balance."""

    order: Order
    balance: Decimal
    payments: list[OrderPaymentRow]

    @property
    def live_payment(self) -> OrderPaymentRow | None:
        return next((row for row in self.payments if row.live), None)

    @property
    def received_usd(self) -> Decimal:
        """Confirmed on the open payment (money on closed ones went to the balance)."""
        live = self.live_payment
        return units_to_usd(live.received_units, live.decimals) if live else ZERO_USD

    @property
    def confirming_usd(self) -> Decimal:
        live = self.live_payment
        return units_to_usd(live.confirming_units, live.decimals) if live else ZERO_USD

    @property
    def arrived_usd(self) -> Decimal:
        live = self.live_payment
        return units_to_usd(live.arrived_units, live.decimals) if live else ZERO_USD

    @property
    def amount_due_usd(self) -> Decimal:
        """The order's total less what arrived on its open payment."""
        return max(self.order.total_usd - self.arrived_usd, ZERO_USD)

    @property
    def covers(self) -> bool:
        return self.balance >= self.order.total_usd

    @property
    def shortfall(self) -> Decimal:
        return max(self.order.total_usd - self.balance, ZERO_USD)

    @property
    def can_choose_stablecoin(self) -> bool:
        """Another asset or network only while nothing arrived on the open payment (as
        payment_create_for_order allows)."""
        live = self.live_payment
        return live is None or (live.status == PaymentStatus.AWAITING and not live.arrived_units)

    @property
    def credited_usd(self) -> Decimal:
        return sum((row.credited_usd for row in self.payments), ZERO_USD)

    @property
    def refunded_usd(self) -> Decimal:
        return sum((row.refunded_usd for row in self.payments), ZERO_USD)

    @property
    def still_confirming(self) -> list[OrderPaymentRow]:
        """Payments no longer live with money still confirming (credited once confirmed)."""
        return [row for row in self.payments if not row.live and row.confirming_units]

    @property
    def cancelled(self) -> bool:
        return self.order.status == OrderStatus.CANCELLED

    @property
    def nothing_arrived(self) -> bool:
        return not any(
            row.arrived_units or row.credited_usd or row.refunded_usd for row in self.payments
        )


_ROW_FIELDS = (
    "pk",
    "asset",
    "network",
    "decimals",
    "status",
    "amount_due_units",
    "received_units",
    "seen_units",
    "expires_at",
)


def order_payments_view(*, order: Order, now=None) -> OrderPayments:
    """The customer's balance and every payment of the order with its money, in one query:
    the customer's row, joined to the order's payments (none: one row of NULLs)."""
    now = now or timezone.now()
    balance = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=OuterRef("pk")
    ).values("balance")[:1]
    money = _money_annotations(outer="order_payment__pk")
    rows = (
        User.objects.filter(pk=order.customer_id)
        .annotate(
            order_payment=FilteredRelation(
                "crypto_payments", condition=Q(crypto_payments__order=order)
            ),
            balance=Subquery(balance),
        )
        .annotate(**{f"money_{name}": value for name, value in money.items()})
        .values(
            "balance",
            *(f"order_payment__{name}" for name in _ROW_FIELDS),
            *(f"money_{name}" for name in money),
        )
        .order_by("-order_payment__created_at", "-order_payment__pk")
    )
    balance_usd, payments = ZERO_USD, []
    for row in rows:
        if row["balance"] is not None:
            balance_usd = row["balance"]
        values = {name: row[f"order_payment__{name}"] for name in _ROW_FIELDS}
        if values["pk"] is None:
            continue
        amounts = {
            "status": values["status"],
            "due": values["amount_due_units"],
            "received": values["received_units"],
            "seen": values["seen_units"],
        }
        payments.append(
            OrderPaymentRow(
                pk=values["pk"],
                asset=values["asset"],
                network_name=network_name(values["network"]),
                decimals=values["decimals"],
                status=values["status"],
                state=payment_state(**amounts, expires_at=values["expires_at"], now=now),
                received_units=int(values["received_units"]),
                confirming_units=int(values["seen_units"]),
                amount_still_due_units=still_due_units(**amounts),
                credited_usd=row["money_credited_usd"],
                refunded_usd=row["money_refunded_usd"],
                live=values["status"] in LIVE_STATUSES,
            )
        )
    return OrderPayments(order=order, balance=balance_usd, payments=payments)
