"""Reads for extending a rental: what each duration would cost now, the order's extensions."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.models import User

from .models import (
    ExtensionStatus,
    ExtensionStatusChange,
    LotPrice,
    Order,
    OrderExtension,
    OrderStatus,
)
from .pricing import quote


@dataclass(frozen=True, slots=True)
class ExtensionOffer:
    """One duration the order can be extended by, at the catalogue's price now."""

    duration_days: int
    lot_price_usd: Decimal
    total_usd: Decimal
    new_ends_at: datetime


def order_extendable(order: Order, now: datetime | None = None) -> bool:
    """An active rental before its end can be extended (rental.services.extensions)."""
    now = now or timezone.now()
    return order.status == OrderStatus.ACTIVE and order.ends_at is not None and order.ends_at > now


def extension_offers(order: Order) -> list[ExtensionOffer]:
    """Each duration the order's GPU model has a price for, priced for the order's lots (one
    query); the new end supposes the extension is paid before the current end."""
    prices = LotPrice.objects.filter(gpu_model_id=order.gpu_model_id).order_by("duration_days")
    offers = []
    for price in prices:
        priced = quote(
            lot_price_usd=price.price_usd,
            duration_days=price.duration_days,
            lots=order.lots,
            cards_per_lot=order.cards_per_lot,
        )
        offers.append(
            ExtensionOffer(
                duration_days=priced.duration_days,
                lot_price_usd=priced.lot_price_usd,
                total_usd=priced.total_usd,
                new_ends_at=order.ends_at + timedelta(days=priced.duration_days),
            )
        )
    return offers


_CHANGES_ATTRIBUTE = "_extension_changes"


def _extension_changes(order: Order) -> list[ExtensionStatusChange]:
    """Every change of the order's extensions with its extension, oldest first: one query,
    kept on the order object, which the page's extensions section and its timeline share."""
    cached = getattr(order, _CHANGES_ATTRIBUTE, None)
    if cached is None:
        cached = list(
            ExtensionStatusChange.objects.filter(extension__order=order)
            .select_related("extension")
            .order_by("created_at", "pk")
        )
        setattr(order, _CHANGES_ATTRIBUTE, cached)
    return cached


def order_extensions(order: Order) -> list[OrderExtension]:
    """The order's extensions, oldest first (one query, shared with extension_timeline:
    every extension has the change that created it)."""
    extensions = {change.extension_id: change.extension for change in _extension_changes(order)}
    return sorted(extensions.values(), key=lambda extension: (extension.created_at, extension.pk))


def pending_extension(order: Order) -> OrderExtension | None:
    return OrderExtension.objects.filter(
        order=order, status=ExtensionStatus.AWAITING_PAYMENT
    ).first()


def customer_extension(*, customer: User, extension_id: int) -> OrderExtension:
    """The customer's own extension with its order; another customer's raises DoesNotExist."""
    return OrderExtension.objects.select_related("order").get(pk=extension_id, customer=customer)


@dataclass(frozen=True, slots=True)
class ExtensionEvent:
    """One line of the order's timeline about one of its extensions."""

    at: datetime
    text: str


def _event_text(change: ExtensionStatusChange) -> str:
    extension = change.extension
    if change.to_status == ExtensionStatus.PAID:
        ends_at = date_format(timezone.localtime(extension.period_ends_at), "DATETIME_FORMAT")
        return _("Extension %(reference)s paid: the rental now ends on %(end)s") % {
            "reference": extension.reference,
            "end": ends_at,
        }
    if change.to_status == ExtensionStatus.CANCELLED:
        return _("Extension %(reference)s cancelled") % {"reference": extension.reference}
    return ngettext(
        "Extension %(reference)s asked for: %(days)d more day, %(total)s USD",
        "Extension %(reference)s asked for: %(days)d more days, %(total)s USD",
        extension.duration_days,
    ) % {
        "reference": extension.reference,
        "days": extension.duration_days,
        "total": number_format(extension.total_usd, decimal_pos=2, force_grouping=True),
    }


def extension_timeline(order: Order) -> list[ExtensionEvent]:
    """Each change of the order's extensions (asked for, paid with the new end, cancelled),
    oldest first: the query order_extensions makes (once for both), none for an order that
    was never active."""
    if order.starts_at is None:  # extensions are asked for while it runs
        return []
    return [
        ExtensionEvent(change.created_at, _event_text(change))
        for change in _extension_changes(order)
    ]
