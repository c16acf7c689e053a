"""The customer's extend page: the three durations with today's price for the order's lots and
the new end; a choice creates the extension and leads to its payment; bad input changes
nothing."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from rental.models import OrderExtension
from rental.services import extension_create
from tests.rental.test_order_emails import utc

from .helpers import end_in


def extend_url(order) -> str:
    return reverse("rental:order_extend", kwargs={"order_id": order.pk})


def order_url(order) -> str:
    return reverse("rental:order_detail", kwargs={"order_id": order.pk})


@pytest.fixture
def order(customer, active_order):
    return active_order(customer, lots=2)


def test_the_page_prices_each_duration_for_the_orders_lots(customer_client, order):
    page = customer_client.get(extend_url(order))

    assert page.status_code == 200
    html = page.content.decode()
    for days, total in ((3, "403.20"), (7, "893.76"), (30, "3,427.20")):
        assert f'data-offer="{days}"' in html
        assert f"{days} days: {total} USD" in html
        assert utc(order.ends_at + timedelta(days=days)) in html
    assert "The rental ends on" in html and utc(order.ends_at) in html


def test_choosing_a_duration_creates_the_extension_and_leads_to_its_payment(customer_client, order):
    response = customer_client.post(extend_url(order), {"duration_days": "7"})

    extension = OrderExtension.objects.get(order=order)
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "payments:extension_pay", kwargs={"extension_id": extension.pk}
    )
    assert (extension.duration_days, str(extension.total_usd)) == (7, "893.76")
    # A double click finds the same extension.
    again = customer_client.post(extend_url(order), {"duration_days": "7"})
    assert again["Location"] == response["Location"]
    assert OrderExtension.objects.count() == 1


@pytest.mark.parametrize("value", ["5", "٣", "３", "7.0", "", "-3", "3 "])
def test_a_duration_other_than_3_7_or_30_is_refused_with_a_message(customer_client, order, value):
    response = customer_client.post(extend_url(order), {"duration_days": value})

    assert response.status_code == 400
    assert "Choose an extension of 3, 7 or 30 days." in response.content.decode()
    assert not OrderExtension.objects.exists()


def test_a_second_duration_while_one_awaits_payment_is_refused_clearly(
    customer_client, customer, order
):
    pending = extension_create(order_id=order.pk, customer=customer, duration_days=3)

    response = customer_client.post(extend_url(order), {"duration_days": "30"})

    assert response.status_code == 409
    html = response.content.decode()
    assert (
        f"An extension of 3 days ({pending.reference}) already awaits payment for this order: "
        "pay or cancel it first."
    ) in html
    assert reverse("payments:extension_pay", kwargs={"extension_id": pending.pk}) in html
    assert OrderExtension.objects.count() == 1


def test_another_customers_order_is_not_found(make_customer, order):
    stranger = Client()
    stranger.force_login(make_customer())

    assert stranger.get(extend_url(order)).status_code == 404
    assert stranger.post(extend_url(order), {"duration_days": "7"}).status_code == 404
    assert not OrderExtension.objects.exists()


def test_an_order_that_is_not_active_says_so(customer_client, customer, place_order, catalogue):
    unpaid = place_order(customer, catalogue["h100"])

    page = customer_client.get(extend_url(unpaid))
    assert page.status_code == 200
    assert "Only an active rental can be extended, before its end." in page.content.decode()
    assert 'name="duration_days"' not in page.content.decode()

    refused = customer_client.post(extend_url(unpaid), {"duration_days": "7"})
    assert refused.status_code == 409
    assert "Only an active rental can be extended, before its end." in refused.content.decode()
    assert not OrderExtension.objects.exists()


def test_a_rental_past_its_end_cannot_be_extended(customer_client, order):
    end_in(order, timedelta(seconds=-1))
    refused = customer_client.post(extend_url(order), {"duration_days": "3"})
    assert refused.status_code == 409
    assert not OrderExtension.objects.exists()


def test_a_post_without_the_csrf_token_is_refused(customer, order):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(customer)

    assert strict.post(extend_url(order), {"duration_days": "7"}).status_code == 403
    assert not OrderExtension.objects.exists()


def test_the_order_page_offers_the_extension_and_lists_them(customer_client, customer, order):
    page = customer_client.get(order_url(order)).content.decode()
    assert 'data-section="extensions"' in page
    assert extend_url(order) in page and "Extend this rental" in page

    extension = extension_create(order_id=order.pk, customer=customer, duration_days=7)
    page = customer_client.get(order_url(order)).content.decode()
    assert f'data-extension="{extension.reference}"' in page
    assert f"{extension.reference}: 7 more days, 893.76 USD" in page
    assert 'data-field="extension-status">Awaiting payment<' in page
    assert reverse("payments:extension_pay", kwargs={"extension_id": extension.pk}) in page


def test_the_order_page_of_an_unpaid_order_has_no_extensions(
    customer_client, customer, place_order, catalogue
):
    unpaid = place_order(customer, catalogue["h100"])
    page = customer_client.get(order_url(unpaid)).content.decode()
    assert 'data-section="extensions"' not in page


def test_the_order_page_costs_one_query_for_its_extensions_however_many(
    customer_client, customer, order
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from rental.services import extension_cancel

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert customer_client.get(order_url(order)).status_code == 200
        return len(queries)

    extension_cancel(
        extension_id=extension_create(order_id=order.pk, customer=customer, duration_days=3).pk,
        customer=customer,
    )
    with_one = count()
    for _ in range(9):
        extension_cancel(
            extension_id=extension_create(order_id=order.pk, customer=customer, duration_days=7).pk,
            customer=customer,
        )
    html = customer_client.get(order_url(order)).content.decode()
    assert html.count("data-extension=") == 10
    assert count() == with_one


def test_the_extend_page_speaks_italian(customer_client, order, settings):
    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    html = customer_client.get(extend_url(order)).content.decode()
    assert f"<h1>Prolunga l'ordine {order.reference}</h1>" in html
    assert "7 giorni: 893,76 USD" in html and "30 giorni: 3.427,20 USD" in html
    refused = customer_client.post(extend_url(order), {"duration_days": "5"})
    assert "Scegli un&#x27;estensione di 3, 7 o 30 giorni." in refused.content.decode()
