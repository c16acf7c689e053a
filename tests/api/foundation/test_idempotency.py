"""Idempotency-Key on POST: replay, mismatch, parallel requests, purge, per owner."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from api.idempotency import idempotency_keys_purge
from api.models import ApiToken, IdempotencyKey
from api.tasks import purge_idempotency_keys
from tests.api.conftest import TokenClient
from tests.api.foundation.urls import TokenCreate
from tests.concurrency import run_concurrently

URL = "/api/test/tokens/new/"
pytestmark = pytest.mark.urls("tests.api.foundation.urls")


def _created(owner, name):
    return ApiToken.objects.filter(owner=owner, name=name).count()


def test_without_a_key_each_post_acts(api_client, customer):
    api_client.post(URL, {"name": "a"})
    api_client.post(URL, {"name": "a"})
    assert _created(customer, "a") == 2
    assert not IdempotencyKey.objects.exists()


def test_the_same_key_and_body_replays_the_first_response(api_client, customer):
    first = api_client.post(URL, {"name": "once"}, HTTP_IDEMPOTENCY_KEY="key-1")
    assert first.status_code == 201
    assert "Idempotent-Replayed" not in first
    # The same JSON with other spacing and key order is the same body.
    again = api_client.post(
        URL,
        data='{ "name" :  "once" }',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="key-1",
    )
    assert again.status_code == 201
    assert again.content == first.content
    assert again["Content-Type"] == first["Content-Type"]
    assert again["Location"] == first["Location"]
    assert again["Idempotent-Replayed"] == "true"
    assert _created(customer, "once") == 1
    row = IdempotencyKey.objects.get(owner=customer, key="key-1")
    assert row.completed_at is not None and row.response_status == 201


def test_the_same_key_with_another_body_is_422(api_client, customer):
    api_client.post(URL, {"name": "one"}, HTTP_IDEMPOTENCY_KEY="key-2")
    response = api_client.post(URL, {"name": "two"}, HTTP_IDEMPOTENCY_KEY="key-2")
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["type"].endswith("/idempotency-key-reused")
    assert _created(customer, "two") == 0


def test_the_same_key_on_another_path_is_422(api_client, customer):
    api_client.post(URL, {"name": "one"}, HTTP_IDEMPOTENCY_KEY="key-3")
    response = api_client.post("/api/v1/quote/", {"name": "one"}, HTTP_IDEMPOTENCY_KEY="key-3")
    assert response.status_code == 422


@pytest.mark.parametrize("key", ["", "x" * 256, "clé", "tab\there", "line\n"])
def test_a_bad_key_is_400_and_nothing_happens(api_client, customer, key):
    response = api_client.post(URL, {"name": "bad"}, HTTP_IDEMPOTENCY_KEY=key)
    assert response.status_code == 400
    body = response.json()
    assert body["errors"][0]["field"] == "Idempotency-Key"
    assert _created(customer, "bad") == 0
    assert not IdempotencyKey.objects.exists()


def test_a_4xx_answer_is_kept_and_replayed(api_client, customer):
    first = api_client.post(URL, {"name": ""}, HTTP_IDEMPOTENCY_KEY="key-4")
    assert first.status_code == 400
    again = api_client.post(URL, {"name": ""}, HTTP_IDEMPOTENCY_KEY="key-4")
    assert again.status_code == 400 and again["Idempotent-Replayed"] == "true"


def test_a_5xx_answer_releases_the_key(api_client, customer):
    TokenCreate.fail_next = [503]
    try:
        failed = api_client.post(URL, {"name": "retry"}, HTTP_IDEMPOTENCY_KEY="key-5")
    finally:
        TokenCreate.fail_next = []
    assert failed.status_code == 503
    assert not IdempotencyKey.objects.filter(key="key-5").exists()
    retried = api_client.post(URL, {"name": "retry"}, HTTP_IDEMPOTENCY_KEY="key-5")
    assert retried.status_code == 201 and "Idempotent-Replayed" not in retried
    assert _created(customer, "retry") == 1


def test_keys_are_per_owner(api_client, api_token, make_customer, customer):
    other = make_customer()
    theirs = TokenClient().for_token(api_token(other))
    api_client.post(URL, {"name": "mine"}, HTTP_IDEMPOTENCY_KEY="shared")
    response = theirs.post(URL, {"name": "theirs"}, HTTP_IDEMPOTENCY_KEY="shared")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response
    assert _created(customer, "mine") == 1 and _created(other, "theirs") == 1
    # Another token of the same owner shares the owner's keys.
    second = TokenClient().for_token(api_token(customer))
    replay = second.post(URL, {"name": "mine"}, HTTP_IDEMPOTENCY_KEY="shared")
    assert replay["Idempotent-Replayed"] == "true"


def test_a_claim_in_flight_is_409_with_retry_after(api_client, customer):
    IdempotencyKey.objects.create(
        owner=customer,
        key="busy",
        method="POST",
        path=URL,
        request_hash=_hash_of(api_client, {"name": "busy"}),
    )
    response = api_client.post(URL, {"name": "busy"}, HTTP_IDEMPOTENCY_KEY="busy")
    assert response.status_code == 409
    assert response["Retry-After"] == "1"
    assert response.json()["type"].endswith("/idempotency-key-in-use")
    assert _created(customer, "busy") == 0


def test_a_stale_claim_is_taken_over(api_client, customer, settings):
    old = timezone.now() - timedelta(seconds=settings.API_IDEMPOTENCY_CLAIM_SECONDS + 1)
    IdempotencyKey.objects.create(
        owner=customer,
        key="dead",
        method="POST",
        path=URL,
        claimed_at=old,
        request_hash=_hash_of(api_client, {"name": "dead"}),
    )
    response = api_client.post(URL, {"name": "dead"}, HTTP_IDEMPOTENCY_KEY="dead")
    assert response.status_code == 201
    assert _created(customer, "dead") == 1


def _hash_of(api_client, data):
    """The request hash the API computes for a POST of `data` to URL (a first request with a
    throwaway key records it)."""
    api_client.post(URL, data, HTTP_IDEMPOTENCY_KEY="probe")
    row = IdempotencyKey.objects.get(key="probe")
    ApiToken.objects.filter(name=data["name"]).delete()
    row.delete()
    return row.request_hash


def test_keys_older_than_24_hours_are_purged(api_client, customer):
    api_client.post(URL, {"name": "old"}, HTTP_IDEMPOTENCY_KEY="old")
    api_client.post(URL, {"name": "new"}, HTTP_IDEMPOTENCY_KEY="new")
    IdempotencyKey.objects.filter(key="old").update(
        created_at=timezone.now() - timedelta(hours=24, seconds=1)
    )
    assert purge_idempotency_keys.delay().get() == 1
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]
    assert idempotency_keys_purge(now=timezone.now() + timedelta(hours=25)) == 1
    # After the purge the key is free again: a new request acts.
    response = api_client.post(URL, {"name": "old"}, HTTP_IDEMPOTENCY_KEY="old")
    assert response.status_code == 201 and "Idempotent-Replayed" not in response


@pytest.mark.django_db(transaction=True)
def test_ten_parallel_requests_with_one_key_create_one_token(api_token, customer):
    raw = api_token(customer)
    TokenCreate.pause_seconds = 0.3
    try:

        def post(_index):
            client = TokenClient().for_token(raw)
            response = client.post(URL, {"name": "parallel"}, HTTP_IDEMPOTENCY_KEY="race")
            return response.status_code, response.get("Idempotent-Replayed"), response.content

        outcomes = run_concurrently(post, 10)
    finally:
        TokenCreate.pause_seconds = 0.0
    assert not [outcome for outcome in outcomes if isinstance(outcome, Exception)], outcomes
    assert ApiToken.objects.filter(owner=customer, name="parallel").count() == 1
    first = [o for o in outcomes if o[0] == 201 and o[1] is None]
    assert len(first) == 1
    for status, replayed, content in outcomes:
        assert status in (201, 409)
        if status == 201:
            assert content == first[0][2]
        if replayed:
            assert status == 201
    assert IdempotencyKey.objects.filter(owner=customer, key="race").count() == 1
    # Once the first finished, the same request replays it.
    replay = (
        TokenClient().for_token(raw).post(URL, {"name": "parallel"}, HTTP_IDEMPOTENCY_KEY="race")
    )
    assert replay["Idempotent-Replayed"] == "true" and replay.content == first[0][2]
    assert connection.vendor == "postgresql"
