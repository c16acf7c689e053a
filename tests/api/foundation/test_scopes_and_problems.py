"""Scopes (403), and the problem+json shape of every kind of error."""

import pytest

from api.models import ApiToken
from tests.api.conftest import TokenClient
from tests.api.contract import assert_matches_schema

PROBLEM = "application/problem+json"


def _problem(response, status, slug):
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM
    body = response.json()
    assert body["status"] == status
    assert body["type"] == (
        f"https://gpu-rental.invalid/problems/{slug}" if slug else "about:blank"
    )
    assert body["title"] and body["detail"]
    return body


@pytest.mark.urls("tests.api.foundation.urls")
def test_a_missing_scope_is_403_and_changes_nothing(api_token, customer):
    client = TokenClient().for_token(api_token(customer, scopes=("read",)))
    before = ApiToken.objects.count()
    body = _problem(client.post("/api/test/tokens/new/", {"name": "x"}), 403, "forbidden")
    assert "“order”" in body["detail"]
    assert body["instance"] == "/api/test/tokens/new/"
    assert ApiToken.objects.count() == before


def test_read_scope_is_enough_for_the_catalogue(api_token, customer, catalogue):
    for scopes in (("read",), ("read", "pay")):
        assert (
            TokenClient()
            .for_token(api_token(customer, scopes))
            .get("/api/v1/catalogue/")
            .status_code
            == 200
        )
    for scopes in (("order",), ("pay",), ("order", "pay")):
        response = TokenClient().for_token(api_token(customer, scopes)).get("/api/v1/catalogue/")
        _problem(response, 403, "forbidden")
        assert_matches_schema(response, "get", "/api/v1/catalogue/")


def test_an_unknown_address_under_api_is_a_404_problem(api_client):
    for path in ("/api/v1/no-such-thing/", "/api/v2/", "/api/v1/catalogue"):
        body = _problem(api_client.get(path), 404, "not-found")
        assert body["instance"] == path


def test_an_unknown_page_elsewhere_is_still_the_site_page(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_a_method_the_endpoint_lacks_is_405(api_client, catalogue):
    response = api_client.delete("/api/v1/catalogue/")
    body = _problem(response, 405, "method-not-allowed")
    assert "DELETE" in body["detail"]
    assert "GET" in response["Allow"]


def test_malformed_json_is_400(api_client, catalogue):
    response = api_client.post(
        "/api/v1/quote/", data='{"gpu_model": ', content_type="application/json"
    )
    body = _problem(response, 400, "malformed")
    assert "JSON" in body["detail"]


def test_a_body_that_is_not_json_is_415(api_client, catalogue):
    response = api_client.post("/api/v1/quote/", data="lots=1", content_type="text/plain")
    _problem(response, 415, "unsupported-media-type")


@pytest.mark.urls("tests.api.foundation.urls")
def test_an_unexpected_error_is_a_500_problem(api_client):
    api_client.raise_request_exception = False
    response = api_client.post("/api/test/crash/", {}, HTTP_IDEMPOTENCY_KEY="crash-1")
    body = _problem(response, 500, "server-error")
    assert body["instance"] == "/api/test/crash/"
    from api.models import IdempotencyKey

    assert not IdempotencyKey.objects.exists()  # a 5xx releases the key


def test_problems_speak_italian(api_client, catalogue):
    response = api_client.anonymous().get("/api/v1/catalogue/", HTTP_ACCEPT_LANGUAGE="it")
    assert response.status_code == 401
    assert response.json()["title"] != "Not authenticated"
