"""One attempt has a wall-clock deadline whatever the receiver does (a receiver dribbling its
answer a byte at a time, an address whose connect times out), its lease outlives it, a
redelivery is refused while it runs, and an endpoint deleted meanwhile ends it quietly.
Real sockets, real PostgreSQL (committed rows: the attempt runs in a thread)."""

import threading
import time

import pytest
from django.db import connection
from django.utils import timezone

from api.webhooks import exceptions
from api.webhooks.guard import Target
from api.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from api.webhooks.services.delivery import delivery_attempt
from api.webhooks.services.endpoints import delivery_redeliver, endpoint_create, endpoint_delete
from api.webhooks.services.http import post
from api.webhooks.services.sweep import webhooks_sweep
from outbox.models import OutboxEvent

from .receiver import clogged_listener, start_dribbler

pytestmark = pytest.mark.django_db(transaction=True)

REDELIVER = "/api/v1/webhooks/deliveries/{delivery_id}/redeliver/"


def _due_delivery(endpoint: WebhookEndpoint) -> WebhookDelivery:
    """A delivery due now, as the fan-out writes it (its task not run: the test runs it)."""
    event = OutboxEvent.objects.create(
        event_type="balance.credited",
        account=endpoint.owner,
        payload={"credit": {"amount_usd": "1.00"}},
        dispatched_at=timezone.now(),
    )
    return WebhookDelivery.objects.create(
        endpoint=endpoint, event=event, next_attempt_at=timezone.now()
    )


def _in_thread(delivery_id: int) -> tuple[threading.Thread, dict]:
    outcome: dict = {}

    def run():
        started = time.monotonic()
        try:
            outcome["status"] = delivery_attempt(delivery_id=delivery_id)
        except Exception as exc:  # what the task would crash with
            outcome["error"] = exc
        finally:
            outcome["seconds"] = time.monotonic() - started
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


@pytest.fixture
def dribbler():
    found = start_dribbler(every=0.3)  # ~420 bytes: two minutes for the whole answer
    yield found
    found.close()


def test_a_receiver_dribbling_its_answer_is_cut_at_the_deadline(customer, dribbler, settings):
    settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS = 2.0
    endpoint = endpoint_create(owner=customer, url=dribbler.url(), events=["balance.credited"])
    delivery = _due_delivery(endpoint)

    thread, outcome = _in_thread(delivery.pk)
    assert dribbler.arrived.wait(timeout=5)
    thread.join(timeout=4)

    assert not thread.is_alive(), "the attempt outlived its deadline"
    assert "error" not in outcome, outcome
    assert outcome["seconds"] < 3.0
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.response_code is None
    assert "2 s" in delivery.error
    (attempt,) = delivery.attempt_log.all()
    assert attempt.succeeded is False and 1900 <= attempt.duration_ms < 3000
    assert delivery.next_attempt_at > timezone.now()  # the retry's schedule, not now


def test_redelivery_is_refused_while_an_attempt_runs_and_its_lease_outlives_it(
    customer, receiver, endpoint_for, api_client, settings
):
    endpoint = endpoint_for(customer, events=["balance.credited"])
    delivery = _due_delivery(endpoint)
    receiver.hold = threading.Event()
    safety = threading.Timer(4, receiver.hold.set)  # never hang the suite
    safety.start()
    try:
        thread, outcome = _in_thread(delivery.pk)
        assert receiver.arrived.wait(timeout=5)

        running = WebhookDelivery.objects.get(pk=delivery.pk)
        lease = (running.next_attempt_at - running.last_attempt_at).total_seconds()
        assert lease >= settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS + 10
        response = api_client.post(REDELIVER.format(delivery_id=delivery.pk))
        assert response.status_code == 409, response.content
        assert response["Content-Type"] == "application/problem+json"
        assert "in progress" in response.json()["detail"]
        with pytest.raises(exceptions.AttemptInFlight):
            delivery_redeliver(delivery_id=delivery.pk, owner=customer)
        assert webhooks_sweep().queued == []  # nor does the sweep send it again
        receiver.hold.set()
        thread.join(timeout=5)
    finally:
        safety.cancel()
        receiver.hold.set()

    assert outcome.get("status") == DeliveryStatus.DELIVERED, outcome
    assert len(receiver.received) == 1
    # Once the attempt is recorded, a redelivery is accepted again.
    delivery_redeliver(delivery_id=delivery.pk, owner=customer)
    assert len(receiver.received) == 2


def test_a_connect_timeout_tries_the_next_checked_address(receiver, settings):
    settings.WEBHOOK_CONNECT_TIMEOUT_SECONDS = 0.5
    held = clogged_listener("127.0.0.2", receiver.port)
    try:
        target = Target(
            scheme="http",
            host="hooks.example.com",
            port=receiver.port,
            path="/hook",
            addresses=("127.0.0.2", "127.0.0.1"),
        )
        started = time.monotonic()
        result = post(target, b"{}", {"Content-Type": "application/json"})
    finally:
        for sock in held:
            sock.close()

    assert (result.response_code, result.error) == (200, "")
    assert time.monotonic() - started < 2
    (request,) = receiver.received
    assert request.headers["Host"] == f"hooks.example.com:{receiver.port}"


def test_an_endpoint_deleted_during_an_attempt_ends_it_without_a_crash(
    customer, receiver, endpoint_for
):
    endpoint = endpoint_for(customer, events=["balance.credited"])
    delivery = _due_delivery(endpoint)
    receiver.hold = threading.Event()
    safety = threading.Timer(5, receiver.hold.set)
    safety.start()
    try:
        thread, outcome = _in_thread(delivery.pk)
        assert receiver.arrived.wait(timeout=5)
        endpoint_delete(endpoint_id=endpoint.pk, owner=customer)
        receiver.hold.set()
        thread.join(timeout=5)
    finally:
        safety.cancel()
        receiver.hold.set()

    assert not thread.is_alive()
    assert "error" not in outcome, outcome
    assert outcome["status"] is None
    assert not WebhookDelivery.objects.filter(pk=delivery.pk).exists()
