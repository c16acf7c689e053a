"""A queue per kind of work (config/queues.py), with real workers on Redis: webhook receivers
that answer a byte a second hold the webhook workers, and a payment is confirmed meanwhile by
the payments' worker, in seconds, while webhook deliveries are still waiting their turn.

Seen with one queue for everything: confirmations waited up to 396 s behind slow receivers."""

import time

import pytest

from api.webhooks.models import WebhookDelivery
from api.webhooks.services.endpoints import endpoint_create
from outbox.models import OutboxEvent
from payments.models import CryptoPayment, PaymentStatus
from tests.api.webhooks.receiver import start_dribbler

from .conftest import pay_and_confirm_on_chain, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ENDPOINTS = 6
WEBHOOK_THREADS = 2


def status_of(payment: CryptoPayment) -> str:
    return CryptoPayment.objects.values_list("status", flat=True).get(pk=payment.pk)


@pytest.fixture
def dribbler():
    found = start_dribbler(every=1.0)  # each attempt runs to its 15 s deadline
    try:
        yield found
    finally:
        found.close()


def test_slow_webhook_receivers_do_not_delay_a_payment_confirmation(
    chain, top_up, customer, workers, dribbler
):
    for number in range(ENDPOINTS):
        endpoint_create(owner=customer, url=dribbler.url(f"/{number}"), events=["order.ended"])
    event = OutboxEvent.objects.create(
        event_type="order.ended", account=customer, payload={"order": "ORD-1"}
    )
    workers.start(kinds=["payments"])
    workers.start(kinds=["webhooks", "celery"], pool="threads", concurrency=WEBHOOK_THREADS)

    # The event is fanned out by the worker and its deliveries queued on the webhooks' queue.
    workers.send("outbox.tasks.outbox_dispatch", [event.pk], routed=True)
    assert dribbler.arrived.wait(timeout=60), workers.logs()[-4000:]
    wait_until(
        lambda: WebhookDelivery.objects.filter(attempts__gt=0).count() == WEBHOOK_THREADS,
        what="every webhook thread held by a slow receiver",
        harness=workers,
    )

    pay_and_confirm_on_chain(chain, top_up)
    started = time.monotonic()
    workers.send("payments.tasks.scan_network", ["local"], routed=True)
    wait_until(
        lambda: status_of(top_up) == PaymentStatus.CONFIRMED,
        what="the top-up confirmed by the payments' worker",
        harness=workers,
        timeout=30,
    )
    took = time.monotonic() - started

    # Confirmed while the webhook workers were still on their first receivers: the other
    # deliveries had not been tried yet.
    waiting = WebhookDelivery.objects.filter(event=event, attempts=0).count()
    assert waiting == ENDPOINTS - WEBHOOK_THREADS, workers.logs()[-4000:]
    assert took < 15, f"confirmation took {took:.1f} s behind slow webhooks"
