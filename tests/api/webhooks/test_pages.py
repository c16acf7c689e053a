"""The account's webhook pages: create (secret shown once), bad input 400, another customer's
endpoint 404, enable/disable, delete, the delivery log with its redeliver button."""

import pytest
from django.urls import reverse

from api.webhooks.models import WebhookDelivery, WebhookEndpoint

pytestmark = pytest.mark.django_db

LIST = reverse("webhooks:endpoint_list")


def detail(endpoint) -> str:
    return reverse("webhooks:endpoint_detail", kwargs={"endpoint_id": endpoint.pk})


def test_create_shows_the_secret_on_the_next_page_only(customer_client, customer, receiver):
    response = customer_client.post(LIST, {"url": receiver.url(), "events": ["order.paid"]})
    endpoint = WebhookEndpoint.objects.get(owner=customer)
    assert response.status_code == 302 and response["Location"] == detail(endpoint)
    first = customer_client.get(detail(endpoint)).content.decode()
    assert endpoint.secret in first
    again = customer_client.get(detail(endpoint)).content.decode()
    assert endpoint.secret not in again
    assert receiver.url() in customer_client.get(LIST).content.decode()


@pytest.mark.parametrize(
    "data",
    [
        {"url": "ftp://example.com/", "events": ["order.paid"]},
        {"url": "http://127.0.0.1:1/", "events": ["order.nope"]},
        {"url": "http://127.0.0.1:1/"},
        {"url": "", "events": ["order.paid"]},
    ],
)
def test_bad_input_is_400_with_the_message_and_creates_nothing(customer_client, data):
    response = customer_client.post(LIST, data)
    assert response.status_code == 400
    assert (
        'class="error' in response.content.decode() or "aria-invalid" in response.content.decode()
    )
    assert not WebhookEndpoint.objects.exists()


def test_an_internal_url_is_refused_in_production_with_its_message(customer_client, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    response = customer_client.post(LIST, {"url": "http://10.0.0.1/", "events": ["order.paid"]})
    assert response.status_code == 400
    assert "internal address" in response.content.decode()


def test_another_customers_endpoint_is_404(customer_client, make_customer, receiver):
    from api.webhooks.services.endpoints import endpoint_create

    other = endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])
    assert customer_client.get(detail(other)).status_code == 404
    enabled = reverse("webhooks:endpoint_enabled", kwargs={"endpoint_id": other.pk})
    assert customer_client.post(enabled, {"enabled": "0"}).status_code == 404
    delete = reverse("webhooks:endpoint_delete", kwargs={"endpoint_id": other.pk})
    assert customer_client.post(delete).status_code == 404
    other.refresh_from_db()
    assert other.enabled is True


def test_disable_enable_and_delete(customer_client, customer, endpoint_for):
    endpoint = endpoint_for(customer, events=["order.paid"])
    url = reverse("webhooks:endpoint_enabled", kwargs={"endpoint_id": endpoint.pk})
    assert customer_client.post(url, {"enabled": "maybe"}).status_code == 400
    customer_client.post(url, {"enabled": "0"})
    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.disabled_reason) == (False, "owner")
    customer_client.post(url, {"enabled": "1"})
    endpoint.refresh_from_db()
    assert endpoint.enabled is True
    customer_client.post(reverse("webhooks:endpoint_delete", kwargs={"endpoint_id": endpoint.pk}))
    assert not WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_the_delivery_log_shows_attempts_and_redelivers(
    customer_client, customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=["balance.credited"])
    receiver.statuses = [500]
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "4.00")
    page = customer_client.get(detail(endpoint)).content.decode()
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert f'data-delivery="{delivery.pk}"' in page
    assert "500" in page and "balance.credited" in page
    assert customer_client.get(detail(endpoint) + "?page=٢").status_code == 200  # ASCII only
    url = reverse("webhooks:delivery_redeliver", kwargs={"delivery_id": delivery.pk})
    with django_capture_on_commit_callbacks(execute=True):
        response = customer_client.post(url)
    assert response.status_code == 302
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert [r.status for r in receiver.received] == [500, 200]


def test_pages_name_the_events_in_words_in_the_users_language(
    customer_client, customer, endpoint_for, credit, django_capture_on_commit_callbacks
):
    import re

    endpoint = endpoint_for(customer, events=["order.paid", "balance.credited"])
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "4.00")
    listed = customer_client.get(LIST).content.decode()
    row = re.search(rf'data-endpoint="{endpoint.pk}".*?</tr>', listed, re.S).group(0)
    assert "An order is paid, Money is credited to the USD balance" in row
    assert "order.paid" not in row
    shown = customer_client.get(detail(endpoint)).content.decode()
    events = re.search(r'data-field="events">(.*?)</dd>', shown, re.S).group(1)
    assert events == "An order is paid, Money is credited to the USD balance"
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    entry = re.search(rf'data-delivery="{delivery.pk}".*?</tr>', shown, re.S).group(0)
    assert "Money is credited to the USD balance" in entry

    from django.conf import settings

    customer_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    italian = customer_client.get(detail(endpoint)).content
    assert "Un ordine è pagato" in italian.decode()


def test_a_failed_delivery_shows_when_it_is_tried_again(
    customer_client, customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=["balance.credited"])
    receiver.statuses = [500]
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "4.00")
    page = customer_client.get(detail(endpoint)).content.decode()
    assert "Next attempt" in page
