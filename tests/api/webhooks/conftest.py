from collections.abc import Iterator

import pytest

from api.webhooks.models import WebhookEndpoint
from api.webhooks.services.endpoints import endpoint_create
from outbox import events

from .receiver import Receiver, start_receiver

ALL_EVENTS = [
    events.ORDER_PAID,
    events.ORDER_ACTIVE,
    events.ORDER_ENDING,
    events.ORDER_ENDED,
    events.PAYMENT_DETECTED,
    events.PAYMENT_CONFIRMED,
    events.PAYMENT_REVIEW,
    events.BALANCE_CREDITED,
]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = start_receiver()
    try:
        yield found
    finally:
        if found.hold is not None:
            found.hold.set()
        found.server.shutdown()
        found.server.server_close()


@pytest.fixture
def endpoint_for(receiver):
    """endpoint_for(customer, path="/hook", events=ALL_EVENTS) → an endpoint at the receiver,
    created through the service; the receiver verifies its signatures."""

    def make(customer, path: str = "/hook", events=ALL_EVENTS) -> WebhookEndpoint:
        endpoint = endpoint_create(owner=customer, url=receiver.url(path), events=list(events))
        receiver.secrets[path] = [endpoint.secret]
        return endpoint

    return make
