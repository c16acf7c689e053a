"""Rental's side of an extension: created at the price of the day and frozen, one awaiting
payment per order, paid through the intent that moves the end on the same cards, cancelled
when the rental ends first."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from rental.exceptions import PriceUnavailable
from rental.models import (
    CardAllocation,
    ExtensionStatus,
    ExtensionStatusChange,
    LotPrice,
    Order,
    OrderExtension,
    OrderStatus,
)
from rental.services import extension_cancel, extension_create, extension_pay
from rental.services.extensions import (
    ExtensionNotAwaitingPayment,
    ExtensionPending,
    InvalidExtensionTransition,
    OrderNotExtendable,
    extension_set_status,
)
from rental.services.lifecycle import order_end

from .helpers import end_in


def statuses(extension) -> list[tuple[str, str]]:
    return list(
        ExtensionStatusChange.objects.filter(extension=extension).values_list(
            "from_status", "to_status"
        )
    )


def test_an_extension_is_priced_now_for_the_orders_lots_and_frozen(customer, active_order):
    order = active_order(customer, lots=2)

    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)

    assert extension.status == ExtensionStatus.AWAITING_PAYMENT
    assert (extension.lots, extension.lot_price_usd, extension.total_usd) == (
        2,
        Decimal("446.88"),
        Decimal("893.76"),
    )
    assert statuses(extension) == [("", ExtensionStatus.AWAITING_PAYMENT)]
    # A later price change leaves it as it was.
    LotPrice.objects.filter(gpu_model=order.gpu_model, duration_days=7).update(
        price_usd=Decimal("999.00")
    )
    extension.refresh_from_db()
    assert extension.total_usd == Decimal("893.76")


def test_one_extension_awaits_payment_at_a_time(customer, active_order):
    order = active_order(customer)
    first = extension_create(order_id=order.pk, customer=customer, duration_days=3)

    # A double click returns the same one; another duration is refused with its reference.
    assert extension_create(order_id=order.pk, customer=customer, duration_days=3) == first
    with pytest.raises(ExtensionPending) as refused:
        extension_create(order_id=order.pk, customer=customer, duration_days=30)
    assert first.reference in refused.value.message and "3 days" in refused.value.message
    assert OrderExtension.objects.filter(order=order).count() == 1

    # The database refuses a second one awaiting payment whatever the code does.
    with pytest.raises(IntegrityError), transaction.atomic():
        OrderExtension.objects.create(
            order=order,
            customer=customer,
            duration_days=7,
            lots=1,
            lot_price_usd=Decimal("446.88"),
            total_usd=Decimal("446.88"),
        )

    # Once cancelled, another may be asked for.
    extension_cancel(extension_id=first.pk, customer=customer)
    second = extension_create(order_id=order.pk, customer=customer, duration_days=30)
    assert second.total_usd == Decimal("1713.60")


def test_only_the_customers_active_order_before_its_end_can_be_extended(
    customer, make_customer, active_order, place_order, catalogue
):
    unpaid = place_order(customer, catalogue["h100"])
    with pytest.raises(OrderNotExtendable):
        extension_create(order_id=unpaid.pk, customer=customer, duration_days=3)

    order = active_order(customer)
    with pytest.raises(Order.DoesNotExist):
        extension_create(order_id=order.pk, customer=make_customer(), duration_days=3)

    end_in(order, timedelta(seconds=-1))  # past its end, not yet stopped by the tick
    with pytest.raises(OrderNotExtendable):
        extension_create(order_id=order.pk, customer=customer, duration_days=3)
    with pytest.raises(ValueError, match="duration"):
        extension_create(order_id=order.pk, customer=customer, duration_days=5)
    assert not OrderExtension.objects.exists()


def test_a_duration_without_a_price_is_refused(customer, active_order):
    order = active_order(customer)
    LotPrice.objects.filter(gpu_model=order.gpu_model, duration_days=30).delete()
    with pytest.raises(PriceUnavailable):
        extension_create(order_id=order.pk, customer=customer, duration_days=30)


def test_paying_moves_the_end_on_the_same_cards_and_opens_the_next_period(
    customer, active_order, django_capture_on_commit_callbacks
):
    order = active_order(customer, lots=2)
    cards = list(
        CardAllocation.objects.filter(order=order).values_list("pk", "host_id", "card_index")
    )
    ends_at = order.ends_at
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)

    with django_capture_on_commit_callbacks(execute=True):
        assert extension_pay(extension_id=extension.pk, actor=customer, reason="test") is True

    order.refresh_from_db()
    extension.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    assert order.ends_at == ends_at + timedelta(days=3)
    assert order.period == 1
    assert (extension.status, extension.period_starts_at, extension.period_ends_at) == (
        ExtensionStatus.PAID,
        ends_at,
        order.ends_at,
    )
    assert extension.paid_at is not None
    assert statuses(extension)[-1] == (ExtensionStatus.AWAITING_PAYMENT, ExtensionStatus.PAID)
    still = CardAllocation.objects.filter(order=order, released_at__isnull=True)
    assert sorted(still.values_list("pk", "host_id", "card_index")) == sorted(cards)

    # Paid once: a second call changes nothing.
    assert extension_pay(extension_id=extension.pk, actor=customer, reason="again") is False
    order.refresh_from_db()
    assert (order.ends_at, order.period) == (ends_at + timedelta(days=3), 1)


def test_an_extension_is_not_paid_once_the_rental_is_over(customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    end_in(order, timedelta(seconds=-5))
    ends_at = order.ends_at

    assert extension_pay(extension_id=extension.pk, actor=None, reason="late") is False

    order.refresh_from_db()
    extension.refresh_from_db()
    assert (order.ends_at, order.period) == (ends_at, 0)
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT


def test_the_end_of_the_rental_cancels_the_extension_awaiting_payment(
    customer, active_order, django_capture_on_commit_callbacks
):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    end_in(order, timedelta(seconds=-5))

    with django_capture_on_commit_callbacks(execute=True):
        order_end(order_id=order.pk, now=timezone.now())

    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED
    change = ExtensionStatusChange.objects.filter(extension=extension).last()
    assert change.reason == "The rental ended before the extension was paid"
    assert change.actor is None
    assert extension_pay(extension_id=extension.pk, actor=None, reason="late") is False
    assert Order.objects.get(pk=order.pk).status == OrderStatus.ENDED


def test_the_status_map_is_kept(customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    extension_cancel(extension_id=extension.pk, customer=customer)

    for to_status in (ExtensionStatus.PAID, ExtensionStatus.AWAITING_PAYMENT):
        with pytest.raises(InvalidExtensionTransition):
            extension_set_status(
                extension_id=extension.pk, to_status=to_status, actor=None, reason="no"
            )
    with pytest.raises(ExtensionNotAwaitingPayment):
        extension_cancel(extension_id=extension.pk, customer=customer)
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.CANCELLED
    assert statuses(extension) == [
        ("", ExtensionStatus.AWAITING_PAYMENT),
        (ExtensionStatus.AWAITING_PAYMENT, ExtensionStatus.CANCELLED),
    ]


def test_another_customers_extension_cannot_be_cancelled(customer, make_customer, active_order):
    order = active_order(customer)
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=3)
    with pytest.raises(OrderExtension.DoesNotExist):
        extension_cancel(extension_id=extension.pk, customer=make_customer())
    extension.refresh_from_db()
    assert extension.status == ExtensionStatus.AWAITING_PAYMENT
