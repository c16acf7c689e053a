"""Ending an order early: which case applies, how many hours were not delivered, what they are
worth. The one place where a refund is computed and rounded.

The rule (written on the help page and the order page): the hours not delivered are credited
to the customer's balance at the lot price ÷ the hours of the duration × the hours not
delivered × the lots. Whole hours: a started hour counts as not delivered; never more than the
period. An order that never started (paid, provisioning) gets its whole duration back. A paid
extension (rental.OrderExtension) is a period of its own at its own lot price.

An operator may end an order early in two cases (EarlyEndCase):
- it is paid and has waited for its cards (paid or provisioning) for EARLY_END_WAITING_HOURS
  since it was paid;
- its host failed: an active or provisioning order, as the operator states. The page shows what
  the system itself knows (a host in maintenance, SSH that did not answer, a handover problem).
"""

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal, localcontext
from fractions import Fraction

from django.conf import settings
from django.db import models
from django.utils.formats import date_format
from django.utils.timezone import localtime
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from .models import (
    CardAllocation,
    ExtensionStatus,
    HostState,
    Order,
    OrderExtension,
    OrderStatus,
    OrderStatusChange,
    ProvisioningIssue,
)
from .money import usd

HOUR = timedelta(hours=1)
# The statuses an order may be ended early from.
EARLY_END_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE})
# Waiting for cards: paid, not yet active.
WAITING_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.PROVISIONING})


# ------------------------------------------------------------------------ the amount


def refund_usd(
    lot_price_usd: Decimal, duration_days: int, lots: int, hours_not_delivered: int
) -> Decimal:
    """lot price ÷ (duration_days × 24) × hours not delivered × lots, rounded once to cents.

    The product is exact; the one division and the one rounding come last.
    """
    return _rounded(_segment_value(lot_price_usd, duration_days, lots, hours_not_delivered))


def _segment_value(lot_price_usd, duration_days: int, lots: int, hours: int) -> Fraction:
    if isinstance(lot_price_usd, float):
        raise TypeError("USD amounts must be Decimal, int or str, never float.")
    price = Decimal(lot_price_usd)
    if price < 0 or duration_days < 1 or lots < 1:
        raise ValueError("a refund needs a price, a duration and lots")
    if not 0 <= hours <= duration_days * 24:
        raise ValueError(f"{hours} hours is not within a {duration_days}-day period")
    return Fraction(price) * hours * lots / (duration_days * 24)


def _rounded(value: Fraction) -> Decimal:
    # Enough digits that the division is exact to far below a cent before the one rounding.
    with localcontext(prec=60):
        return usd(Decimal(value.numerator) / Decimal(value.denominator))


def _hours_left(starts_at: datetime | None, duration_days: int, now: datetime) -> int:
    """Whole hours of [starts_at, starts_at + duration) not delivered by `now` (a started hour
    counts), between 0 and the period's hours; the whole period when it has not started."""
    period = duration_days * 24
    if starts_at is None or now <= starts_at:
        return period
    left = starts_at + timedelta(days=duration_days) - now
    if left <= timedelta(0):
        return 0
    return min(period, math.ceil(left / HOUR))


@dataclass(frozen=True, slots=True)
class RefundSegment:
    """One period of the order at its own lot price: the order's own, or a paid extension."""

    starts_at: datetime | None
    ends_at: datetime | None
    duration_days: int
    lot_price_usd: Decimal
    lots: int
    hours: int  # not delivered
    extension_id: int | None = None

    @property
    def value(self) -> Fraction:
        """Exact: the quote adds the segments, then rounds once."""
        return _segment_value(self.lot_price_usd, self.duration_days, self.lots, self.hours)


@dataclass(frozen=True, slots=True)
class RefundQuote:
    hours: int
    amount: Decimal
    segments: list[RefundSegment] = field(default_factory=list)


def _paid_extensions(order: Order) -> list[OrderExtension]:
    cache = getattr(order, "_prefetched_objects_cache", {})
    if "extensions" in cache:
        extensions = [e for e in cache["extensions"] if e.status == ExtensionStatus.PAID]
    else:
        extensions = list(order.extensions.filter(status=ExtensionStatus.PAID))
    return sorted(extensions, key=lambda e: (e.period_starts_at, e.pk))


def refund_for_order(order: Order, now: datetime) -> RefundQuote:
    """The hours of the order not delivered by `now` and what they are worth: the order's own
    period [starts_at, starts_at + duration) at its lot price, then each paid extension's
    [period_starts_at, period_ends_at) at its own; the total rounded once.

    Reads the order's start and its paid extensions only (never `ends_at`, which an early end
    moves), so the same `now` gives the same quote before and after the order ended early.
    """
    started = order.starts_at is not None
    segments = [
        RefundSegment(
            starts_at=order.starts_at,
            ends_at=order.starts_at + timedelta(days=order.duration_days) if started else None,
            duration_days=order.duration_days,
            lot_price_usd=order.lot_price_usd,
            lots=order.lots,
            hours=_hours_left(order.starts_at, order.duration_days, now),
        )
    ]
    for extension in _paid_extensions(order):
        segments.append(
            RefundSegment(
                starts_at=extension.period_starts_at,
                ends_at=extension.period_ends_at,
                duration_days=extension.duration_days,
                lot_price_usd=extension.lot_price_usd,
                lots=extension.lots,
                hours=_hours_left(
                    extension.period_starts_at if started else None, extension.duration_days, now
                ),
                extension_id=extension.pk,
            )
        )
    return RefundQuote(
        hours=sum(segment.hours for segment in segments),
        amount=_rounded(sum((segment.value for segment in segments), Fraction(0))),
        segments=segments,
    )


def hours_not_delivered(order: Order, now: datetime) -> int:
    """Whole hours of the order (its own period and its paid extensions) not delivered by
    `now`."""
    return refund_for_order(order, now).hours


# ------------------------------------------------------------------ who may end it early


class EarlyEndCase(models.TextChoices):
    WAITING_FOR_CARDS = "waiting_for_cards", _("Paid, and no cards in time")
    HOST_FAILED = "host_failed", _("The host failed")


def waiting_threshold() -> timedelta:
    return timedelta(hours=settings.EARLY_END_WAITING_HOURS)


def paid_at(order: Order) -> datetime | None:
    """When the order was (last) marked paid, from its status history."""
    cache = getattr(order, "_prefetched_objects_cache", {})
    if "status_changes" in cache:
        times = [c.created_at for c in cache["status_changes"] if c.to_status == OrderStatus.PAID]
        return max(times, default=None)
    return (
        OrderStatusChange.objects.filter(order=order, to_status=OrderStatus.PAID)
        .order_by("-created_at", "-pk")
        .values_list("created_at", flat=True)
        .first()
    )


def host_failure_signs(order: Order) -> list[str]:
    """What the system itself knows of a failed host: hosts of the order's cards in
    maintenance, out of service or with a changed host key, a host not ready, the customer's
    handover problem."""
    signs = []
    failing = (
        CardAllocation.objects.filter(
            order=order,
            released_at__isnull=True,
            host__state__in=[
                HostState.MAINTENANCE, HostState.OUT_OF_SERVICE, HostState.HOST_KEY_CHANGED
            ],
        )
        .values_list("host__name", "host__state")
        .distinct()
        .order_by("host__name")
    )
    for name, state in failing:
        if state == HostState.MAINTENANCE:
            signs.append(gettext("Host %(name)s is in maintenance.") % {"name": name})
        else:
            signs.append(
                gettext("Host %(name)s: %(state)s.")
                % {"name": name, "state": HostState(state).label}
            )
    if order.provisioning_issue in (ProvisioningIssue.READINESS, ProvisioningIssue.HANDOVER):
        signs.append(
            f"{ProvisioningIssue(order.provisioning_issue).label}: "
            f"{order.provisioning_issue_detail}".rstrip(": ")
        )
    return signs


@dataclass(frozen=True, slots=True)
class EarlyEndCheck:
    """Whether the order may be ended early now, in which case, and what it would refund."""

    order: Order
    now: datetime
    case: str  # an EarlyEndCase, "" when none applies
    refusal: str  # why it may not, "" when it may
    needs_host_statement: bool  # the operator must state that the host failed
    paid_at: datetime | None
    waiting_until: datetime | None  # when a waiting order becomes eligible
    signs: list[str]
    quote: RefundQuote | None

    @property
    def allowed(self) -> bool:
        return not self.refusal

    @property
    def waiting_for_cards(self) -> bool:
        return self.case == EarlyEndCase.WAITING_FOR_CARDS

    @property
    def case_label(self) -> str:
        return EarlyEndCase(self.case).label if self.case else ""

    def refusal_for(self, *, host_failed: bool) -> str:
        """The refusal once the operator said whether the host failed ("" when allowed)."""
        if self.refusal:
            return self.refusal
        if self.needs_host_statement and not host_failed:
            return gettext(
                "This order can be ended early only if its host failed: confirm it, or wait."
            )
        return ""


def early_end_check(order: Order, now: datetime) -> EarlyEndCheck:
    """The case that applies to the order at `now`, or why none does."""
    when_paid = paid_at(order) if order.status in EARLY_END_STATUSES else None
    waiting_until = when_paid + waiting_threshold() if when_paid else None
    waited = waiting_until is not None and now >= waiting_until
    case, refusal, needs_statement, signs, quote = "", "", False, [], None
    if order.ended_early_at is not None:
        refusal = gettext("This order was already ended early.")
    elif order.status not in EARLY_END_STATUSES:
        refusal = gettext(
            "Only a paid, provisioning or active order can be ended early; this one is %(status)s."
        ) % {"status": order.get_status_display().lower()}
    elif order.status in WAITING_STATUSES and waited:
        case = EarlyEndCase.WAITING_FOR_CARDS
    elif order.status == OrderStatus.PAID:
        hours = settings.EARLY_END_WAITING_HOURS
        refusal = gettext(
            "A paid order waiting for cards can be ended early %(hours)d hours after it was "
            "paid, from %(when)s; allocate its cards meanwhile if you can."
        ) % {
            "hours": hours,
            "when": date_format(localtime(waiting_until), "SHORT_DATETIME_FORMAT")
            if waiting_until
            else "—",
        }
    else:
        case, needs_statement = EarlyEndCase.HOST_FAILED, True
    if order.status in EARLY_END_STATUSES and not order.ended_early_at:
        signs = host_failure_signs(order) if order.status != OrderStatus.PAID else []
        quote = refund_for_order(order, now)
        if not refusal and quote.hours == 0:
            refusal = gettext("No hour of this rental is left: it ends by itself.")
            case, needs_statement = "", False
    return EarlyEndCheck(
        order=order,
        now=now,
        case=case,
        refusal=refusal,
        needs_host_statement=needs_statement,
        paid_at=when_paid,
        waiting_until=waiting_until,
        signs=signs,
        quote=quote,
    )


# ------------------------------------------------------------------ once it ended early


@dataclass(frozen=True, slots=True)
class EarlyEndSummary:
    ended_at: datetime
    hours: int
    amount: Decimal  # as computed from the order; the ledger's refund carries the same
    reason: str
    actor_email: str


def early_end_summary(order: Order) -> EarlyEndSummary | None:
    """What an order ended early shows: when, the hours refunded and their value, the reason
    (None for any other order)."""
    if order.ended_early_at is None:
        return None
    quote = refund_for_order(order, order.ended_early_at)
    change = (
        OrderStatusChange.objects.filter(order=order, to_status=OrderStatus.ENDED)
        .select_related("actor")
        .order_by("-created_at", "-pk")
        .first()
    )
    return EarlyEndSummary(
        ended_at=order.ended_early_at,
        hours=quote.hours,
        amount=quote.amount,
        reason=change.reason if change else "",
        actor_email=change.actor.email if change and change.actor else "",
    )
