"""Reads for the operators' queue: what needs a decision, and everything about one payment.

Every read runs a fixed number of queries whatever the number of rows.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Prefetch, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ..models import (
    ChainTransfer,
    CryptoPayment,
    PaymentEvent,
    PaymentStatus,
    TransferReview,
)
from .crypto import network_name

RECENTLY_CONFIRMED = 20

# What each kind of PaymentEvent means, for the payment's history.
EVENT_LABELS = {
    "created": _("Payment created"),
    "replaced": _("Replaced by another asset or network"),
    "declared": _("Customer declared the payment"),
    "seen": _("Transfer seen"),
    "reorged": _("Transfer dropped by a reorganisation"),
    "confirmed_transfer": _("Transfer confirmed"),
    "unmatched_transfer": _("Transfer confirmed, left to an operator"),
    "payment_confirmed": _("Payment confirmed"),
    "expired": _("Expired"),
    "review": _("Sent to review"),
    "marked_settled": _("Marked settled"),
    "credited_to_balance": _("Credited to the balance"),
    "marked_invalid": _("Marked invalid"),
    "transfer_credited": _("Transfer credited to the balance"),
    "transfer_invalid": _("Transfer marked invalid"),
}


def _payments() -> QuerySet[CryptoPayment]:
    return CryptoPayment.objects.select_related("customer", "order", "deposit_address")


def _transfers() -> QuerySet[ChainTransfer]:
    return ChainTransfer.objects.select_related("payment", "payment__customer")


@dataclass(frozen=True, slots=True)
class OpsQueue:
    in_review: list[CryptoPayment]
    declared_stale: list[CryptoPayment]
    open_transfers: list[ChainTransfer]
    recently_confirmed: list[CryptoPayment]
    stale_minutes: int


def declared_stale_before(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(minutes=settings.PAYMENT_DECLARED_STALE_MINUTES)


def ops_queue(*, now: datetime | None = None) -> OpsQueue:
    """Four lists, four queries: payments in review, declarations with nothing seen for too
    long, confirmed transfers that fit no payment, and the newest confirmed payments."""
    return OpsQueue(
        in_review=list(
            _payments().filter(status=PaymentStatus.NEEDS_REVIEW).order_by("updated_at", "pk")
        ),
        declared_stale=list(
            _payments()
            .filter(status=PaymentStatus.AWAITING, declared_at__lt=declared_stale_before(now))
            .order_by("declared_at", "pk")
        ),
        open_transfers=list(
            _transfers().filter(review_state=TransferReview.OPEN).order_by("confirmed_at", "pk")
        ),
        recently_confirmed=list(
            _payments()
            .filter(status=PaymentStatus.CONFIRMED)
            .order_by("-confirmed_at", "-pk")[:RECENTLY_CONFIRMED]
        ),
        stale_minutes=settings.PAYMENT_DECLARED_STALE_MINUTES,
    )


@dataclass(frozen=True, slots=True)
class OpsEvent:
    event: PaymentEvent
    label: str


@dataclass(frozen=True, slots=True)
class OpsPayment:
    payment: CryptoPayment
    network_name: str
    transfers: list[ChainTransfer]
    events: list[OpsEvent]

    @property
    def in_review(self) -> bool:
        return self.payment.status == PaymentStatus.NEEDS_REVIEW


def ops_payment(*, payment_id: int) -> OpsPayment:
    """The payment with its customer, order, transfers and history (three queries); a
    missing id raises CryptoPayment.DoesNotExist."""
    payment = (
        _payments()
        .prefetch_related(
            Prefetch("transfers", queryset=ChainTransfer.objects.order_by("block_number", "pk")),
            Prefetch(
                "events",
                queryset=PaymentEvent.objects.select_related("actor").order_by("created_at", "pk"),
            ),
        )
        .get(pk=payment_id)
    )
    return OpsPayment(
        payment=payment,
        network_name=network_name(payment.network),
        transfers=list(payment.transfers.all()),
        events=[
            OpsEvent(event, str(EVENT_LABELS.get(event.kind, event.kind)))
            for event in payment.events.all()
        ],
    )


@dataclass(frozen=True, slots=True)
class OpsTransferDetail:
    transfer: ChainTransfer
    payment: CryptoPayment | None
    network_name: str

    @property
    def is_open(self) -> bool:
        return self.transfer.review_state == TransferReview.OPEN


def ops_transfer(*, transfer_id: int) -> OpsTransferDetail:
    """One transfer with its payment and customer (one query); a missing id raises
    ChainTransfer.DoesNotExist."""
    transfer = _transfers().select_related("payment__order").get(pk=transfer_id)
    return OpsTransferDetail(
        transfer=transfer, payment=transfer.payment, network_name=network_name(transfer.network)
    )
