"""Orders: creation against the hosts' capacity, the one status-change service, cancellation."""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.locks import lock_user
from accounts.models import User
from outbox.messages import enqueue
from statemachine import StateMachine, Transition

from .. import capacity, locks
from ..exceptions import (
    InsufficientStock,
    InvalidTransition,
    ModelUnavailable,
    OrderNotCancellable,
    PriceUnavailable,
    TooManyUnpaidOrders,
)
from ..models import (
    ALLOWED_TRANSITIONS,
    CANCELLABLE_BY_CUSTOMER,
    GpuModel,
    LotPrice,
    Order,
    OrderStatus,
    OrderStatusChange,
    Preparation,
    ProvisioningIssue,
)
from ..pricing import Quote, quote
from .events import order_status_emit

logger = logging.getLogger(__name__)


def _emit(change: Transition) -> None:
    # webhooks: order.paid, .active, .ended, .cancelled, .expired
    order_status_emit(change.obj, from_status=change.from_status, actor=change.actor)


# The order's states: ALLOWED_TRANSITIONS, its audit rows, its log line and its webhooks.
ORDER_STATES = StateMachine(
    name="order",
    transitions=ALLOWED_TRANSITIONS,
    audit_model=OrderStatusChange,
    refuse=lambda order, to_status: InvalidTransition(),
    logger=logger,
    describe=lambda order: (f"order {order.reference}", {"order": order.reference}),
    effects=(_emit,),
)


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

    @property
    def hold_minutes(self) -> int:
        """How long a confirmed order holds its lots for the customer to pay."""
        return settings.ORDER_HOLD_MINUTES


def configuration_summary(*, configuration: Configuration) -> Summary:
    """Price a configuration with the model's prices and `lots_available` already loaded
    (`rental.selectors.catalogue`): no query."""
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
        lots_available=gpu_model.lots_available,
    )


def _lot_price(gpu_model: GpuModel, duration_days: int):
    for price in gpu_model.lot_prices.all():
        if price.duration_days == duration_days:
            return price.price_usd
    raise PriceUnavailable()


def order_create(*, customer: User, configuration: Configuration) -> Order:
    """Create an order awaiting payment from a validated configuration; it holds its lots
    for ORDER_HOLD_MINUTES (the minute tick releases them after that, unless a payment holds
    them by then: `rental.services.intents`).

    Raises TooManyUnpaidOrders when the customer already has MAX_UNPAID_ORDERS orders
    awaiting payment, and InsufficientStock, ModelUnavailable or PriceUnavailable.

    Locks, in this order: the customer's user row, so one customer's parallel orders queue up
    and never pass the unpaid-orders limit together; then the GPU model row, so parallel orders
    (and allocations) for one model queue up and never oversell the hosts' free cards. The
    account's saved SSH key is copied onto the order.
    """
    with transaction.atomic():
        lock_user(customer.pk)
        unpaid = Order.objects.filter(
            customer_id=customer.pk, status=OrderStatus.AWAITING_PAYMENT
        ).count()
        if unpaid >= settings.MAX_UNPAID_ORDERS:
            raise TooManyUnpaidOrders(limit=settings.MAX_UNPAID_ORDERS)
        gpu_model = locks.lock_gpu_model(configuration.gpu_model.pk)
        if gpu_model is None or not gpu_model.active:
            raise ModelUnavailable()
        price = LotPrice.objects.filter(
            gpu_model=gpu_model, duration_days=configuration.duration_days
        ).first()
        if price is None:
            raise PriceUnavailable()
        available = capacity.lots_available([gpu_model])[gpu_model.pk]
        if configuration.lots > available:
            raise InsufficientStock(requested=configuration.lots, available=available)
        order_quote = quote(
            lot_price_usd=price.price_usd,
            duration_days=configuration.duration_days,
            lots=configuration.lots,
            cards_per_lot=gpu_model.cards_per_lot,
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
            ssh_public_key=customer.ssh_public_key,
            hold_until=timezone.now() + timedelta(minutes=settings.ORDER_HOLD_MINUTES),
        )
        ORDER_STATES.record(
            order,
            from_status="",
            to_status=OrderStatus.AWAITING_PAYMENT,
            actor=customer,
            reason="Order placed",
        )
    return order


def order_set_status(
    *, order_id: int, to_status: str, actor: User | None, reason: str, **fields
) -> Order:
    """The one way an order changes status.

    Locks the order row, checks ALLOWED_TRANSITIONS, saves the status with `fields` (the
    rental period, say) and writes the status-change row. Raises InvalidTransition otherwise.
    Lots held by an unpaid order are simply no longer counted once it leaves the holding
    statuses; allocated cards are released by `rental.services.lifecycle.order_end`.
    """
    if to_status in ISSUE_CLOSING_STATUSES:
        fields = {**fields, **_issue_fields("", "")}
    return ORDER_STATES.set(
        lock=locks.lock_order,
        pk=order_id,
        to_status=to_status,
        actor=actor,
        reason=reason,
        fields=fields,
    )


# An order's provisioning issue is about the step it waits at: moving on to one of these
# closes it (cards allocated after a capacity issue; access verified after a readiness one).
ISSUE_CLOSING_STATUSES = frozenset({OrderStatus.PROVISIONING, OrderStatus.ACTIVE})


def _issue_fields(issue: str, detail: str) -> dict[str, str]:
    return {"provisioning_issue": issue, "provisioning_issue_detail": detail[:500]}


def order_set_provisioning_issue(order: Order, *, issue: str, detail: str = "", **fields) -> Order:
    """The one writer of an order's provisioning issue (why it waits in the operators'
    queue: ProvisioningIssue, or "" when none) and its detail, besides the status changes
    that close it (ISSUE_CLOSING_STATUSES).

    The caller holds the order's row lock (rental.locks) and passes the locked row; `fields`
    are saved in the same statement (the readiness counters, say).
    """
    if issue and issue not in ProvisioningIssue.values:
        raise ValueError(f"unknown provisioning issue {issue!r}")
    values = {**fields, **_issue_fields(issue, detail)}
    for name, value in values.items():
        setattr(order, name, value)
    order.save(update_fields=[*values, "updated_at"])
    return order


def order_cancel_by_customer(*, order_id: int, customer: User) -> Order:
    """Cancel the customer's own order while it awaits payment; its lots go back to stock.

    Raises Order.DoesNotExist for another customer's order and OrderNotCancellable once the
    order has moved on (paid, already cancelled...).
    """
    with transaction.atomic():
        order = locks.lock_order(order_id, customer=customer)
        if order.status not in CANCELLABLE_BY_CUSTOMER:
            raise OrderNotCancellable()
        return order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.CANCELLED,
            actor=customer,
            reason="Cancelled by the customer",
        )


def order_mark_paid(*, order_id: int, actor: User | None, reason: str) -> Order:
    """The order's payment is settled: mark it paid and allocate its cards at once.

    Callers (payments) hold their ledger locks and call this in the same transaction, so the
    payment, the status and the allocation commit together; the emails go after the commit.
    """
    from ..models import OrderEmailKind
    from .provisioning import order_allocate

    order_set_status(order_id=order_id, to_status=OrderStatus.PAID, actor=actor, reason=reason)
    enqueue("rental.tasks.order_email", order_id, OrderEmailKind.PAYMENT_RECEIVED)
    return order_allocate(order_id=order_id, actor=None)
