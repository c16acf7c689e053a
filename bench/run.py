"""Benchmarks, printed as ratios against a baseline measured in the same run.

Run with `make bench`. Uses a throw-away test database on the configured PostgreSQL; never part
of `make test`, and nothing here asserts a time.
"""

import os
import statistics
import sys
import time
import tracemalloc
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)


def timed(func, repeat: int) -> float:
    """Median seconds per call over `repeat` calls (after one warm-up call)."""
    func()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def peak_memory(func) -> int:
    tracemalloc.start()
    func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def main() -> None:
    from accounts.models import User
    from rental.models import CardAllocation, GpuModel, Host, Order
    from rental.pricing import quote
    from rental.services import Configuration, order_create

    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        call_command("load_demo_catalogue", stdout=open(os.devnull, "w"))  # noqa: SIM115
        b200 = GpuModel.objects.get(slug="b200-180gb")
        # Room for the ~700 B200 lots placed below: 24 hosts of 64 cards (32 lots each).
        Host.objects.bulk_create(
            Host(
                name=f"bench-b200-{number}",
                gpu_model=b200,
                cards=64,
                ssh_host="127.0.0.1",
                ssh_user="ubuntu",
            )
            for number in range(24)
        )
        rows = []

        # 1. The pricing function against a bare Decimal multiplication.
        baseline = timed(lambda: Decimal("1915.20") * 3, 20_000)
        pricing = timed(
            lambda: quote(
                lot_price_usd=Decimal("1915.20"), duration_days=7, lots=3, cards_per_lot=2
            ),
            20_000,
        )
        rows.append(("quote() vs Decimal multiply", pricing / baseline))

        # 2. The live summary request against the catalogue selector's queries alone.
        from rental.selectors import catalogue

        client = Client()
        url = "/configure/?gpu_model=b200-180gb&lots=3&duration_days=7"
        query_only = timed(lambda: list(catalogue()), 200)
        summary = timed(lambda: client.get(url, headers={"HX-Request": "true"}), 200)
        rows.append(("htmx summary request vs its 4 queries", summary / query_only))

        # 3. Orders list: 500 orders against 10, time and peak memory. One account with 500
        #    orders awaiting payment: the unpaid-orders limit is lifted for this measure.
        settings.MAX_UNPAID_ORDERS = 10_000
        customer = User.objects.create_user(
            "bench@example.com", "x" * 12, first_name="B", last_name="E"
        )
        client.force_login(customer)

        def place(count):
            for _ in range(count):
                order_create(
                    customer=customer,
                    configuration=Configuration(
                        gpu_model=b200, duration_days=7, lots=1, preparation="ubuntu"
                    ),
                )

        place(10)
        small = timed(lambda: client.get("/account/orders/"), 50)
        small_memory = peak_memory(lambda: client.get("/account/orders/"))
        place(490)
        large = timed(lambda: client.get("/account/orders/"), 50)
        large_memory = peak_memory(lambda: client.get("/account/orders/"))
        rows.append(("orders list, 500 vs 10 orders (time)", large / small))
        rows.append(("orders list, 500 vs 10 orders (peak memory)", large_memory / small_memory))

        # 4. Placing an order against reading the catalogue.
        placing = timed(lambda: place(1), 200)
        rows.append(("order_create vs catalogue read", placing / query_only))

        # 5. Stock is counted in the database: a fleet of 200 more H100 hosts with half their
        #    cards rented (6,400 live cards) against the demo fleet, for the catalogue read.
        demo_fleet = timed(lambda: list(catalogue()), 200)
        demo_memory = peak_memory(lambda: list(catalogue()))
        h100 = GpuModel.objects.get(slug="h100-80gb")
        fleet = Host.objects.bulk_create(
            Host(name=f"bench-h100-{n}", gpu_model=h100, cards=64, ssh_host="h", ssh_user="u")
            for n in range(200)
        )
        renter = Order.objects.filter(customer=customer).first()
        CardAllocation.objects.bulk_create(
            CardAllocation(order=renter, host=host, lot=1, card_index=index)
            for host in fleet
            for index in range(32)
        )
        big_fleet = timed(lambda: list(catalogue()), 200)
        big_memory = peak_memory(lambda: list(catalogue()))
        rows.append(("catalogue, 208 vs 8 hosts (time)", big_fleet / demo_fleet))
        rows.append(("catalogue, 208 vs 8 hosts (peak memory)", big_memory / demo_memory))
    finally:
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()

    width = max(len(name) for name, _ in rows)
    print(f"{'benchmark':<{width}}  ratio")
    for name, ratio in rows:
        print(f"{name:<{width}}  {ratio:8.2f}x")


if __name__ == "__main__":
    main()
