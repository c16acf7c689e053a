"""Fixtures for every API test (tests/api/...).

- `api_token(customer, scopes=("read", "order", "pay"), expires_at=None, name=...)` → the raw
  token string (created through api.tokens.token_create, as the account page does).
- `api_client`: a DRF APIClient authenticated as the `customer` fixture with all three
  scopes. `api_client.for_token(raw)` gives a client with another token,
  `api_client.anonymous()` one without any; `api_client.token` is its raw token.
"""

import pytest
from rest_framework.test import APIClient

from api.tokens import token_create

ALL_SCOPES = ("read", "order", "pay")


@pytest.fixture
def api_token(db):
    def make(owner, scopes=ALL_SCOPES, *, expires_at=None, name="test script") -> str:
        return token_create(owner=owner, name=name, scopes=scopes, expires_at=expires_at).raw

    return make


class TokenClient(APIClient):
    token: str | None = None

    def for_token(self, raw: str | None) -> "TokenClient":
        client = TokenClient()
        client.token = raw
        if raw is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client

    def anonymous(self) -> "TokenClient":
        return self.for_token(None)


@pytest.fixture
def api_client(api_token, customer) -> TokenClient:
    return TokenClient().for_token(api_token(customer))
