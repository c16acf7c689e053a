"""One customer may have at most MAX_UNPAID_ORDERS orders awaiting payment at once."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection

from payments.crypto.services.balance_payment import balance_pay_order
from rental.exceptions import TooManyUnpaidOrders
from rental.models import Order, OrderStatus, OrderStatusChange
from rental.services import Configuration, order_cancel_by_customer, order_create
from rental.services.lifecycle import rentals_tick
from tests.concurrency import run_concurrently
from tests.conftest import lots_available, set_stock

LIMIT_MESSAGE = (
    "You already have 3 orders awaiting payment, the most one account may have at once. "
    "Pay or cancel one of them before placing another order."
)


MICROSECOND = timedelta(microseconds=1)


def statuses(*orders) -> list[str]:
    return [Order.objects.get(pk=order.pk).status for order in orders]


@pytest.fixture
def stocked(catalogue):
    for gpu_model in catalogue.values():
        set_stock(gpu_model, 20)
    return catalogue


def test_the_fourth_unpaid_order_is_refused_and_nothing_is_created(stocked, customer, place_order):
    h100 = stocked["h100"]
    placed = [place_order(customer, h100) for _ in range(3)]
    assert [order.status for order in placed] == [OrderStatus.AWAITING_PAYMENT] * 3
    orders, changes, stock = Order.objects.count(), OrderStatusChange.objects.count(), 17

    with pytest.raises(TooManyUnpaidOrders) as refused:
        place_order(customer, stocked["b200"], lots=1)  # another model counts the same

    assert refused.value.message == LIMIT_MESSAGE
    assert refused.value.limit == 3
    assert (Order.objects.count(), OrderStatusChange.objects.count()) == (orders, changes)
    assert lots_available(h100) == stock
    assert lots_available(stocked["b200"]) == 20


def test_cancelling_paying_or_a_released_hold_makes_room_again(
    stocked, customer, place_order, credit
):
    h100 = stocked["h100"]
    first, second, third = (place_order(customer, h100) for _ in range(3))

    order_cancel_by_customer(order_id=first.pk, customer=customer)
    fourth = place_order(customer, h100)
    credit(customer, "5000.00")
    balance_pay_order(order_id=second.pk, customer=customer)
    fifth = place_order(customer, h100)
    with pytest.raises(TooManyUnpaidOrders):
        place_order(customer, h100)
    # Just past the third order's hold: the later orders are still held.
    rentals_tick(now=Order.objects.get(pk=third.pk).hold_until + MICROSECOND)
    sixth = place_order(customer, h100)

    assert statuses(first, second, third, fourth, fifth, sixth) == [
        OrderStatus.CANCELLED,
        OrderStatus.PROVISIONING,
        OrderStatus.CANCELLED,
        OrderStatus.AWAITING_PAYMENT,
        OrderStatus.AWAITING_PAYMENT,
        OrderStatus.AWAITING_PAYMENT,
    ]
    with pytest.raises(TooManyUnpaidOrders):
        place_order(customer, h100)


def test_other_customers_are_not_counted(stocked, make_customer, place_order):
    busy, other = make_customer(), make_customer()
    for _ in range(3):
        place_order(busy, stocked["h100"])
    assert place_order(other, stocked["h100"]).status == OrderStatus.AWAITING_PAYMENT


def test_the_limit_comes_from_the_setting(stocked, customer, place_order, settings):
    settings.MAX_UNPAID_ORDERS = 1
    place_order(customer, stocked["h100"])
    with pytest.raises(TooManyUnpaidOrders) as refused:
        place_order(customer, stocked["h200"])
    assert refused.value.message == (
        "You already have 1 order awaiting payment, the most one account may have at once. "
        "Pay or cancel it before placing another order."
    )


@pytest.mark.django_db(transaction=True)
def test_six_parallel_orders_of_one_customer_create_exactly_the_limit(stocked, customer):
    """Six orders at once, on six connections, for four different GPU models (so the model
    locks do not queue them): only the customer's row lock keeps them to three."""
    assert connection.vendor == "postgresql"
    models = list(stocked.values())
    ready = threading.Barrier(6)
    started, finished = [], []

    def order_one(index):
        connection.ensure_connection()  # every connection open before the race starts
        ready.wait(timeout=30)
        started.append(time.monotonic())
        try:
            return order_create(
                customer=customer,
                configuration=Configuration(
                    gpu_model=models[index % len(models)],
                    duration_days=7,
                    lots=1,
                    preparation="ubuntu",
                ),
            )
        finally:
            finished.append(time.monotonic())

    results = run_concurrently(order_one, 6)

    # The race happened: all six were inside order_create before the first one returned.
    assert len(started) == 6
    assert max(started) < min(finished)
    placed = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, TooManyUnpaidOrders)]
    assert (len(placed), len(refused)) == (3, 3), results
    assert all(r.message == LIMIT_MESSAGE for r in refused)
    assert Order.objects.filter(customer=customer).count() == 3
    assert OrderStatusChange.objects.filter(order__customer=customer).count() == 3
    assert sum(20 - lots_available(gpu_model) for gpu_model in models) == 3
