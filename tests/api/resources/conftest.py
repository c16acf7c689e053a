"""Clients of the API as a script sees it: a Bearer token of the customer's own (made by the
token service, as the account page makes one), JSON in and out. Crypto payments use the local
network enabled by settings alone, as the payment pages' tests do (its node is never called)."""

import json

import pytest
from django.test import Client

from api.tokens import token_create
from tests.payments.crypto_ui.conftest import local_network  # noqa: F401 - a fixture

from .rentals import active_order  # noqa: F401 - a fixture

ALL_SCOPES = ("read", "order", "pay")
# A valid ed25519 public key (from the pilot tests), and another one.
SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 grace@laptop"
)


class ApiClient:
    """JSON requests with a Bearer token (or none)."""

    def __init__(self, raw_token: str | None):
        self.client = Client()
        self.headers = {"HTTP_AUTHORIZATION": f"Bearer {raw_token}"} if raw_token else {}

    def _send(self, method, path, body=None, headers=None, raw=None):
        extra = {**self.headers, **(headers or {})}
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        send = getattr(self.client, method)
        if method == "get":
            return send(path, **extra)
        # No body at all, as `curl -X POST` sends it, when `body` is None.
        return send(path, data=data or "", content_type="application/json", **extra)

    def get(self, path, **kwargs):
        return self._send("get", path, **kwargs)

    def post(self, path, body=None, **kwargs):
        return self._send("post", path, body, **kwargs)

    def put(self, path, body=None, **kwargs):
        return self._send("put", path, body, **kwargs)

    def patch(self, path, body=None, **kwargs):
        return self._send("patch", path, body, **kwargs)

    def delete(self, path, **kwargs):
        return self._send("delete", path, **kwargs)


@pytest.fixture
def client_for(db):
    """client_for(user, scopes=("read", "order", "pay")): an API client with a new token."""

    def make(user, scopes=ALL_SCOPES, expires_at=None) -> ApiClient:
        created = token_create(
            owner=user, name="script", scopes=list(scopes), expires_at=expires_at
        )
        return ApiClient(created.raw)

    return make


@pytest.fixture
def api(client_for, customer) -> ApiClient:
    """The customer's client with every scope."""
    return client_for(customer)


@pytest.fixture
def anonymous() -> ApiClient:
    return ApiClient(None)


@pytest.fixture
def other_customer(make_customer):
    return make_customer(email="mallory@example.com", first_name="Mal", last_name="Lory")


@pytest.fixture
def order(customer, catalogue, place_order):
    """Two H100 lots for 7 days: 893.76 USD."""
    return place_order(customer, catalogue["h100"], lots=2, duration_days=7)


def problem_of(response) -> dict:
    assert response["Content-Type"].startswith("application/problem+json"), response.content
    return response.json()


def field_errors(response) -> dict[str, list[str]]:
    body = problem_of(response)
    assert body["status"] == 400
    errors: dict[str, list[str]] = {}
    for error in body["errors"]:
        errors.setdefault(error["field"], []).append(error["message"])
    return errors
