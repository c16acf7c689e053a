"""The webhooks' API: endpoints CRUD, delivery log, redelivery; scopes, ownership, bad input,
and every answer against the schema."""

import pytest
from django.urls import reverse

from api.webhooks.models import WebhookDelivery, WebhookEndpoint
from tests.api.contract import assert_matches_schema

pytestmark = pytest.mark.django_db

LIST = "/api/v1/webhooks/endpoints/"
DETAIL = "/api/v1/webhooks/endpoints/{endpoint_id}/"
DELIVERIES = "/api/v1/webhooks/endpoints/{endpoint_id}/deliveries/"
REDELIVER = "/api/v1/webhooks/deliveries/{delivery_id}/redeliver/"


def test_create_shows_the_secret_once_then_never(api_client, receiver, customer):
    response = api_client.post(
        LIST, {"url": receiver.url(), "events": ["order.paid", "order.active"]}, format="json"
    )
    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", LIST)
    body = response.json()
    endpoint = WebhookEndpoint.objects.get(owner=customer)
    assert body["secret"] == endpoint.secret and body["secret"].startswith("whsec_")
    assert body["events"] == ["order.paid", "order.active"]

    shown = api_client.get(DETAIL.format(endpoint_id=endpoint.pk))
    assert shown.status_code == 200
    assert_matches_schema(shown, "get", DETAIL)
    assert "secret" not in shown.json()
    listed = api_client.get(LIST)
    assert_matches_schema(listed, "get", LIST)
    assert [e["id"] for e in listed.json()["results"]] == [endpoint.pk]
    assert "secret" not in listed.json()["results"][0]


def test_a_replayed_create_does_not_show_the_secret_again(api_client, receiver, customer):
    from api.models import IdempotencyKey

    body = {"url": receiver.url(), "events": ["order.paid"]}
    first = api_client.post(LIST, body, format="json", headers={"Idempotency-Key": "hook-1"})
    assert first.status_code == 201, first.content
    assert_matches_schema(first, "post", LIST)
    endpoint = WebhookEndpoint.objects.get(owner=customer)
    assert first.json()["secret"] == endpoint.secret
    assert "Idempotent-Replayed" not in first

    replay = api_client.post(LIST, body, format="json", headers={"Idempotency-Key": "hook-1"})

    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert_matches_schema(replay, "post", LIST)
    assert replay.json()["id"] == endpoint.pk
    assert replay.json()["secret"] is None
    assert endpoint.secret not in replay.content.decode()
    # Nor is it kept with the stored answer for the 24 hours of the key.
    stored = IdempotencyKey.objects.get(owner=customer, key="hook-1")
    assert endpoint.secret.encode() not in bytes(stored.response_body)
    assert WebhookEndpoint.objects.filter(owner=customer).count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.com/", "events": ["order.paid"]}, "url"),
        ({"url": "http://127.0.0.1:1/", "events": ["order.nope"]}, "events.0"),
        ({"url": "http://127.0.0.1:1/", "events": []}, "events"),
        ({"url": "http://127.0.0.1:1/", "events": "order.paid"}, "events"),
        ({"url": 5, "events": ["order.paid"]}, "url"),
        ({"events": ["order.paid"]}, "url"),
        ({"url": "http://127.0.0.1:1/", "events": ["order.paid"], "secret": "mine"}, "secret"),
    ],
)
def test_bad_input_is_a_400_problem_naming_the_field_and_creates_nothing(api_client, body, field):
    response = api_client.post(LIST, body, format="json")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert field in [error["field"] for error in response.json()["errors"]]
    assert not WebhookEndpoint.objects.exists()


def test_an_internal_url_is_refused_in_production(api_client, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    response = api_client.post(
        LIST, {"url": "http://169.254.169.254/", "events": ["order.paid"]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "url"
    assert not WebhookEndpoint.objects.exists()


@pytest.fixture
def others_endpoint(make_customer, receiver):
    from api.webhooks.services.endpoints import endpoint_create

    return endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])


def test_another_customers_endpoint_is_404_for_every_method(api_client, others_endpoint):
    path = DETAIL.format(endpoint_id=others_endpoint.pk)
    for response in (
        api_client.get(path),
        api_client.patch(path, {"enabled": False}, format="json"),
        api_client.delete(path),
        api_client.get(DELIVERIES.format(endpoint_id=others_endpoint.pk)),
    ):
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/problem+json")
    others_endpoint.refresh_from_db()
    assert others_endpoint.enabled is True


def test_writes_need_the_order_scope_and_reads_the_read_scope(
    api_client, api_token, customer, receiver
):
    read_only = api_client.for_token(api_token(customer, scopes=("read",)))
    response = read_only.post(
        LIST, {"url": receiver.url(), "events": ["order.paid"]}, format="json"
    )
    assert response.status_code == 403
    assert not WebhookEndpoint.objects.exists()
    assert read_only.get(LIST).status_code == 200
    order_only = api_client.for_token(api_token(customer, scopes=("order",)))
    assert order_only.get(LIST).status_code == 403
    assert api_client.anonymous().get(LIST).status_code == 401


def test_patch_changes_events_and_disables_and_delete_removes(api_client, customer, receiver):
    created = api_client.post(
        LIST, {"url": receiver.url(), "events": ["order.paid"]}, format="json"
    )
    path = DETAIL.format(endpoint_id=created.json()["id"])
    response = api_client.patch(path, {"events": ["order.ended"], "enabled": False}, format="json")
    assert response.status_code == 200
    assert_matches_schema(response, "patch", DETAIL)
    assert (response.json()["events"], response.json()["enabled"]) == (["order.ended"], False)
    assert response.json()["disabled_reason"] == "owner"
    bad = api_client.patch(path, {"enabled": "sometimes"}, format="json")
    assert bad.status_code == 400
    deleted = api_client.delete(path)
    assert deleted.status_code == 204
    assert not WebhookEndpoint.objects.filter(owner=customer).exists()


def test_delivery_log_and_redelivery(
    api_client, customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=["balance.credited"])
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "7.00")
    log = api_client.get(DELIVERIES.format(endpoint_id=endpoint.pk))
    assert log.status_code == 200
    assert_matches_schema(log, "get", DELIVERIES)
    (entry,) = log.json()["results"]
    assert (entry["status"], entry["event_type"], entry["attempts"]) == (
        "delivered",
        "balance.credited",
        1,
    )
    assert entry["attempt_log"][0]["response_code"] == 200

    with django_capture_on_commit_callbacks(execute=True):
        again = api_client.post(
            REDELIVER.format(delivery_id=entry["id"]), headers={"Idempotency-Key": "redo-1"}
        )
    assert again.status_code == 202, again.content
    assert_matches_schema(again, "post", REDELIVER)
    assert len(receiver.received) == 2
    assert receiver.received[1].headers["webhook-id"] == entry["event_id"]
    # The same key replays the answer and sends nothing more.
    with django_capture_on_commit_callbacks(execute=True):
        replay = api_client.post(
            REDELIVER.format(delivery_id=entry["id"]), headers={"Idempotency-Key": "redo-1"}
        )
    assert replay.status_code == 202 and replay["Idempotent-Replayed"] == "true"
    assert len(receiver.received) == 2
    assert WebhookDelivery.objects.get(pk=entry["id"]).attempts == 2


def test_another_customers_delivery_is_404(
    api_client, make_customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    other = make_customer()
    endpoint = endpoint_for(other, events=["balance.credited"])
    with django_capture_on_commit_callbacks(execute=True):
        credit(other, "7.00")
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    response = api_client.post(REDELIVER.format(delivery_id=delivery.pk))
    assert response.status_code == 404
    assert WebhookDelivery.objects.get(pk=delivery.pk).attempts == 1


def test_the_urls_are_in_the_api_namespace():
    assert reverse("api:webhook_endpoints") == LIST
