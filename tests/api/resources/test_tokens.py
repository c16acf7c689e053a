"""API tokens from a script: list (never a secret), create (the secret once, never beyond the
calling token) and revoke (the calling token too), as the account's token page does."""

from datetime import UTC, datetime, time, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from api.models import ApiToken, IdempotencyKey
from api.tokens import TokenRefused, token_create, token_hash, token_revoke
from tests.api.contract import assert_matches_schema

from .conftest import ApiClient, field_errors, problem_of

TOKENS = "/api/v1/tokens/"
MANAGER = ("read", "order", "tokens")


def _end_of(day) -> datetime:
    return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)


@pytest.fixture
def manager(client_for, customer):
    """A script whose token manages tokens: read, order and tokens (not pay)."""
    return client_for(customer, MANAGER)


def test_a_token_is_created_with_its_secret_once_and_listed_without_it(manager, customer):
    day = timezone.now().date() + timedelta(days=30)

    response = manager.post(
        TOKENS, {"name": "CI pipeline", "scopes": ["read"], "expires_on": day.isoformat()}
    )

    assert response.status_code == 201, response.content
    body = assert_matches_schema(response, "post", TOKENS)
    token = ApiToken.objects.get(pk=body["id"])
    assert token.owner == customer and token.name == "CI pipeline" and token.scopes == "read"
    assert token.expires_at == _end_of(day)
    assert token.token_hash == token_hash(body["token"])
    assert body["prefix"] == f"gr_{token.prefix}_…" and body["status"] == "active"
    assert response["Location"] == f"{TOKENS}{token.pk}/"
    assert "no-store" in response["Cache-Control"]  # the secret is kept by no cache
    # The new token works, within its scope.
    new = ApiClient(body["token"])
    assert new.get("/api/v1/balance/").status_code == 200
    assert new.post("/api/v1/top-ups/", {}).status_code == 403

    listed = manager.get(TOKENS)
    assert listed.status_code == 200
    assert_matches_schema(listed, "get", TOKENS)
    rows = listed.json()["results"]
    assert [row["name"] for row in rows] == ["CI pipeline", "script"]
    assert all("token" not in row for row in rows)
    assert body["token"] not in listed.content.decode()
    detail = manager.get(f"{TOKENS}{token.pk}/")
    assert_matches_schema(detail, "get", "/api/v1/tokens/{token_id}/")
    assert detail.json() == rows[0]


@pytest.mark.parametrize(
    ("scopes", "named"),
    [(["pay"], "pay"), (["read", "pay"], "pay"), (["read", "order", "pay", "tokens"], "pay")],
)
def test_a_token_cannot_grant_a_scope_it_lacks(manager, customer, scopes, named):
    before = ApiToken.objects.count()

    response = manager.post(TOKENS, {"name": "wider", "scopes": scopes})

    assert response.status_code == 403
    assert_matches_schema(response, "post", TOKENS)
    problem = problem_of(response)
    assert problem["type"].endswith("/token-escalation")
    assert problem["detail"] == (
        "This token cannot create a token with scopes it does not have itself: " + named + "."
    )
    assert ApiToken.objects.count() == before


def test_a_token_without_the_tokens_scope_cannot_manage_tokens(api, customer):
    """The fixture's token has read, order and pay: nothing of tokens, even to list them."""
    before = ApiToken.objects.count()
    for response in (
        api.get(TOKENS),
        api.post(TOKENS, {"name": "mine", "scopes": ["read"]}),
        api.delete(f"{TOKENS}{ApiToken.objects.get().pk}/"),
    ):
        assert response.status_code == 403
        assert "“tokens” scope" in problem_of(response)["detail"]
    assert ApiToken.objects.count() == before
    assert ApiToken.objects.get().revoked_at is None


def test_an_expiring_token_cannot_mint_one_that_outlives_it(client_for, customer):
    today = timezone.now().date()
    script = client_for(customer, MANAGER, expires_at=_end_of(today + timedelta(days=10)))
    before = ApiToken.objects.count()

    forever = script.post(TOKENS, {"name": "forever", "scopes": ["read"]})
    later = script.post(
        TOKENS,
        {"name": "later", "scopes": ["read"], "expires_on": str(today + timedelta(days=11))},
    )
    null = script.post(TOKENS, {"name": "null", "scopes": ["read"], "expires_on": None})

    for response in (forever, later, null):
        assert response.status_code == 403, response.content
        assert problem_of(response)["type"].endswith("/token-escalation")
        assert f"no later than {today + timedelta(days=10)}" in problem_of(response)["detail"]
    assert ApiToken.objects.count() == before
    same_day = script.post(
        TOKENS,
        {"name": "same", "scopes": ["read"], "expires_on": str(today + timedelta(days=10))},
    )
    assert same_day.status_code == 201
    assert ApiToken.objects.get(name="same").expires_at == _end_of(today + timedelta(days=10))


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"scopes": ["read"]}, "name", "Give the token a name."),
        ({"name": "x" * 101, "scopes": ["read"]}, "name", "Keep the name to 100 characters"),
        ({"name": "x"}, "scopes", "Choose at least one scope."),
        ({"name": "x", "scopes": []}, "scopes", "Choose at least one scope."),
        ({"name": "x", "scopes": ["admin"]}, "scopes", "Choose scopes from the list"),
        ({"name": "x", "scopes": "read"}, "scopes", "Send this field as a JSON list of strings."),
        ({"name": "x", "scopes": [1]}, "scopes", "Send this field as a JSON list of strings."),
        ({"name": 5, "scopes": ["read"]}, "name", "Send this field as a JSON string."),
        (
            {"name": "x", "scopes": ["read"], "expires_on": "２０３０-01-01"},
            "expires_on",
            "Enter a date as YYYY-MM-DD",
        ),
        (
            {"name": "x", "scopes": ["read"], "expires_on": "٢٠٣٠-٠١-٠١"},
            "expires_on",
            "Enter a date as YYYY-MM-DD",
        ),
        (
            {"name": "x", "scopes": ["read"], "expires_on": "2000-01-01"},
            "expires_on",
            "Choose today or a later day.",
        ),
        (
            {"name": "x", "scopes": ["read"], "expires_on": "2999-01-01"},
            "expires_on",
            "Choose a day within 366 days.",
        ),
        ({"name": "x", "scopes": ["read"], "token": "gr_x"}, "token", "not part of this"),
        ({"name": "x", "scopes": ["read"], "id": 1}, "id", "not part of this request"),
    ],
)
def test_a_bad_token_request_is_a_400_and_creates_nothing(manager, body, field, message):
    before = ApiToken.objects.count()

    response = manager.post(TOKENS, body)

    assert response.status_code == 400
    assert_matches_schema(response, "post", TOKENS)
    assert message in field_errors(response)[field][0]
    assert ApiToken.objects.count() == before


def test_a_replayed_create_makes_one_token_and_never_stores_its_secret(manager, customer):
    headers = {"HTTP_IDEMPOTENCY_KEY": "create-ci-token"}
    body = {"name": "CI", "scopes": ["read"]}

    first = manager.post(TOKENS, body, headers=headers)
    again = manager.post(TOKENS, body, headers=headers)

    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true"
    secret = first.json()["token"]
    assert again.json() == {**first.json(), "token": None}
    assert_matches_schema(again, "post", TOKENS)
    assert ApiToken.objects.filter(name="CI").count() == 1
    stored = bytes(IdempotencyKey.objects.get(key="create-ci-token").response_body)
    assert secret.encode() not in stored


def test_revoking_a_token_stops_it_and_revoking_again_changes_nothing(manager, customer):
    created = manager.post(TOKENS, {"name": "laptop", "scopes": ["read"]}).json()
    laptop = ApiClient(created["token"])
    assert laptop.get("/api/v1/balance/").status_code == 200

    response = manager.delete(f"{TOKENS}{created['id']}/")

    assert response.status_code == 204 and response.content == b""
    revoked_at = ApiToken.objects.get(pk=created["id"]).revoked_at
    assert revoked_at is not None
    refused = laptop.get("/api/v1/balance/")
    assert refused.status_code == 401
    assert "revoked" in problem_of(refused)["detail"]
    assert manager.delete(f"{TOKENS}{created['id']}/").status_code == 204
    assert ApiToken.objects.get(pk=created["id"]).revoked_at == revoked_at
    listed = manager.get(f"{TOKENS}{created['id']}/").json()
    assert listed["status"] == "revoked"


def test_a_token_revokes_itself_and_its_next_call_is_401(manager, customer):
    own = ApiToken.objects.get(owner=customer)

    response = manager.delete(f"{TOKENS}{own.pk}/")

    assert response.status_code == 204
    following = manager.get(TOKENS)
    assert following.status_code == 401
    assert problem_of(following)["detail"] == (
        "This API token was revoked. Create a new one on your account page."
    )


def test_a_revoked_token_cannot_mint_a_token_even_in_the_same_instant(manager, customer):
    """The calling token is locked and checked while the new one is written."""
    own = ApiToken.objects.get(owner=customer)
    token_revoke(owner=customer, token_id=own.pk)  # own still reads as live in memory
    with pytest.raises(TokenRefused) as refused:
        token_create(owner=customer, name="late", scopes=["read"], granted_by=own)
    assert refused.value.reason == TokenRefused.REVOKED
    assert not ApiToken.objects.filter(name="late").exists()


def test_a_token_that_expired_meanwhile_is_refused_as_expired(manager, customer):
    own = ApiToken.objects.get(owner=customer)
    now = timezone.now()
    ApiToken.objects.filter(pk=own.pk).update(
        created_at=now - timedelta(hours=1), expires_at=now - timedelta(seconds=1)
    )
    with pytest.raises(TokenRefused) as refused:
        token_create(owner=customer, name="late", scopes=["read"], granted_by=own)
    assert refused.value.reason == TokenRefused.EXPIRED
    assert not ApiToken.objects.filter(name="late").exists()


@pytest.mark.parametrize("path", ["{other}/", "abc/", "%D9%A5/", "99999999999999999999999/", "0/"])
def test_another_customers_or_a_tampered_token_id_is_404(manager, client_for, other_customer, path):
    other = ApiToken.objects.create(
        owner=other_customer, name="theirs", prefix="0badc0de", token_hash="0" * 64, scopes="read"
    )
    address = TOKENS + path.format(other=other.pk)

    for response in (manager.get(address), manager.delete(address)):
        assert response.status_code == 404
        assert problem_of(response)["status"] == 404
    other.refresh_from_db()
    assert other.revoked_at is None


def test_the_page_and_the_api_create_and_revoke_the_same_way(manager, customer, customer_client):
    """The page's token and the API's: same service, same stored shape, same revocation."""
    day = timezone.now().date() + timedelta(days=5)
    page = customer_client.post(
        reverse("api_tokens:create"),
        {"name": "page", "scopes": ["read", "tokens"], "expires_on": day.isoformat()},
    )
    assert page.status_code == 200
    api = manager.post(
        TOKENS, {"name": "api", "scopes": ["tokens", "read"], "expires_on": day.isoformat()}
    )
    assert api.status_code == 201
    from_page, from_api = ApiToken.objects.get(name="page"), ApiToken.objects.get(name="api")
    assert (from_page.scopes, from_page.expires_at) == (from_api.scopes, from_api.expires_at)
    assert from_api.scopes == "read,tokens"

    customer_client.post(reverse("api_tokens:revoke", args=[from_api.pk]))
    assert manager.get(f"{TOKENS}{from_api.pk}/").json()["status"] == "revoked"
