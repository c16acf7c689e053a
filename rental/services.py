"""Every write of the rental domain: orders, their status and the stock they hold."""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import User

from .exceptions import (
    InsufficientStock,
    InvalidTransition,
    ModelUnavailable,
    OrderNotCancellable,
    PriceUnavailable,
)
from .models import (
    ALLOWED_TRANSITIONS,
    CANCELLABLE_BY_CUSTOMER,
    RELEASED_STATUSES,
    GpuModel,
    LotPrice,
    Order,
    OrderStatus,
    OrderStatusChange,
    Preparation,
)
from .pricing import Quote, quote


@dataclass(frozen=True, slots=True)
class Configuration:
    """A customer's choice, already validated by `rental.forms.OrderConfigurationForm`."""

    gpu_model: GpuModel
    duration_days: int
    lots: int
    preparation: str
    custom_preparation: str = ""


@dataclass(frozen=True, slots=True)
class Summary:
    """What the configurator and the review page show for a configuration."""

    configuration: Configuration
    quote: Quote
    lots_available: int

    @property
    def gpu_model(self) -> GpuModel:
        return self.configuration.gpu_model

    @property
    def preparation_label(self) -> str:
        return Preparation(self.configuration.preparation).label

    @property
    def exceeds_stock(self) -> bool:
        return self.configuration.lots > self.lots_available


def configuration_summary(*, configuration: Configuration) -> Summary:
    """Price a configuration with the model's prices already loaded (no query when prefetched)."""
    gpu_model = configuration.gpu_model
    lot_price = _lot_price(gpu_model, configuration.duration_days)
    return Summary(
        configuration=configuration,
        quote=quote(
            lot_price_usd=lot_price,
            duration_days=configuration.duration_days,
            lots=configuration.lots,
            cards_per_lot=gpu_model.cards_per_lot,
        ),
        lots_available=gpu_model.lots_in_stock,
    )


def _lot_price(gpu_model: GpuModel, duration_days: int):
    for price in gpu_model.lot_prices.all():
        if price.duration_days == duration_days:
            return price.price_usd
    raise PriceUnavailable()


def order_create(*, customer: User, configuration: Configuration) -> Order:
    """Create an order awaiting payment from a validated configuration and hold its lots.

    Locks the GPU model row, so parallel orders for one model queue up and never oversell.
    """
    with transaction.atomic():
        gpu_model = (
            GpuModel.objects.select_for_update(of=("self",))
            .filter(pk=configuration.gpu_model.pk)
            .first()
        )
        if gpu_model is None or not gpu_model.active:
            raise ModelUnavailable()
        price = LotPrice.objects.filter(
            gpu_model=gpu_model, duration_days=configuration.duration_days
        ).first()
        if price is None:
            raise PriceUnavailable()
        if configuration.lots > gpu_model.lots_in_stock:
            raise InsufficientStock(requested=configuration.lots, available=gpu_model.lots_in_stock)
        order_quote = quote(
            lot_price_usd=price.price_usd,
            duration_days=configuration.duration_days,
            lots=configuration.lots,
            cards_per_lot=gpu_model.cards_per_lot,
        )
        GpuModel.objects.filter(pk=gpu_model.pk).update(
            lots_in_stock=F("lots_in_stock") - configuration.lots
        )
        is_custom = configuration.preparation == Preparation.CUSTOM
        order = Order.objects.create(
            customer=customer,
            gpu_model=gpu_model,
            status=OrderStatus.AWAITING_PAYMENT,
            model_name=gpu_model.name,
            vendor=gpu_model.vendor,
            compute_platform=gpu_model.compute_platform,
            memory_gb_per_card=gpu_model.memory_gb_per_card,
            cards_per_lot=gpu_model.cards_per_lot,
            duration_days=order_quote.duration_days,
            lots=order_quote.lots,
            total_cards=order_quote.total_cards,
            preparation=configuration.preparation,
            custom_preparation=configuration.custom_preparation if is_custom else "",
            lot_price_usd=order_quote.lot_price_usd,
            total_usd=order_quote.total_usd,
        )
        OrderStatusChange.objects.create(
            order=order,
            from_status="",
            to_status=OrderStatus.AWAITING_PAYMENT,
            actor=customer,
            reason="Order placed",
        )
    return order


def order_set_status(*, order_id: int, to_status: str, actor: User | None, reason: str) -> Order:
    """The one way an order changes status.

    Locks the order row, checks ALLOWED_TRANSITIONS, writes the status-change row and releases
    the held lots when the order leaves the holding statuses. Raises InvalidTransition otherwise.
    """
    with transaction.atomic():
        order = Order.objects.select_for_update(of=("self",)).get(pk=order_id)
        if to_status not in ALLOWED_TRANSITIONS[order.status]:
            raise InvalidTransition()
        from_status = order.status
        order.status = to_status
        order.save(update_fields=["status", "updated_at"])
        OrderStatusChange.objects.create(
            order=order, from_status=from_status, to_status=to_status, actor=actor, reason=reason
        )
        if to_status in RELEASED_STATUSES and from_status not in RELEASED_STATUSES:
            _stock_release(gpu_model_id=order.gpu_model_id, lots=order.lots)
    return order


def order_cancel_by_customer(*, order_id: int, customer: User) -> Order:
    """Cancel the customer's own order while it awaits payment; its lots go back to stock.

    Raises Order.DoesNotExist for another customer's order and OrderNotCancellable once the
    order has moved on (paid, already cancelled...).
    """
    with transaction.atomic():
        order = (
            Order.objects.select_for_update(of=("self",))
            .filter(pk=order_id, customer=customer)
            .first()
        )
        if order is None:
            raise Order.DoesNotExist()
        if order.status not in CANCELLABLE_BY_CUSTOMER:
            raise OrderNotCancellable()
        return order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.CANCELLED,
            actor=customer,
            reason="Cancelled by the customer",
        )


def _stock_release(*, gpu_model_id: int, lots: int) -> None:
    GpuModel.objects.filter(pk=gpu_model_id).update(lots_in_stock=F("lots_in_stock") + lots)


def stock_adjust(*, gpu_model_id: int, delta: int) -> GpuModel:
    """Add (or with a negative delta, remove) free lots; stock never goes below zero."""
    with transaction.atomic():
        gpu_model = GpuModel.objects.select_for_update(of=("self",)).get(pk=gpu_model_id)
        if gpu_model.lots_in_stock + delta < 0:
            raise InsufficientStock(requested=-delta, available=gpu_model.lots_in_stock)
        GpuModel.objects.filter(pk=gpu_model.pk).update(lots_in_stock=F("lots_in_stock") + delta)
        gpu_model.refresh_from_db(fields=["lots_in_stock"])
    return gpu_model


def order_mark_paid(*, order_id: int, actor: User | None, reason: str) -> Order:
    """The order's payment is settled: mark it paid and queue what follows, after the commit.

    Callers (payments) hold their ledger locks and call this in the same transaction.
    """
    from . import tasks

    order = order_set_status(
        order_id=order_id, to_status=OrderStatus.PAID, actor=actor, reason=reason
    )
    tasks.order_paid.delay_on_commit(order.pk)
    return order


def order_paid_notify(*, order_id: int) -> bool:
    """Send the customer the 'payment received' email once; return whether it was sent now.

    The claim (a conditional update) and the send share one transaction: if sending fails the
    claim rolls back and a retry sends it; a task delivered twice sends nothing the second time.
    """
    from .notifications import send_order_email

    with transaction.atomic():
        claimed = Order.objects.filter(pk=order_id, paid_notified_at__isnull=True).update(
            paid_notified_at=timezone.now()
        )
        if not claimed:
            return False
        order = Order.objects.select_related("customer").get(pk=order_id)
        send_order_email(order=order, template="payment_received")
    return True
