"""Reads for extending a rental: what each duration would cost now, the order's extensions."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.utils import timezone

from accounts.models import User

from .models import ExtensionStatus, LotPrice, Order, OrderExtension, OrderStatus
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


def order_extensions(order: Order) -> list[OrderExtension]:
    """The order's extensions, oldest first (one query)."""
    return list(OrderExtension.objects.filter(order=order).order_by("created_at", "pk"))


def pending_extension(order: Order) -> OrderExtension | None:
    return OrderExtension.objects.filter(
        order=order, status=ExtensionStatus.AWAITING_PAYMENT
    ).first()


def customer_extension(*, customer: User, extension_id: int) -> OrderExtension:
    """The customer's own extension with its order; another customer's raises DoesNotExist."""
    return OrderExtension.objects.select_related("order").get(pk=extension_id, customer=customer)
