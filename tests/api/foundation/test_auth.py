"""Bearer tokens: none, malformed, unknown, revoked, expired → 401 problem; last used."""

from datetime import timedelta

import pytest
from django.utils import timezone

from api.models import ApiToken
from api.tokens import token_revoke
from tests.api.contract import assert_matches_schema

URL = "/api/v1/catalogue/"


def _problem(response, status):
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert body["instance"] == URL
    return body


def test_no_token_is_401_with_a_bearer_challenge(api_client, catalogue):
    response = api_client.anonymous().get(URL)
    body = _problem(response, 401)
    assert body["type"] == "https://gpu-rental.invalid/problems/not-authenticated"
    assert "Authorization: Bearer" in body["detail"]
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert_matches_schema(response, "get", "/api/v1/catalogue/")


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer a b",
        "Bearer gr_short_x",
        "Bearer gr_0123abcd_" + "é" * 43,
        "Bearer gr_0123ABCD_" + "a" * 43,  # the prefix is lowercase hex
        "Bearer gr_0123abcd_" + "a" * 42,
    ],
)
def test_a_malformed_token_is_401(api_client, catalogue, header):
    client = api_client.anonymous()
    client.credentials(HTTP_AUTHORIZATION=header)
    body = _problem(client.get(URL), 401)
    assert "gr_<prefix>_<secret>" in body["detail"]


def test_an_unknown_token_is_401(api_client, catalogue):
    raw = api_client.token
    forged = raw[:-1] + ("A" if raw[-1] != "A" else "B")  # right prefix, wrong secret
    for token in (forged, "gr_00000000_" + "a" * 43):
        body = _problem(api_client.for_token(token).get(URL), 401)
        assert "not known" in body["detail"]


def test_a_revoked_token_is_401(api_client, customer, catalogue):
    assert api_client.get(URL).status_code == 200
    token = ApiToken.objects.get(owner=customer)
    token_revoke(owner=customer, token_id=token.pk)
    body = _problem(api_client.get(URL), 401)
    assert "revoked" in body["detail"]


def test_an_expired_token_is_401(api_token, api_client, customer, catalogue):
    raw = api_token(customer, expires_at=timezone.now() + timedelta(seconds=30))
    assert api_client.for_token(raw).get(URL).status_code == 200
    now = timezone.now()
    ApiToken.objects.filter(prefix=raw[3:11]).update(
        created_at=now - timedelta(hours=2), expires_at=now - timedelta(seconds=1)
    )
    body = _problem(api_client.for_token(raw).get(URL), 401)
    assert "expired" in body["detail"]


def test_another_scheme_is_not_authenticated(api_client, catalogue):
    client = api_client.anonymous()
    client.credentials(HTTP_AUTHORIZATION="Basic Z3JhY2U6cGFzcw==")
    body = _problem(client.get(URL), 401)
    assert body["type"].endswith("/not-authenticated")


def test_a_session_does_not_authenticate_the_api(client, customer, catalogue):
    client.force_login(customer)
    _problem(client.get(URL), 401)


def test_last_used_is_recorded_at_most_once_a_minute(api_client, customer, catalogue):
    token = ApiToken.objects.get(owner=customer)
    assert token.last_used_at is None
    api_client.get(URL)
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None and timezone.now() - first < timedelta(seconds=10)
    api_client.get(URL)
    token.refresh_from_db()
    assert token.last_used_at == first  # no write within the minute
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    api_client.get(URL)
    token.refresh_from_db()
    assert token.last_used_at > first


def test_the_token_acts_for_its_owner_only(api_token, make_customer, catalogue):
    from tests.api.conftest import TokenClient

    other = make_customer()
    raw = api_token(other)
    client = TokenClient().for_token(raw)
    assert client.get(URL).status_code == 200
    assert ApiToken.objects.get(owner=other).last_used_at is not None
