"""Rotating an endpoint's secret (API and page): the new secret shown once; during the overlap
each delivery carries both signatures and the standardwebhooks library accepts it with either
secret; after it, only the new one. Old secrets migrated to the standard form keep their key."""

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from importlib import import_module

import pytest
from django.apps import apps
from django.urls import reverse
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from api.models import IdempotencyKey
from api.webhooks.models import WebhookEndpoint
from api.webhooks.services.rotation import endpoint_rotate_secret
from outbox import events
from tests.api.contract import assert_matches_schema

from .receiver import verify_signature

pytestmark = pytest.mark.django_db

ROTATE = "/api/v1/webhooks/endpoints/{endpoint_id}/rotate-secret/"


def credit_delivered(customer, credit, capture, amount="5.00"):
    with capture(execute=True):
        credit(customer, amount)


def test_rotation_shows_the_new_secret_once_and_signs_with_both_during_the_overlap(
    api_client, customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    old = endpoint.secret
    before = timezone.now()

    response = api_client.post(
        ROTATE.format(endpoint_id=endpoint.pk), headers={"Idempotency-Key": "rotate-1"}
    )

    assert response.status_code == 200, response.content
    assert_matches_schema(response, "post", ROTATE)
    endpoint.refresh_from_db()
    new = response.json()["secret"]
    assert new == endpoint.secret != old and new.startswith("whsec_")
    assert 24 <= len(base64.b64decode(new.removeprefix("whsec_"))) <= 64
    until = datetime.fromisoformat(response.json()["previous_secret_expires_at"])
    assert timedelta(hours=23, minutes=59) < until - before <= timedelta(hours=24, seconds=5)
    # The same key replays the answer without the secret (nor is it stored with it).
    replay = api_client.post(
        ROTATE.format(endpoint_id=endpoint.pk), headers={"Idempotency-Key": "rotate-1"}
    )
    assert replay.status_code == 200 and replay["Idempotent-Replayed"] == "true"
    assert replay.json()["secret"] is None
    assert new.encode() not in bytes(
        IdempotencyKey.objects.get(owner=customer, key="rotate-1").response_body
    )
    endpoint.refresh_from_db()
    assert endpoint.secret == new  # not rotated twice
    shown = api_client.get(f"/api/v1/webhooks/endpoints/{endpoint.pk}/").json()
    assert shown["previous_secret_expires_at"] == response.json()["previous_secret_expires_at"]
    assert "secret" not in shown

    credit_delivered(customer, credit, django_capture_on_commit_callbacks)

    (request,) = receiver.received
    signatures = request.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    headers = dict(request.headers.items())
    assert Webhook(new).verify(request.body, headers)["type"] == "balance.credited"
    assert Webhook(old).verify(request.body, headers)["type"] == "balance.credited"


def test_after_the_overlap_only_the_new_secret_signs(
    customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    old = endpoint.secret
    rotated = endpoint_rotate_secret(
        endpoint_id=endpoint.pk, owner=customer, now=timezone.now() - timedelta(hours=25)
    )

    credit_delivered(customer, credit, django_capture_on_commit_callbacks)

    (request,) = receiver.received
    assert " " not in request.headers["webhook-signature"]
    assert verify_signature(rotated.secret, request.body, request.headers)
    assert not verify_signature(old, request.body, request.headers)


def test_another_customers_endpoint_cannot_be_rotated(api_client, make_customer, receiver):
    from api.webhooks.services.endpoints import endpoint_create

    other = endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])
    response = api_client.post(ROTATE.format(endpoint_id=other.pk))
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/problem+json")
    assert WebhookEndpoint.objects.get(pk=other.pk).secret == other.secret
    assert api_client.post(ROTATE.format(endpoint_id=0)).status_code == 404


def test_rotation_needs_the_order_scope(api_client, api_token, customer, endpoint_for):
    endpoint = endpoint_for(customer)
    read_only = api_client.for_token(api_token(customer, scopes=("read",)))
    assert read_only.post(ROTATE.format(endpoint_id=endpoint.pk)).status_code == 403
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).secret == endpoint.secret


def test_the_page_button_rotates_and_shows_the_new_secret_once(
    customer_client, customer, endpoint_for
):
    endpoint = endpoint_for(customer)
    old = endpoint.secret
    page = reverse("webhooks:endpoint_detail", kwargs={"endpoint_id": endpoint.pk})
    button = reverse("webhooks:endpoint_rotate_secret", kwargs={"endpoint_id": endpoint.pk})
    assert f'action="{button}"' in customer_client.get(page).content.decode()

    response = customer_client.post(button)

    assert response.status_code == 302 and response["Location"] == page
    endpoint.refresh_from_db()
    assert endpoint.secret != old and endpoint.previous_secret == old
    shown = customer_client.get(page).content.decode()
    assert endpoint.secret in shown and 'data-field="rotation-overlap"' in shown
    again = customer_client.get(page).content.decode()
    assert endpoint.secret not in again and old not in again
    assert 'data-field="rotation-overlap"' in again  # the overlap still runs


def test_the_page_button_of_another_customers_endpoint_is_404(
    customer_client, make_customer, receiver
):
    from api.webhooks.services.endpoints import endpoint_create

    other = endpoint_create(owner=make_customer(), url=receiver.url(), events=["order.paid"])
    button = reverse("webhooks:endpoint_rotate_secret", kwargs={"endpoint_id": other.pk})
    assert customer_client.post(button).status_code == 404
    assert WebhookEndpoint.objects.get(pk=other.pk).secret == other.secret


def test_the_migration_keeps_an_old_secrets_key(customer, receiver):
    """0004: an old `whsec_<token_urlsafe>` secret was the HMAC key as text; its standard form
    `whsec_` + base64(text) decodes to the very same key bytes."""
    legacy = "whsec_" + secrets.token_urlsafe(32)
    endpoint = WebhookEndpoint.objects.create(
        owner=customer, url=receiver.url(), events=["order.paid"], secret=legacy
    )
    migration = import_module("api.webhooks.migrations.0004_standard_webhooks_secrets")

    migration.to_standard(apps, None)

    endpoint.refresh_from_db()
    assert endpoint.secret == "whsec_" + base64.b64encode(legacy.encode()).decode()
    # A signature made with the old key verifies with the migrated secret by the library.
    msg_id, now = "msg_1", datetime.now(tz=UTC)
    body = '{"type":"order.paid"}'
    digest = hmac.new(
        legacy.encode(), f"{msg_id}.{int(now.timestamp())}.{body}".encode(), hashlib.sha256
    ).digest()
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": "v1," + base64.b64encode(digest).decode(),
    }
    assert Webhook(endpoint.secret).verify(body, headers) == {"type": "order.paid"}
    with pytest.raises(WebhookVerificationError):
        Webhook("whsec_" + base64.b64encode(b"x" * 32).decode()).verify(body, headers)
    migration.to_legacy(apps, None)
    endpoint.refresh_from_db()
    assert endpoint.secret == legacy
