"""Reads for the customer's crypto payment pages: choices, the payment, its progress, its QR.

Nothing here calls a node: confirmations are counted from the watcher's cursor, which is read
from the database (the watcher reads up to HEAD_LAG blocks behind the head).
"""

from dataclasses import dataclass
from decimal import Decimal

import segno
from django.db.models import OuterRef, Subquery
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from accounts.models import User
from rental.models import Order

from ..models import (
    DECLARABLE_STATUSES,
    FINAL_STATUSES,
    LIVE_STATUSES,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    TransferStatus,
)
from ..networks import HEAD_LAG, Network, all_networks, confirmations_at, enabled_networks

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


# ------------------------------------------------------------------------ the payment


def customer_payment(*, customer: User, payment_id: int) -> CryptoPayment:
    """The customer's own payment; another customer's raises CryptoPayment.DoesNotExist."""
    return (
        CryptoPayment.objects.select_related("deposit_address", "order")
        .filter(customer=customer)
        .get(pk=payment_id)
    )


@dataclass(frozen=True, slots=True)
class TransferProgress:
    tx_hash: str
    explorer_url: str
    block_number: int
    amount: str
    confirmations: int
    required: int
    confirmed: bool


@dataclass(frozen=True, slots=True)
class PaymentProgress:
    payment: CryptoPayment
    network: Network | None
    transfers: list[TransferProgress]
    received: str
    seen: str
    remaining: str | None  # what is still to send, once something arrived but not enough
    polling: bool
    can_declare: bool


def _progress(payment: CryptoPayment) -> PaymentProgress:
    network = all_networks().get(payment.network)
    cursor_next_block = (
        ChainCursor.objects.filter(network=payment.network)
        .values_list("next_block", flat=True)
        .first()
    )
    explorer = network.explorer_tx_url if network else ""
    transfers = [
        TransferProgress(
            tx_hash=transfer.tx_hash,
            explorer_url=f"{explorer}{transfer.tx_hash}" if explorer else "",
            block_number=transfer.block_number,
            amount=token_amount(transfer.amount_units, payment.decimals),
            confirmations=(
                payment.confirmations_required
                if transfer.status == TransferStatus.CONFIRMED
                else transfer_confirmations(
                    block_number=transfer.block_number,
                    cursor_next_block=cursor_next_block,
                    required=payment.confirmations_required,
                )
            ),
            required=payment.confirmations_required,
            confirmed=transfer.status == TransferStatus.CONFIRMED,
        )
        for transfer in ChainTransfer.objects.filter(payment=payment)
        .exclude(status=TransferStatus.REORGED)
        .order_by("block_number", "log_index")
    ]
    arrived = payment.received_units + payment.seen_units
    remaining = None
    if payment.status in LIVE_STATUSES and 0 < arrived < payment.amount_due_units:
        remaining = token_amount(payment.amount_due_units - arrived, payment.decimals)
    return PaymentProgress(
        payment=payment,
        network=network,
        transfers=transfers,
        received=token_amount(payment.received_units, payment.decimals),
        seen=token_amount(payment.seen_units, payment.decimals),
        remaining=remaining,
        polling=payment.status not in FINAL_STATUSES,
        can_declare=payment.declared_at is None and payment.status in DECLARABLE_STATUSES,
    )


def payment_progress(*, customer: User, payment_id: int) -> PaymentProgress:
    """What the status partial shows: three queries (payment, cursor, transfers)."""
    return _progress(customer_payment(customer=customer, payment_id=payment_id))


def payment_uri(payment: CryptoPayment) -> str:
    """EIP-681: a transfer of `amount_due_units` of the token to the deposit address."""
    return (
        f"ethereum:{payment.token_address}@{payment.chain_id}/transfer"
        f"?address={payment.deposit_address.address}&uint256={int(payment.amount_due_units)}"
    )


def payment_qr_svg(uri: str) -> SafeString:
    svg = segno.make(uri, error="m", micro=False).svg_inline(
        scale=4, light="#fff", svgclass="payment-qr"
    )
    # segno writes the whole SVG from the QR matrix: no text of ours is embedded in it.
    return mark_safe(svg)  # noqa: S308


@dataclass(frozen=True, slots=True)
class PaymentPage:
    progress: PaymentProgress
    amount_due: str
    uri: str
    qr_svg: SafeString

    @property
    def payment(self) -> CryptoPayment:
        return self.progress.payment


def payment_page(*, customer: User, payment_id: int) -> PaymentPage:
    """Everything the payment page shows, in three queries."""
    progress = payment_progress(customer=customer, payment_id=payment_id)
    payment = progress.payment
    uri = payment_uri(payment)
    return PaymentPage(
        progress=progress,
        amount_due=token_amount(payment.amount_due_units, payment.decimals),
        uri=uri,
        qr_svg=payment_qr_svg(uri),
    )


# ---------------------------------------------------------------------- the order page


@dataclass(frozen=True, slots=True)
class LivePayment:
    pk: int
    asset: str
    network_name: str
    status: str


@dataclass(frozen=True, slots=True)
class OrderPaymentStep:
    balance: Decimal
    live_payment: LivePayment | None
    choices: list[StablecoinChoice]


_LIVE_FIELDS = ("pk", "asset", "network", "status")


def order_payment_step(*, order: Order) -> OrderPaymentStep:
    """The customer's balance and the order's live crypto payment, in one query."""
    live = CryptoPayment.objects.filter(order=order, status__in=LIVE_STATUSES).order_by(
        "-created_at", "-pk"
    )
    balance = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=OuterRef("pk")
    ).values("balance")[:1]
    row = (
        User.objects.filter(pk=order.customer_id)
        .annotate(
            balance=Subquery(balance),
            **{f"live_{name}": Subquery(live.values(name)[:1]) for name in _LIVE_FIELDS},
        )
        .values("balance", *(f"live_{name}" for name in _LIVE_FIELDS))
        .get()
    )
    live_payment = None
    if row["live_pk"] is not None:
        live_payment = LivePayment(
            pk=row["live_pk"],
            asset=row["live_asset"],
            network_name=network_name(row["live_network"]),
            status=row["live_status"],
        )
    return OrderPaymentStep(
        balance=row["balance"] if row["balance"] is not None else Decimal("0.00"),
        live_payment=live_payment,
        choices=stablecoin_choices(),
    )
