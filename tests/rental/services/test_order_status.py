import pytest
from django.db import IntegrityError, transaction

from rental.exceptions import InsufficientStock, InvalidTransition, OrderNotCancellable
from rental.models import ALLOWED_TRANSITIONS, GpuModel, Order, OrderStatus, OrderStatusChange
from rental.services import order_cancel_by_customer, order_set_status, stock_adjust


def test_cancelling_releases_the_held_lots(catalogue, customer, place_order):
    h200 = catalogue["h200"]
    before = h200.lots_in_stock
    order = place_order(customer, h200, lots=4)

    cancelled = order_cancel_by_customer(order_id=order.pk, customer=customer)

    assert cancelled.status == OrderStatus.CANCELLED
    h200.refresh_from_db()
    assert h200.lots_in_stock == before
    change = OrderStatusChange.objects.filter(order=order).last()
    assert (change.from_status, change.to_status, change.actor) == (
        OrderStatus.AWAITING_PAYMENT,
        OrderStatus.CANCELLED,
        customer,
    )


def test_cancelling_twice_releases_the_lots_once(catalogue, customer, place_order):
    h200 = catalogue["h200"]
    before = h200.lots_in_stock
    order = place_order(customer, h200, lots=2)
    order_cancel_by_customer(order_id=order.pk, customer=customer)

    with pytest.raises(OrderNotCancellable):
        order_cancel_by_customer(order_id=order.pk, customer=customer)

    h200.refresh_from_db()
    assert h200.lots_in_stock == before


def test_another_customers_order_cannot_be_cancelled(
    catalogue, customer, make_customer, place_order
):
    order = place_order(customer, catalogue["h100"])
    with pytest.raises(Order.DoesNotExist):
        order_cancel_by_customer(order_id=order.pk, customer=make_customer())
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_a_paid_order_cannot_be_cancelled_by_the_customer(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    order = place_order(customer, h100, lots=2)
    order_set_status(
        order_id=order.pk, to_status=OrderStatus.PAID, actor=None, reason="test payment"
    )
    stock = GpuModel.objects.get(pk=h100.pk).lots_in_stock

    with pytest.raises(OrderNotCancellable):
        order_cancel_by_customer(order_id=order.pk, customer=customer)

    order.refresh_from_db()
    assert order.status == OrderStatus.PAID
    assert GpuModel.objects.get(pk=h100.pk).lots_in_stock == stock


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ([OrderStatus.PAID], OrderStatus.AWAITING_PAYMENT),
        ([], OrderStatus.ACTIVE),
        ([OrderStatus.CANCELLED], OrderStatus.PAID),
        (
            [OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE, OrderStatus.ENDED],
            OrderStatus.ACTIVE,
        ),
    ],
)
def test_transitions_outside_the_map_are_refused(catalogue, customer, place_order, path, refused):
    order = place_order(customer, catalogue["h100"])
    for status in path:
        order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test")
    rows = OrderStatusChange.objects.filter(order=order).count()

    with pytest.raises(InvalidTransition):
        order_set_status(order_id=order.pk, to_status=refused, actor=None, reason="test")

    order.refresh_from_db()
    assert order.status == (path[-1] if path else OrderStatus.AWAITING_PAYMENT)
    assert OrderStatusChange.objects.filter(order=order).count() == rows


def test_every_status_has_an_entry_in_the_transition_map():
    assert set(ALLOWED_TRANSITIONS) == set(OrderStatus.values)


def test_ending_an_order_releases_its_lots(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    before = h100.lots_in_stock
    order = place_order(customer, h100, lots=3)
    for status in (OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE):
        order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test")
    assert GpuModel.objects.get(pk=h100.pk).lots_in_stock == before - 3

    order_set_status(
        order_id=order.pk, to_status=OrderStatus.ENDED, actor=None, reason="lease over"
    )

    assert GpuModel.objects.get(pk=h100.pk).lots_in_stock == before


def test_stock_adjust_adds_and_removes_but_never_below_zero(catalogue):
    h100 = catalogue["h100"]
    GpuModel.objects.filter(pk=h100.pk).update(lots_in_stock=4)
    assert stock_adjust(gpu_model_id=h100.pk, delta=3).lots_in_stock == 7
    assert stock_adjust(gpu_model_id=h100.pk, delta=-7).lots_in_stock == 0
    with pytest.raises(InsufficientStock, match="No lot of this model is available right now."):
        stock_adjust(gpu_model_id=h100.pk, delta=-1)
    assert GpuModel.objects.get(pk=h100.pk).lots_in_stock == 0


def test_the_database_refuses_negative_stock(catalogue):
    with pytest.raises(IntegrityError), transaction.atomic():
        GpuModel.objects.filter(pk=catalogue["h100"].pk).update(lots_in_stock=-1)


def test_the_database_refuses_a_total_that_is_not_lots_times_lot_price(
    catalogue, customer, place_order
):
    order = place_order(customer, catalogue["b200"], lots=3)
    with pytest.raises(IntegrityError), transaction.atomic():
        # Multiplying by the card count is exactly the mistake the rule forbids.
        Order.objects.filter(pk=order.pk).update(total_usd=order.lot_price_usd * order.total_cards)
