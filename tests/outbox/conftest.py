"""The webhooks' real local receiver and endpoint fixtures, for the outbox's tests."""

from tests.api.webhooks.conftest import endpoint_for, receiver  # noqa: F401
