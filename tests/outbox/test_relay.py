"""Web processes do not load Celery: a commit that enqueues a task notifies the relay process
(`manage.py outbox_relay`, LISTEN/NOTIFY), which publishes it (outbox/relay.py).

A fresh interpreter plays the web process (the WSGI application as gunicorn imports it) and pays
an order from the balance; it reports what it loaded. A real relay process, which would look on
its own only once an hour here, publishes the payment email's task at the web's notification.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.urls import reverse

from config.queues import queue_name
from outbox import relay
from outbox.messages import enqueue
from outbox.models import OutboxMessage
from rental.models import OrderEmailKind, OrderStatus
from tests.celery_worker import broker_url_for, database_url_of, purge_broker
from tests.outbox.test_messages import DEAD_BROKER, broker

ROOT = Path(__file__).resolve().parents[2]
WAIT_SECONDS = 60
CELERY_LIBRARIES = ("celery", "kombu", "redbeat", "billiard", "amqp", "vine")

# The web process: the WSGI application as gunicorn imports it, a customer who pays an order
# from the balance, /readyz and /healthz; then what of Celery it loaded.
WEB = r"""
import json, sys
from config.wsgi import application
from django.conf import settings
from django.test import Client
from accounts.models import User

spec = json.loads(sys.argv[1])
settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
client = Client()
client.force_login(User.objects.get(pk=spec["customer"]))
answers = {
    "pay": client.post(spec["pay"]).status_code,
    "readyz": client.get("/readyz").status_code,
    "healthz": client.get("/healthz").status_code,
}
libraries = set(spec["libraries"])
loaded = sorted({name.split(".")[0] for name in sys.modules} & libraries)
print(json.dumps({"answers": answers, "loaded": loaded}))
"""


def _env(**extra) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url_of(connection.settings_dict),
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def _wait_for(check, what: str, log: Path):
    deadline = time.monotonic() + WAIT_SECONDS
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {WAIT_SECONDS} s; relay's log:\n"
                                 f"{log.read_text()[-4000:]}")  # fmt: skip
        time.sleep(0.1)
    return value


@pytest.mark.django_db(transaction=True)
def test_a_web_process_commits_without_celery_and_the_relay_publishes_at_its_notification(
    customer, credit, catalogue, place_order, tmp_path
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    live = broker_url_for(settings.REDIS_URL)
    prefix = f"relay-{uuid.uuid4().hex[:8]}"
    emails_queue = queue_name("emails", prefix)
    log = tmp_path / "relay.log"
    relay_process = subprocess.Popen(
        [sys.executable, "manage.py", "outbox_relay"],
        cwd=ROOT,
        env=_env(
            TEST_CELERY_WORKER="1",  # publishes for real, to the test's own queues
            TEST_CELERY_WORKER_QUEUE=prefix,
            CELERY_BROKER_URL=live,
            OUTBOX_RELAY_WAIT_SECONDS="3600",  # only a notification wakes it after its start
        ),
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    client = redis.Redis.from_url(live)
    try:
        _wait_for(lambda: "Outbox relay started" in log.read_text(), "the relay's start", log)
        time.sleep(0.5)  # its first pass done: it is waiting for a notification
        spec = {
            "customer": customer.pk,
            "pay": reverse("payments:pay_with_balance", kwargs={"order_id": order.pk}),
            "libraries": CELERY_LIBRARIES,
        }
        web = subprocess.run(
            [sys.executable, "-c", WEB, json.dumps(spec)],
            cwd=ROOT, env=_env(CELERY_BROKER_URL=live), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        assert web.returncode == 0, web.stderr[-3000:]
        report = json.loads(web.stdout.strip().splitlines()[-1])

        assert report["answers"] == {"pay": 302, "readyz": 200, "healthz": 200}
        assert report["loaded"] == []  # no Celery, kombu or redbeat in the web process
        order.refresh_from_db()
        assert order.status in (OrderStatus.PAID, OrderStatus.PROVISIONING)
        message = OutboxMessage.objects.get(
            task="rental.tasks.order_email", args=[order.pk, OrderEmailKind.PAYMENT_RECEIVED]
        )
        _wait_for(
            lambda: OutboxMessage.objects.filter(pk=message.pk, published_at__isnull=False),
            "the payment email's task published by the relay",
            log,
        )
        assert client.llen(emails_queue) == 1
        body = json.loads(client.lindex(emails_queue, 0))
        assert body["headers"]["task"] == "rental.tasks.order_email"
    finally:
        relay_process.send_signal(signal.SIGTERM)
        try:
            relay_process.wait(timeout=20)
        finally:
            relay_process.kill()
        for key in client.scan_iter(f"{prefix}.*"):
            client.delete(key)
        client.close()
    assert relay_process.returncode == 0, log.read_text()[-3000:]
    assert "Outbox relay stopped:" in log.read_text()  # SIGTERM: a clean stop, with its tally


@pytest.mark.django_db(transaction=True)
def test_the_relay_waits_out_a_broker_outage_and_then_publishes_each_message_once():
    live = broker_url_for(settings.REDIS_URL)
    purge_broker(live)
    seen: list[relay.RelayStats] = []
    stop = threading.Event()

    def until(condition):
        def on_pass(stats):
            seen.append(relay.RelayStats(**vars(stats)))
            if condition(stats):
                stop.set()

        return on_pass

    with broker(DEAD_BROKER):
        waiting = enqueue("rental.tasks.order_email", 10**9, OrderEmailKind.READY)
        behind = enqueue("rental.tasks.order_email", 10**9 + 1, OrderEmailKind.READY)
        down = relay.run(
            should_stop=stop.is_set, wait_seconds=0.05, on_pass=until(lambda s: s.passes >= 2)
        )
    waiting.refresh_from_db()
    assert down.published == 0 and down.broker_failures >= 2
    assert waiting.published_at is None
    assert waiting.attempts >= 3  # after the commit, then at each of the relay's passes
    assert "Connection refused" in waiting.last_error or "Error 111" in waiting.last_error
    # What the relay did not try after the failure is not left claimed: another publisher with
    # a broker of its own (beat's relay) may take it at once.
    behind.refresh_from_db()
    assert behind.published_at is None and behind.claimed_until is None

    stop.clear()
    with broker(live):
        up = relay.run(
            should_stop=stop.is_set, wait_seconds=0.05, on_pass=until(lambda s: s.passes >= 3)
        )
    waiting.refresh_from_db()
    assert up.published == 2 and up.broker_failures == 0
    assert waiting.published_at is not None
    assert redis.Redis.from_url(live).llen("emails") == 2  # once each, in three passes
    purge_broker(live)
