"""What the customer's payment page shows of a payment (`customer_payment_view`): one view of
its state, so that the page and its polled status partial never decide it twice."""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from functools import cache, cached_property, lru_cache

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from accounts.models import User
from accounts.statements import CompiledQuery

from ...chain.networks import Network, all_networks
from ...chain.selectors import token_amount
from ...models import (
    DECLARABLE_STATUSES,
    FINAL_STATUSES,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from .state import (
    ASKING_STATES,
    REVIEW_REASON_TEXT,
    ZERO_USD,
    PaymentState,
    _ceil_usd,
    _ledger_sum,
    _money_annotations,
    payment_state,
    still_due_units,
    transfer_confirmations,
)

# The payment page's status poll (PaymentView.poll_seconds).
POLL_FASTEST_SECONDS = 1
POLL_SLOWEST_SECONDS = 5

# ------------------------------------------------------------------------ the payment


# Stand for the request's values while the page's statements are compiled (CompiledQuery).
_ANY_CUSTOMER_ID, _ANY_PAYMENT_ID, _ANY_NETWORK = -7_937, -7_949, "\x00any network"


@cache
def _payment_query() -> CompiledQuery:
    """customer_payment's statement, compiled once per process."""
    return CompiledQuery(
        CryptoPayment.objects.select_related("deposit_address", "order", "extension__order")
        .annotate(
            **_money_annotations(),
            extension_paid_usd=_ledger_sum(
                LedgerAccountKind.REVENUE, (TransactionKind.EXTENSION_PAYMENT,)
            ),
        )
        .filter(customer_id=_ANY_CUSTOMER_ID, pk=_ANY_PAYMENT_ID)
        .order_by(),
        customer=_ANY_CUSTOMER_ID,
        payment=_ANY_PAYMENT_ID,
    )


@cache
def _cursor_query() -> CompiledQuery:
    """The next block the watcher reads on a network (as .first() orders it: by pk)."""
    return CompiledQuery(
        ChainCursor.objects.filter(network=_ANY_NETWORK)
        .order_by("pk")
        .values_list("next_block")[:1],
        network=_ANY_NETWORK,
    )


@cache
def _transfers_query() -> CompiledQuery:
    """A payment's transfers on chain, reorganised ones left out, in the chain's order."""
    return CompiledQuery(
        ChainTransfer.objects.filter(payment_id=_ANY_PAYMENT_ID)
        .exclude(status=TransferStatus.REORGED)
        .order_by("block_number", "log_index"),
        payment=_ANY_PAYMENT_ID,
    )


def customer_payment(*, customer: User, payment_id: int) -> CryptoPayment:
    """The customer's own payment, with where the ledger put its money (credited_usd,
    paid_usd, refunded_usd); another customer's raises CryptoPayment.DoesNotExist."""
    low, high = connection.ops.integer_field_range(CryptoPayment._meta.pk.get_internal_type())
    if low <= payment_id <= high:  # out of range: no such row (the ORM's filter finds none)
        for payment in _payment_query().objects(customer=customer.pk, payment=payment_id):
            return payment
    raise CryptoPayment.DoesNotExist("No such payment of this customer.")


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


# A QR code is a pure function of its URI and costs ~11 ms to draw (half the payment page): drawn
# once per URI and process. A changed amount or address is another URI, so never stale; 256
# codes of ~4 KB each bound the memory of a worker.
@lru_cache(maxsize=256)
def payment_qr_svg(uri: str) -> SafeString:
    import segno  # with xml.sax and urllib.request: loaded by the first payment page only

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
    paid_usd: Decimal  # of this payment's money, paid for its order or its extension
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
    def poll_seconds(self) -> int:
        """How often the status refreshes: twice a block of the payment's network, so that
        a state lasting one block — "seen" on make run's chain, a block before it is confirmed
        — is shown, and each confirmation n/N as the watcher records it; between
        POLL_FASTEST_SECONDS and POLL_SLOWEST_SECONDS (a 12-second Ethereum block is not
        waited for: a declaration or an expiry shows sooner). Never faster than twice a
        look of the watcher (PAYMENT_SCAN_INTERVAL_SECONDS): nothing new can show between."""
        block_time = self.network.block_time_seconds if self.network else POLL_SLOWEST_SECONDS
        pace = max(block_time, settings.PAYMENT_SCAN_INTERVAL_SECONDS)
        every = math.ceil(pace / 2)
        return max(POLL_FASTEST_SECONDS, min(POLL_SLOWEST_SECONDS, every))

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
    # An extension's money is credited to the balance, then pays the extension from there:
    # what stays on the balance is the credit less that payment.
    extension_paid = getattr(payment, "extension_paid_usd", None) or ZERO_USD
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
        credited_usd=(getattr(payment, "credited_usd", None) or ZERO_USD) - extension_paid,
        paid_usd=(getattr(payment, "paid_usd", None) or ZERO_USD) + extension_paid,
        refunded_usd=getattr(payment, "refunded_usd", None) or ZERO_USD,
    )


def customer_payment_view(*, customer: User, payment_id: int) -> PaymentView:
    """The customer's payment as its page shows it, in three queries (the payment with its
    money in the ledger, the watcher's cursor, the transfers)."""
    payment = customer_payment(customer=customer, payment_id=payment_id)
    cursor = _cursor_query().values(network=payment.network)
    cursor_next_block = cursor[0][0] if cursor else None
    transfers = _transfers_query().objects(payment=payment.pk)
    return payment_view(payment, transfers=transfers, cursor_next_block=cursor_next_block)


def payment_page_key(view: PaymentView, *, language: str, htmx: bool, shown: str | None) -> str:
    """Everything the payment page's content shows, read now (the payment's row, its transfers
    with their confirmations, its state and money), with the language and the request's own
    switches: the key of its kept copy (payments_tags' `kept`), new on the very next request
    after any change. The networks are settings; references derive from the ids."""
    payment = view.payment
    fields = tuple(getattr(payment, field.attname) for field in type(payment)._meta.concrete_fields)
    money = (view.state, view.amount_still_due_units, view.credited_usd, view.paid_usd)
    return repr(
        ("payment", language, htmx, shown, fields, tuple(view.transfers), money, view.refunded_usd)
    )
