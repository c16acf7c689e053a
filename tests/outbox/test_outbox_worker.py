"""The outbox survives a worker killed before delivery: a real Celery worker (Redis broker)
ends a rental, which writes `order.ended` to the outbox and fans it out to two endpoints;
the worker is SIGKILLed while the first POST is in flight. A restarted worker and the sweep
deliver the event exactly once per endpoint, with the same event id."""

import os
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from api.webhooks.models import DeliveryStatus, WebhookDelivery
from api.webhooks.services.endpoints import endpoint_create
from outbox.models import OutboxEvent
from payments.crypto.services.balance_payment import balance_pay_order
from tests.api.webhooks.receiver import start_receiver
from tests.celery_worker import WorkerHarness, broker_url_for, database_url_of, purge_broker
from tests.payments.worker.conftest import wait_until
from tests.states import order_to_active

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def harness(transactional_db, tmp_path):
    broker_url = broker_url_for(settings.REDIS_URL)
    purge_broker(broker_url)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_CELERY_WORKER": "1",
        "DATABASE_URL": database_url_of(connection.settings_dict),
        "CELERY_BROKER_URL": broker_url,
        "PYTHONUNBUFFERED": "1",
    }
    if settings.REDIS_URL:
        env["REDIS_URL"] = settings.REDIS_URL
    found = WorkerHarness(broker_url=broker_url, base_env=env, log_dir=tmp_path)
    try:
        yield found
    finally:
        found.close()
        names = [worker.application_name for worker in found.workers]
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = ANY(%s) AND pid <> pg_backend_pid()",
                [names],
            )
        print(found.logs())


@pytest.fixture
def receiver():
    found = start_receiver()
    found.hold = threading.Event()
    try:
        yield found
    finally:
        found.hold.set()
        found.server.shutdown()
        found.server.server_close()


def test_a_worker_killed_mid_delivery_loses_nothing_and_each_endpoint_gets_it_once(
    harness, receiver, customer, catalogue, place_order, credit
):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    balance_pay_order(order_id=order.pk, customer=customer)
    # Set up as an active rental whose end has passed (the tick in the worker ends it).
    now = timezone.now()
    order_to_active(order, starts_at=now - timedelta(days=3, minutes=1), ends_at=now)
    first = endpoint_create(owner=customer, url=receiver.url("/a"), events=["order.ended"])
    second = endpoint_create(owner=customer, url=receiver.url("/b"), events=["order.ended"])
    receiver.secrets.update({"/a": [first.secret], "/b": [second.secret]})
    worker = harness.start()

    harness.send("rental.tasks.rentals_tick")
    assert receiver.arrived.wait(timeout=60), harness.logs()[-4000:]
    worker.kill()  # the first POST is in flight, unanswered

    event = OutboxEvent.objects.get(event_type="order.ended")
    assert OutboxEvent.objects.filter(event_type="order.ended").count() == 1
    assert not WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists()
    receiver.hold.set()  # the receiver answers from now on
    harness.start()
    harness.send("api.webhooks.tasks.webhooks_sweep")  # the real clock: the other delivery
    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() >= 1,
        what="a delivery done by the restarted worker",
        harness=harness,
    )
    # The killed attempt's lease (deadline + slack) passes: here, written as passed.
    killed = WebhookDelivery.objects.exclude(status=DeliveryStatus.DELIVERED)
    assert killed.count() == 1 and killed.get().next_attempt_at > timezone.now()
    killed.update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    harness.send("api.webhooks.tasks.webhooks_sweep")  # the sweep sends it again, real clock
    wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).count() == 2,
        what="both deliveries done",
        harness=harness,
    )

    answered = {
        path: [r for r in receiver.received if r.path == path and r.status == 200]
        for path in ("/a", "/b")
    }
    ids = {r.headers["webhook-id"] for rs in answered.values() for r in rs}
    assert ids == {str(event.event_id)}
    assert all(r.signature_ok for rs in answered.values() for r in rs)
    # Each endpoint was answered for it once per attempt that reached it; the receiver
    # deduplicates by webhook-id, and the delivery log says delivered once per endpoint.
    assert WebhookDelivery.objects.filter(event=event).count() == 2
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
    for delivery in WebhookDelivery.objects.filter(event=event):
        assert delivery.attempt_log.filter(succeeded=True).count() == 1
