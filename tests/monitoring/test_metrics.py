"""/metrics: off unless METRICS_ENABLED, a bearer token, and every value read from the
database at scrape time (so any web worker answers the same)."""

from decimal import Decimal

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from monitoring.models import TaskHealth
from payments.chain.scanning import scan_network
from payments.crypto.services.payments import payment_create_for_order, payment_create_top_up
from payments.models import ChainTransfer, TransferStatus
from rental.services import order_cancel_by_customer
from tests.test_deploy import PRODUCTION_ENV, run_manage

pytestmark = pytest.mark.django_db
TOKEN = "a-long-random-scrape-token-0123456789abcdef"


@pytest.fixture
def enabled(settings):
    settings.METRICS_ENABLED = True
    settings.METRICS_TOKEN = TOKEN


def scrape(token: str | None = TOKEN, scheme: str = "Bearer"):
    headers = {"Authorization": f"{scheme} {token}"} if token is not None else {}
    return Client(headers=headers).get("/metrics")


def samples(response) -> dict[tuple[str, tuple], float]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_off_by_default_even_with_a_token(settings):
    settings.METRICS_TOKEN = TOKEN
    assert scrape().status_code == 404


def test_a_scrape_without_a_token_is_unauthorised(enabled):
    response = scrape(None)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"gpu_rental" not in response.content
    assert scrape(TOKEN, scheme="Basic").status_code == 401


@pytest.mark.parametrize("token", ["wrong", TOKEN[:-1], TOKEN + "x", TOKEN.upper()])
def test_a_scrape_with_another_token_is_forbidden(enabled, token):
    response = scrape(token)
    assert response.status_code == 403
    assert b"gpu_rental" not in response.content


def test_no_token_configured_opens_nothing(settings):
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, ""
    assert scrape("").status_code == 401
    assert scrape("anything").status_code == 403


def test_production_refuses_metrics_without_a_long_token():
    show = ("shell", "-c", "from django.conf import settings; print(settings.METRICS_ENABLED)")
    result = run_manage(*show, **PRODUCTION_ENV, METRICS_ENABLED="1", METRICS_TOKEN="short")
    assert result.returncode != 0
    assert "METRICS_TOKEN of at least 32 characters" in result.stderr
    result = run_manage(*show, **PRODUCTION_ENV, METRICS_ENABLED="1", METRICS_TOKEN=TOKEN)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "True"


def test_orders_by_status(enabled, customer, catalogue, place_order):
    kept = place_order(customer, catalogue["h100"])
    cancelled = place_order(customer, catalogue["h100"])
    order_cancel_by_customer(order_id=cancelled.pk, customer=customer)
    values = samples(scrape())
    assert kept.pk and values[("gpu_rental_orders", (("status", "awaiting_payment"),))] == 1
    assert values[("gpu_rental_orders", (("status", "cancelled"),))] == 1
    assert values[("gpu_rental_orders", (("status", "active"),))] == 0


def test_the_watcher_payments_and_confirmation_delay(
    enabled, chain, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])
    paid = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    payment_create_top_up(
        customer=customer, amount_usd=Decimal("50.00"), network_key="local", asset_symbol="tUSDC"
    )
    scan_network(network_key="local")
    values = samples(scrape())
    local = (("network", "local"),)
    assert values[("gpu_rental_watcher_lag_blocks", local)] == 1
    assert values[("gpu_rental_watcher_head_block", local)] == chain.head()
    assert values[("gpu_rental_watcher_failing", local)] == 0
    assert values[("gpu_rental_watcher_healthy", local)] == 1
    assert values[("gpu_rental_payments", (("network", "local"), ("status", "awaiting")))] == 2
    assert values[("gpu_rental_payments", (("network", "local"), ("status", "confirmed")))] == 0

    chain.transfer(paid.deposit_address.address, int(paid.amount_due_units))
    chain.mine(paid.confirmations_required)
    scan_network(network_key="local")
    transfer = ChainTransfer.objects.get(payment=paid)
    assert transfer.status == TransferStatus.CONFIRMED
    values = samples(scrape())
    assert values[("gpu_rental_payments", (("network", "local"), ("status", "awaiting")))] == 1
    assert values[("gpu_rental_payments", (("network", "local"), ("status", "confirmed")))] == 1
    delay = (transfer.confirmed_at - transfer.seen_at).total_seconds()
    histogram = "gpu_rental_payment_confirmation_delay_seconds"
    assert values[(f"{histogram}_count", local)] == 1
    assert values[(f"{histogram}_sum", local)] == pytest.approx(delay)
    assert values[(f"{histogram}_bucket", (("le", "+Inf"), ("network", "local")))] == 1
    assert values[(f"{histogram}_bucket", (("le", "10.0"), ("network", "local")))] == (
        1 if delay <= 10 else 0
    )


def test_task_failures_per_task_come_from_the_database(enabled):
    """Written by whichever worker ran the tasks: the scrape reads the rows, not a counter
    of the answering process."""
    TaskHealth.objects.create(
        task="payments.tasks.expire_payments",
        consecutive_failures=3,
        failures_total=7,
        successes_total=40,
    )
    values = samples(scrape())
    task = (("task", "payments.tasks.expire_payments"),)
    assert values[("gpu_rental_task_failures_total", task)] == 7
    assert values[("gpu_rental_task_successes_total", task)] == 40
    assert values[("gpu_rental_task_consecutive_failures", task)] == 3
    TaskHealth.objects.filter(task="payments.tasks.expire_payments").update(failures_total=8)
    assert samples(scrape())[("gpu_rental_task_failures_total", task)] == 8
