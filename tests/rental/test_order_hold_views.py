"""What the customer is told about the hold: on the review page before confirming, on the
order page while it awaits payment, when the unpaid-orders limit is reached, and once the tick
released an order nobody paid."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import formats, timezone

from payments.crypto.services.payments import payment_create_for_order
from rental.models import Order, OrderStatus
from rental.services.lifecycle import rentals_tick
from tests.conftest import lots_available, set_stock
from tests.mfa_fixtures import enrol_totp

REVIEW = reverse("rental:review")
CONFIRM = reverse("rental:confirm")
CONFIGURATION = {
    "gpu_model": "h100-80gb",
    "duration_days": "7",
    "lots": "1",
    "preparation": "ubuntu",
}


def field(html: str, name: str) -> str:
    """The text of the first element carrying data-field=name (tags stripped)."""
    match = re.search(rf'<(\w+)[^>]*data-field="{name}"[^>]*>(.*?)</\1>', html, flags=re.DOTALL)
    assert match, f'no data-field="{name}" on the page'
    return " ".join(re.sub(r"<[^>]+>", "", match.group(2)).split())


def utc(moment) -> str:
    return formats.date_format(timezone.localtime(moment, timezone.UTC), "DATETIME_FORMAT")


def order_page(client, order) -> str:
    response = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def operator_client(make_customer) -> Client:
    operator = make_customer(email="ops@example.com")
    operator.groups.add(Group.objects.get_or_create(name="operators")[0])
    enrol_totp(operator)
    browser = Client()
    browser.force_login(operator)
    return browser


def test_the_review_page_says_how_long_the_lots_are_held(customer_client, catalogue, settings):
    html = customer_client.get(REVIEW, CONFIGURATION).content.decode()
    assert field(html, "hold-notice") == (
        "After you confirm, the lots are held for 30 minutes for you to pay; a stablecoin "
        "payment holds them until its own expiry. You pay on the next step, in stablecoins or "
        "from your USD balance."
    )
    settings.ORDER_HOLD_MINUTES = 45
    html = customer_client.get(REVIEW, CONFIGURATION).content.decode()
    assert field(html, "hold-notice").startswith("After you confirm, the lots are held for 45 ")


def test_the_order_page_says_until_when_the_lots_are_held(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])
    order.refresh_from_db()

    html = order_page(customer_client, order)

    assert field(html, "hold") == (
        f"Lots held until {utc(order.hold_until)}. Pay before then, or open a stablecoin "
        "payment, which holds them until its own expiry; otherwise the order is cancelled and "
        "the lots are released."
    )
    iso = timezone.localtime(order.hold_until, timezone.UTC).isoformat()
    assert f'<time datetime="{iso}">' in html


@pytest.fixture
def local_network(settings):
    """The local network enabled by settings alone: its RPC URL is never reached."""
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9"}
    settings.LOCAL_TOKEN_ADDRESS = "0x" + "11" * 20
    settings.PAYMENT_CONFIRMATIONS = {**settings.PAYMENT_CONFIRMATIONS, "local": 3}


def test_an_order_with_a_live_payment_is_held_until_the_payments_expiry(
    customer_client, customer, catalogue, place_order, local_network
):
    h100 = catalogue["h100"]
    set_stock(h100, 2)
    order = place_order(customer, h100, lots=2)
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )

    html = order_page(customer_client, order)
    # Long past the order's own hold, the tick leaves it to the payment.
    report = rentals_tick(now=payment.expires_at + timedelta(hours=1))

    assert field(html, "hold") == (
        "Lots held until the expiry of the open stablecoin payment: its page shows the time left."
    )
    assert report.released == []
    assert Order.objects.get(pk=order.pk).status == OrderStatus.AWAITING_PAYMENT
    assert lots_available(h100) == 0


def test_confirming_past_the_unpaid_orders_limit_shows_the_review_with_the_message(
    customer_client, customer, catalogue, place_order
):
    h100 = catalogue["h100"]
    set_stock(h100, 10)
    for _ in range(3):
        place_order(customer, h100)

    response = customer_client.post(CONFIRM, CONFIGURATION)

    assert response.status_code == 409
    html = response.content.decode()
    error = re.search(r'id="order-error">(.*?)</p>', html).group(1)
    assert error == (
        "You already have 3 orders awaiting payment, the most one account may have at once. "
        "Pay or cancel one of them before placing another order."
    )
    assert "Review your order" in html
    assert Order.objects.filter(customer=customer).count() == 3
    assert lots_available(h100) == 7


def test_a_released_order_shows_cancelled_and_why(
    customer_client, customer, catalogue, place_order, operator_client
):
    order = place_order(customer, catalogue["h100"])
    rentals_tick(now=Order.objects.get(pk=order.pk).hold_until + timedelta(seconds=1))

    html = order_page(customer_client, order)
    assert field(html, "status") == "Cancelled"
    timeline = html[html.index('data-section="timeline"') :]
    assert re.findall(r"</time> — ([^<]+)</li>", timeline) == ["Awaiting payment", "Cancelled"]
    assert 'data-field="hold"' not in html
    ops = operator_client.get(reverse("rental:ops_order", kwargs={"order_id": order.pk}))
    history = ops.content.decode()
    history = history[history.index('data-field="history"') :]
    assert "<q>Lots held for 30 minutes without a payment</q>" in history
