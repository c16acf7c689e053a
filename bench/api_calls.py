"""The API against what it sits beside, as ratios measured in one run (interleaved rounds,
median with min and max). Run with `make bench`; never part of `make test`; asserts no time.

1. Creating an order: `POST /api/v1/orders/` with a token and an Idempotency-Key against the
   page's `POST /order/confirm/` with a session and CSRF, same configuration, same service
   (rental.services.order_create) behind both. Each order is cancelled after it is placed, so
   the stock and the unpaid-orders limit stay the same from round to round.
2. Delivering webhooks: 1,000 events written to the outbox in one transaction and delivered
   after its commit (fan-out, signing, the address guard, one POST each, the delivery log)
   to a local receiver, against 1,000 bare POSTs of the same bodies to the same receiver over
   a new connection each. Prints events per second as well.

Throw-away test database on the configured PostgreSQL; Celery tasks run eagerly (the test
settings), so the time is the work itself, not a broker's.
"""

import http.client
import http.server
import json
import logging
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)

# The deliveries run in this process, as the tests run them: Celery's app loaded (eager under the
# test settings), so an outbox dispatch runs at the commit instead of waiting for a relay process.
import config.celery_app  # noqa: E402, F401

ROUNDS = int(os.environ.get("BENCH_API_ROUNDS", "5"))
ORDERS = int(os.environ.get("BENCH_API_ORDERS", "40"))
EVENTS = int(os.environ.get("BENCH_API_EVENTS", "1000"))
CONFIGURATION = {"gpu_model": "h100-80gb", "duration_days": 7, "lots": 1, "preparation": "pytorch"}


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    received = 0

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()
        Receiver.received += 1

    def log_message(self, *args):
        pass


def spread(values, digits=2) -> str:
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{middle:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def main() -> None:
    logging.disable(logging.WARNING)  # one INFO line per task and delivery otherwise
    from accounts.models import User
    from api.tokens import token_create
    from api.webhooks.models import WebhookDelivery
    from api.webhooks.services.endpoints import endpoint_create
    from outbox.services import outbox_emit
    from rental.models import GpuModel, Host, Order
    from rental.services.orders import order_cancel_by_customer

    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        call_command("load_demo_catalogue", stdout=open(os.devnull, "w"))  # noqa: SIM115
        h100 = GpuModel.objects.get(slug="h100-80gb")
        Host.objects.create(name="bench-api", gpu_model=h100, cards=64, ssh_host="h", ssh_user="u")
        settings.MAX_UNPAID_ORDERS = 10_000
        settings.API_RATE_LIMIT = "1000000/min"
        customer = User.objects.create_user(
            "bench-api@example.com", "x" * 12, first_name="Bench", last_name="Api"
        )
        token = token_create(owner=customer, name="bench", scopes=["read", "order", "pay"]).raw
        api = Client(headers={"Authorization": f"Bearer {token}"})
        page = Client(enforce_csrf_checks=True)
        page.force_login(customer)
        review = "/order/review/?" + "&".join(f"{k}={v}" for k, v in CONFIGURATION.items())

        def through_api(number: int) -> None:
            response = api.post(
                "/api/v1/orders/",
                json.dumps(CONFIGURATION),
                content_type="application/json",
                headers={"Idempotency-Key": f"bench-{time.time_ns()}-{number}"},
            )
            assert response.status_code == 201, response.content[:300]

        def through_form(number: int) -> None:
            page.get(review)
            csrf = page.cookies[settings.CSRF_COOKIE_NAME].value
            response = page.post("/order/confirm/", {**CONFIGURATION, "csrfmiddlewaretoken": csrf})
            assert response.status_code == 302, response.content[:300]

        def orders(create) -> float:
            start = time.perf_counter()
            for number in range(ORDERS):
                create(number)
            elapsed = (time.perf_counter() - start) / ORDERS
            for order in Order.objects.filter(customer=customer, status="awaiting_payment"):
                order_cancel_by_customer(order_id=order.pk, customer=customer)
            return elapsed

        endpoint = endpoint_create(
            owner=customer, url=f"http://127.0.0.1:{port}/hook", events=["balance.credited"]
        )
        body = json.dumps({"id": "x" * 36, "type": "balance.credited", "data": {"n": 1}}).encode()

        def deliveries() -> float:
            before = WebhookDelivery.objects.filter(endpoint=endpoint, status="delivered").count()
            start = time.perf_counter()
            with transaction.atomic():
                for number in range(EVENTS):
                    outbox_emit(
                        event_type="balance.credited", account=customer.pk, payload={"n": number}
                    )
            elapsed = time.perf_counter() - start  # the commit ran the fan-out and deliveries
            after = WebhookDelivery.objects.filter(endpoint=endpoint, status="delivered").count()
            assert after - before == EVENTS, (before, after)
            return elapsed

        def bare_posts() -> float:
            start = time.perf_counter()
            for _ in range(EVENTS):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("POST", "/hook", body, {"Content-Type": "application/json"})
                connection.getresponse().read()
                connection.close()
            return time.perf_counter() - start

        through_api(0), through_form(0), orders(lambda n: None)  # warm both paths
        runs = {"api": [], "form": [], "hooks": [], "bare": []}
        for number in range(ROUNDS):
            pairs = (("api", through_api), ("form", through_form))
            for name, create in pairs if number % 2 == 0 else pairs[::-1]:
                runs[name].append(orders(create))
            hooks = (("hooks", deliveries), ("bare", bare_posts))
            for name, work in hooks if number % 2 == 0 else hooks[::-1]:
                runs[name].append(work())
            print(f"  round {number + 1}/{ROUNDS} done", flush=True)
    finally:
        server.shutdown()
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()

    order_ratio = [a / f for a, f in zip(runs["api"], runs["form"], strict=True)]
    hook_ratio = [h / b for h, b in zip(runs["hooks"], runs["bare"], strict=True)]
    rate = [EVENTS / seconds for seconds in runs["hooks"]]
    print(f"API benchmarks: median (min–max) of {ROUNDS} interleaved rounds")
    print(f"  order through the API, ms        {spread([s * 1000 for s in runs['api']])}")
    print(f"  order through the form, ms       {spread([s * 1000 for s in runs['form']])}")
    print(f"  API ÷ form                       {spread(order_ratio)}")
    print(f"  {EVENTS} webhooks delivered, s       {spread(runs['hooks'])}")
    print(f"  {EVENTS} bare POSTs, s               {spread(runs['bare'])}")
    print(f"  webhooks ÷ bare POSTs            {spread(hook_ratio)}")
    print(f"  webhook deliveries per second    {spread(rate, 0)}")


if __name__ == "__main__":
    main()
