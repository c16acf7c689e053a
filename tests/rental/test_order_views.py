from django.urls import reverse

from rental.models import OrderStatus
from tests.conftest import lots_available


def test_orders_list_shows_only_the_customers_orders(
    customer_client, customer, make_customer, catalogue, place_order
):
    mine = place_order(customer, catalogue["b200"], lots=3)
    theirs = place_order(make_customer(), catalogue["h100"], lots=1)
    html = customer_client.get(reverse("rental:order_list")).content.decode()
    assert mine.reference in html
    assert theirs.reference not in html
    assert "5,745.60 USD" in html


def test_orders_need_a_login(client):
    response = client.get(reverse("rental:order_list"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_another_customers_order_answers_404(
    customer_client, make_customer, catalogue, place_order
):
    theirs = place_order(make_customer(), catalogue["h100"], lots=2)
    detail = customer_client.get(reverse("rental:order_detail", kwargs={"order_id": theirs.pk}))
    cancel = customer_client.post(reverse("payments:order_cancel", kwargs={"order_id": theirs.pk}))
    assert detail.status_code == 404
    assert cancel.status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == OrderStatus.AWAITING_PAYMENT


def test_unknown_order_id_answers_404(customer_client):
    assert customer_client.get("/account/orders/999999/").status_code == 404
    assert customer_client.get("/account/orders/abc/").status_code == 404


def test_customer_cancels_an_order_and_the_lots_come_back(
    customer_client, customer, catalogue, place_order
):
    h200 = catalogue["h200"]
    before = lots_available(h200)
    order = place_order(customer, h200, lots=2)

    response = customer_client.post(
        reverse("payments:order_cancel", kwargs={"order_id": order.pk}), follow=True
    )

    html = response.content.decode()
    assert f"Order {order.reference} is cancelled and its lots are released." in html
    assert 'data-field="status">Cancelled<' in html
    assert "Cancel this order" not in html
    assert lots_available(h200) == before


def test_cancelling_an_already_cancelled_order_says_why_and_changes_nothing(
    customer_client, customer, catalogue, place_order
):
    h200 = catalogue["h200"]
    order = place_order(customer, h200, lots=2)
    url = reverse("payments:order_cancel", kwargs={"order_id": order.pk})
    customer_client.post(url)
    stock = lots_available(h200)

    response = customer_client.post(url)

    assert response.status_code == 409
    assert "Only an order awaiting payment can be cancelled." in response.content.decode()
    assert lots_available(h200) == stock


def test_order_page_shows_the_timeline(customer_client, customer, catalogue, place_order):
    order = place_order(customer, catalogue["mi300x"], lots=1)
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    timeline = html[html.index('class="timeline"') :]
    assert "Awaiting payment" in timeline[: timeline.index("</ol>")]
    assert 'data-notice="rocm"' in html
