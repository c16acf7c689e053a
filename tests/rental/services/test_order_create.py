from decimal import Decimal

import pytest

from rental.exceptions import InsufficientStock, ModelUnavailable, PriceUnavailable
from rental.models import GpuModel, LotPrice, Order, OrderStatus, OrderStatusChange, Preparation
from tests.conftest import lots_available, set_stock


def test_order_snapshots_the_summary_and_holds_the_lots(catalogue, customer, place_order):
    b200 = catalogue["b200"]
    stock_before = lots_available(b200)

    order = place_order(customer, b200, lots=3, duration_days=7, preparation=Preparation.PYTORCH)

    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert order.customer == customer
    assert (order.model_name, order.memory_gb_per_card, order.cards_per_lot) == (
        "B200 180 GB",
        180,
        2,
    )
    assert (order.duration_days, order.lots, order.total_cards) == (7, 3, 6)
    assert order.lot_price_usd == Decimal("1915.20")
    assert order.total_usd == Decimal("5745.60")
    assert order.preparation == Preparation.PYTORCH
    assert lots_available(b200) == stock_before - 3
    change = OrderStatusChange.objects.get(order=order)
    assert (change.from_status, change.to_status, change.actor) == (
        "",
        OrderStatus.AWAITING_PAYMENT,
        customer,
    )


def test_custom_preparation_keeps_its_description(catalogue, customer, place_order):
    order = place_order(
        customer,
        catalogue["h100"],
        preparation=Preparation.CUSTOM,
        custom_preparation="CUDA 12.4, PyTorch 2.5, flash-attn 2",
    )
    order.refresh_from_db()
    assert order.custom_preparation == "CUDA 12.4, PyTorch 2.5, flash-attn 2"


def test_description_is_dropped_for_a_standard_preparation(catalogue, customer, place_order):
    order = place_order(
        customer, catalogue["h100"], preparation=Preparation.UBUNTU, custom_preparation="ignored"
    )
    order.refresh_from_db()
    assert order.custom_preparation == ""


def test_a_later_price_change_never_changes_an_existing_order(catalogue, customer, place_order):
    h200 = catalogue["h200"]
    order = place_order(customer, h200, lots=2, duration_days=30)
    LotPrice.objects.filter(gpu_model=h200, duration_days=30).update(price_usd=Decimal("9999.99"))
    GpuModel.objects.filter(pk=h200.pk).update(name="H200 renamed", memory_gb_per_card=999)

    order.refresh_from_db()
    assert order.lot_price_usd == Decimal("2325.60")
    assert order.total_usd == Decimal("4651.20")
    assert (order.model_name, order.memory_gb_per_card) == ("H200 141 GB", 141)


def test_an_order_larger_than_the_stock_is_refused_and_nothing_is_held(
    catalogue, customer, place_order
):
    h100 = catalogue["h100"]
    set_stock(h100, 2)

    with pytest.raises(InsufficientStock) as refused:
        place_order(customer, h100, lots=3)

    assert refused.value.message == (
        "Only 2 lots of this model are available right now; you asked for 3. "
        "Choose fewer lots or another model."
    )
    assert Order.objects.count() == 0
    assert lots_available(h100) == 2


def test_the_last_lots_can_be_ordered(catalogue, customer, place_order):
    h100 = catalogue["h100"]
    set_stock(h100, 3)
    place_order(customer, h100, lots=3)
    assert lots_available(h100) == 0
    with pytest.raises(InsufficientStock, match="No lot of this model is available right now."):
        place_order(customer, h100, lots=1)


def test_an_inactive_model_cannot_be_ordered(catalogue, customer, place_order):
    mi300x = catalogue["mi300x"]
    GpuModel.objects.filter(pk=mi300x.pk).update(active=False)
    with pytest.raises(ModelUnavailable):
        place_order(customer, mi300x)
    assert Order.objects.count() == 0


def test_a_model_without_a_price_for_the_duration_cannot_be_ordered(
    catalogue, customer, place_order
):
    h100 = catalogue["h100"]
    LotPrice.objects.filter(gpu_model=h100, duration_days=3).delete()
    with pytest.raises(PriceUnavailable):
        place_order(customer, h100, duration_days=3)
    assert Order.objects.count() == 0
