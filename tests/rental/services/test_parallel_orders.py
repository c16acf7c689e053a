"""Parallel orders on separate PostgreSQL connections never oversell."""

import pytest
from django.db import connection

from rental.exceptions import InsufficientStock
from rental.models import Order, OrderStatus
from rental.services import Configuration, order_cancel_by_customer, order_create
from tests.concurrency import run_concurrently
from tests.conftest import lots_available, set_stock

pytestmark = pytest.mark.django_db(transaction=True)


def test_parallel_orders_never_oversell(catalogue, make_customer):
    assert connection.vendor == "postgresql"
    b200 = catalogue["b200"]
    set_stock(b200, 7)
    customers = [make_customer() for _ in range(12)]

    def order_two_lots(index):
        return order_create(
            customer=customers[index],
            configuration=Configuration(
                gpu_model=b200, duration_days=7, lots=2, preparation="ubuntu"
            ),
        )

    results = run_concurrently(order_two_lots, 12)

    placed = [r for r in results if isinstance(r, Order)]
    refused = [r for r in results if isinstance(r, InsufficientStock)]
    assert len(placed) == 3  # 3 × 2 lots = 6 of 7; a fourth order of 2 would need 8
    assert len(refused) == 9, results
    assert lots_available(b200) == 1
    assert Order.objects.filter(gpu_model=b200).count() == 3
    assert sum(o.lots for o in Order.objects.filter(gpu_model=b200)) == 6


def test_parallel_orders_and_cancellations_keep_the_stock_exact(
    catalogue, make_customer, place_order
):
    h100 = catalogue["h100"]
    set_stock(h100, 10)
    holders = [make_customer() for _ in range(5)]
    existing = [place_order(holder, h100, lots=1) for holder in holders]  # stock now 5
    newcomers = [make_customer() for _ in range(10)]

    def work(index):
        if index < 5:
            return order_cancel_by_customer(order_id=existing[index].pk, customer=holders[index])
        return order_create(
            customer=newcomers[index - 5],
            configuration=Configuration(
                gpu_model=h100, duration_days=3, lots=2, preparation="ubuntu"
            ),
        )

    results = run_concurrently(work, 10)

    assert not [
        r for r in results if isinstance(r, Exception) and not isinstance(r, InsufficientStock)
    ]
    held = sum(
        o.lots for o in Order.objects.filter(gpu_model=h100, status=OrderStatus.AWAITING_PAYMENT)
    )
    assert lots_available(h100) == 10 - held
    assert held <= 10
