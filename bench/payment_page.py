"""The payment page against the order page, in-process CPU per request (issue 24's "payment page
CPU ÷ order page CPU"), with the QR code drawn once per payment request (today) and drawn on
every request with the page's content rendered anew (as before; today the content is kept per
state of the payment: payments_tags' `kept`), in one run.

Run with `make bench` (or `DJANGO_SETTINGS_MODULE=config.settings.test .venv/bin/python
bench/payment_page.py`). On a throw-away test database: the demo catalogue, a customer, an order
awaiting a stablecoin payment on the local network (no node runs: the pages never call one).
Rounds interleave the three measures; each prints the median ratio with its min and max over
BENCH_PAYMENT_ROUNDS (7) rounds of BENCH_PAYMENT_REQUESTS (20) requests each. Nothing here
asserts a time.
"""

import os
import statistics
import sys
import time
from pathlib import Path

# The project's root before bench/ (bench/api.py would stand for the api app).
sys.path.insert(0, str(Path(__file__).resolve().parent))
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
from results import record  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_PAYMENT_ROUNDS", "7"))
REQUESTS = int(os.environ.get("BENCH_PAYMENT_REQUESTS", "20"))


def per_request(get, url: str, before=None) -> float:
    """Mean CPU seconds per request over REQUESTS requests."""
    start = time.process_time()
    for _ in range(REQUESTS):
        if before:
            before()
        response = get(url)
        assert response.status_code == 200, (url, response.status_code)
    return (time.process_time() - start) / REQUESTS


def main() -> None:
    from accounts.models import User
    from payments.crypto.selectors.payment_page import payment_qr_svg
    from payments.crypto.services.payments import payment_create_for_order
    from payments.templatetags.payments_tags import _kept

    def forget() -> None:
        """As before: the QR code drawn and the page's content rendered on every request."""
        payment_qr_svg.cache_clear()
        _kept.clear()

    from rental.models import GpuModel, Preparation
    from rental.services import Configuration, order_create

    # The local network enabled with a token address and an RPC URL where nothing listens.
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9"}
    settings.LOCAL_TOKEN_ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        call_command("load_demo_catalogue", stdout=open(os.devnull, "w"))  # noqa: SIM115
        customer = User.objects.create_user(
            "bench-payment@example.com", "bench-only-password", first_name="B", last_name="P"
        )
        order = order_create(
            customer=customer,
            configuration=Configuration(
                gpu_model=GpuModel.objects.filter(active=True).order_by("pk").first(),
                duration_days=7,
                lots=2,
                preparation=Preparation.PYTORCH,
            ),
        )
        payment = payment_create_for_order(
            order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
        )
        client = Client()
        client.force_login(customer)
        order_url = f"/account/orders/{order.pk}/"
        payment_url = f"/account/payments/{payment.pk}/"
        html = client.get(payment_url).content.decode()
        assert "<svg" in html and 'class="payment-qr"' in html, "the payment page shows no QR"
        for url in (order_url, payment_url):  # warm-up
            per_request(client.get, url)

        cached, drawn = [], []
        for number in range(ROUNDS):
            measures = [
                ("order", lambda: per_request(client.get, order_url)),
                ("cached", lambda: per_request(client.get, payment_url)),
                ("drawn", lambda: per_request(client.get, payment_url, before=forget)),
            ]
            if number % 2:
                measures.reverse()
            times = {name: measure() for name, measure in measures}
            cached.append(times["cached"] / times["order"])
            drawn.append(times["drawn"] / times["order"])
            order_ms = times["order"] * 1000
    finally:
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()

    print(
        f"payment page CPU ÷ order page CPU ({ROUNDS} rounds × {REQUESTS} requests; "
        f"order page {order_ms:.1f} ms in the last round)"
    )
    record("payment_page.cpu_vs_order", cached)
    for name, ratios in (
        ("content kept per state, QR once per request (now)", cached),
        ("content and QR drawn on every request (before)", drawn),
    ):
        print(
            f"  {name:<50} {statistics.median(ratios):5.2f}x  "
            f"(min {min(ratios):.2f}, max {max(ratios):.2f})"
        )


if __name__ == "__main__":
    main()
