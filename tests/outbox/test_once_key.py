"""An event with a once key is written once per key; events without one are never refused
(the key is unique where set: outbox_once_key, a partial unique index)."""

import pytest

from accounts.models import User
from outbox.models import OutboxEvent
from outbox.services import outbox_emit


@pytest.fixture
def account(db):
    return User.objects.create_user("once@example.com", "x" * 12, first_name="O", last_name="K")


def test_a_key_is_written_once_and_events_without_a_key_are_all_written(account):
    first = outbox_emit(
        event_type="order.ending", account=account, payload={"n": 1}, once_key="order-7-ending"
    )
    again = outbox_emit(
        event_type="order.ending", account=account, payload={"n": 2}, once_key="order-7-ending"
    )
    plain = [outbox_emit(event_type="payment.detected", account=account, payload={}) for _ in "ab"]

    assert first is not None and again is None
    assert all(event is not None for event in plain)
    assert OutboxEvent.objects.filter(once_key="order-7-ending").count() == 1
    assert OutboxEvent.objects.get(once_key="order-7-ending").payload == {"n": 1}
    assert OutboxEvent.objects.filter(once_key__isnull=True).count() == 2
