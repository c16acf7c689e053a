"""Reads for the operators' queue: what needs a decision, and everything about one payment.

Every read runs a fixed number of queries whatever the number of rows.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from ...chain.selectors import network_name
from ...models import (
    ChainTransfer,
    CryptoPayment,
    PaymentEvent,
    PaymentEventKind,
    PaymentStatus,
    ReviewReason,
    TransferStatus,
)

RECENTLY_CONFIRMED = 20


def event_label(event: PaymentEvent) -> str:
    """What a history row says: a status change names the status reached."""
    if event.kind == PaymentEventKind.STATUS and event.to_status:
        return str(PaymentStatus(event.to_status).label)
    try:
        return str(PaymentEventKind(event.kind).label)
    except ValueError:
        return event.kind


def _payments() -> QuerySet[CryptoPayment]:
    return CryptoPayment.objects.select_related("customer", "order", "deposit_address")


def _transfers() -> QuerySet[ChainTransfer]:
    return ChainTransfer.objects.select_related("payment", "payment__customer")


@dataclass(frozen=True, slots=True)
class OpsQueue:
    in_review: list[CryptoPayment]
    declared_stale: list[CryptoPayment]
    reversed_transfers: list[ChainTransfer]
    recently_confirmed: list[CryptoPayment]
    stale_minutes: int


def declared_stale_before(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(minutes=settings.PAYMENT_DECLARED_STALE_MINUTES)


def ops_queue(*, now: datetime | None = None) -> OpsQueue:
    """Four lists, four queries: payments in review, declarations with nothing seen for too
    long, transfers reversed after their confirmation, and the newest confirmed payments."""
    return OpsQueue(
        in_review=list(
            _payments().filter(status=PaymentStatus.NEEDS_REVIEW).order_by("updated_at", "pk")
        ),
        declared_stale=list(
            _payments()
            .filter(status=PaymentStatus.AWAITING, declared_at__lt=declared_stale_before(now))
            .order_by("declared_at", "pk")
        ),
        reversed_transfers=list(
            _transfers()
            .filter(status=TransferStatus.REVERSED, receipted=True)
            .order_by("block_number", "pk")
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

    @property
    def reversed(self) -> bool:
        return self.in_review and self.payment.review_reason == ReviewReason.REVERSED


def ops_payment(*, payment_id: int) -> OpsPayment:
    """The payment with its customer, order, transfers and history (three queries); a
    missing id raises CryptoPayment.DoesNotExist."""
    payment = (
        _payments()
        .select_related("extension__order")
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
        events=[OpsEvent(event, event_label(event)) for event in payment.events.all()],
    )
