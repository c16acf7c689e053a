"""Webhooks against a real local HTTP receiver: signed, redelivered with backoff after a 500,
given up after the schedule, the endpoint then disabled with an email and a banner; manual
redelivery. The clock of the retries is driven by calling the attempt with `now=` (the queued
task itself always runs on the real clock and signs with the real time)."""

import time
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.urls import reverse
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from api.webhooks import signing, tasks
from api.webhooks.models import DeliveryStatus, DisabledReason, WebhookDelivery
from api.webhooks.services.delivery import delivery_attempt
from api.webhooks.services.endpoints import delivery_redeliver, endpoint_set_enabled
from api.webhooks.services.sweep import webhooks_sweep
from outbox import events
from outbox.models import OutboxEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def credited(credit, django_capture_on_commit_callbacks):
    """credited(customer, "25.00") credits the balance and runs what follows the commit
    (dispatch, first delivery attempt) as the worker would."""

    def give(customer, amount: str = "25.00"):
        with django_capture_on_commit_callbacks(execute=True):
            credit(customer, amount)
        return OutboxEvent.objects.filter(
            account=customer, event_type=events.BALANCE_CREDITED
        ).latest("pk")

    return give


def test_each_request_is_signed_with_the_endpoint_secret(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])

    event = credited(customer, "25.00")

    (request,) = receiver.received
    # Verified by the standardwebhooks library itself, with the secret as the API showed it.
    assert request.signature_ok is True
    assert Webhook(endpoint.secret).verify(request.body, dict(request.headers.items())) == (
        request.event
    )
    assert request.headers["webhook-id"] == str(event.event_id)
    assert request.headers["webhook-signature"].startswith("v1,")
    assert request.headers["Content-Type"] == "application/json"
    body = request.event
    assert set(body) == {"type", "timestamp", "data"}
    assert body["type"] == "balance.credited"
    assert body["timestamp"] == event.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    assert body["data"]["credit"]["amount_usd"] == "25.00"
    assert body["data"]["credit"]["kind"] == "adjustment"
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert (delivery.status, delivery.response_code, delivery.attempts) == ("delivered", 200, 1)
    assert delivery.attempt_log.get().succeeded is True


def _headers(request, **changed) -> dict[str, str]:
    headers = dict(request.headers.items())
    headers.update({name.replace("_", "-"): value for name, value in changed.items()})
    return headers


def test_a_tampered_id_body_timestamp_or_another_secret_fails_the_library(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    credited(customer)
    (request,) = receiver.received
    webhook = Webhook(endpoint.secret)
    assert webhook.verify(request.body, _headers(request))["type"] == "balance.credited"

    def refused(body, headers, secret=endpoint.secret):
        with pytest.raises(WebhookVerificationError):
            Webhook(secret).verify(body, headers)
        return True

    # The id is signed: the captured delivery cannot be replayed under another id.
    assert refused(request.body, _headers(request, webhook_id=str(uuid.uuid4())))
    assert refused(request.body.replace(b"25.00", b"99.00"), _headers(request))
    sent_at = int(request.headers["webhook-timestamp"])
    assert refused(request.body, _headers(request, webhook_timestamp=str(sent_at + 1)))
    assert refused(request.body, _headers(request), secret=signing.new_secret())
    # Signed right, but more than five minutes old: a replay.
    old = datetime.fromtimestamp(sent_at - 301, tz=UTC)
    resigned = webhook.sign(request.headers["webhook-id"], old, request.body.decode())
    assert refused(
        request.body,
        _headers(request, webhook_timestamp=str(sent_at - 301), webhook_signature=resigned),
    )


def test_an_event_goes_only_to_endpoints_subscribed_to_its_type(
    customer, make_customer, receiver, endpoint_for, credited
):
    endpoint_for(customer, "/orders-only", events=[events.ORDER_PAID])
    endpoint_for(customer, "/credits", events=[events.BALANCE_CREDITED])
    other = make_customer()
    endpoint_for(other, "/other-customer", events=[events.BALANCE_CREDITED])

    credited(customer)

    assert [r.path for r in receiver.received] == ["/credits"]


def test_a_500_is_retried_after_10_seconds_with_the_same_event_id(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500]

    event = credited(customer)

    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.response_code == 500
    first = delivery.last_attempt_at
    assert timedelta(seconds=10) <= delivery.next_attempt_at - first <= timedelta(seconds=12)
    # Not yet due: the sweep sends nothing.
    assert webhooks_sweep(now=first + timedelta(seconds=5)).queued == []
    assert len(receiver.received) == 1

    later = delivery.next_attempt_at + timedelta(seconds=1)
    report = webhooks_sweep(now=later)
    assert report.queued == [delivery.pk]
    delivery_attempt(delivery_id=delivery.pk, now=later)

    assert [r.status for r in receiver.received] == [500, 200]
    assert {r.headers["webhook-id"] for r in receiver.received} == {str(event.event_id)}
    assert receiver.received[0].body == receiver.received[1].body
    assert all(r.signature_ok for r in receiver.received)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.next_attempt_at) == ("delivered", 2, None)
    assert [(a.number, a.response_code, a.succeeded) for a in delivery.attempt_log.all()] == [
        (1, 500, False),
        (2, 200, True),
    ]


@pytest.fixture
def drive_until_final(django_capture_on_commit_callbacks):
    def drive(delivery: WebhookDelivery) -> list[int]:
        with django_capture_on_commit_callbacks(execute=True):
            return _drive(delivery)

    return drive


def _drive(delivery: WebhookDelivery, limit: int = 20) -> list[int]:
    """Sweep at each next attempt's time until the delivery is final; the gaps in seconds."""
    gaps = []
    for _round in range(limit):
        delivery.refresh_from_db()
        if delivery.next_attempt_at is None:
            return gaps
        gap = round((delivery.next_attempt_at - delivery.last_attempt_at).total_seconds())
        gaps.append(gap)
        later = delivery.next_attempt_at + timedelta(milliseconds=1)
        swept = webhooks_sweep(now=later).queued
        if gap > settings.CELERY_MAX_COUNTDOWN_SECONDS:
            # A retry later than the broker may hold a message is the sweep's to queue.
            assert delivery.pk in swept
        delivery.refresh_from_db()
        assert delivery.queued_at is not None  # a message waits for it, either way
        delivery_attempt(delivery_id=delivery.pk, now=later)
    raise AssertionError("the delivery never became final")


def test_after_the_whole_schedule_it_gives_up_and_the_endpoint_is_disabled_with_an_email(
    customer, client, receiver, endpoint_for, credited, settings, drive_until_final
):
    settings.WEBHOOK_DISABLE_AFTER_GAVE_UP = 1
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [503] * 50

    credited(customer)
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    gaps = drive_until_final(delivery)

    assert gaps == [10, 60, 600, 600, 600, 600, 600, 600]
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.GAVE_UP
    assert delivery.attempts == 9 and len(receiver.received) == 9
    endpoint.refresh_from_db()
    assert endpoint.enabled is False
    assert endpoint.disabled_reason == DisabledReason.FAILURES
    (email,) = mail.outbox
    assert email.to == [customer.email]
    assert "disabled" in email.subject
    assert endpoint.url in email.body
    # The page says so.
    client.force_login(customer)
    page = client.get(reverse("webhooks:endpoint_detail", kwargs={"endpoint_id": endpoint.pk}))
    assert 'data-field="disabled-banner"' in page.content.decode()
    # Nothing more goes to it meanwhile: a later event waits, paused, for it to be enabled.
    later_event = credited(customer, "5.00")
    assert len(receiver.received) == 9
    paused = WebhookDelivery.objects.get(endpoint=endpoint, event=later_event)
    assert (paused.status, paused.next_attempt_at, paused.attempts) == ("pending", None, 0)


def test_the_disable_email_is_in_the_owners_language(
    make_customer, receiver, endpoint_for, credited, settings, drive_until_final
):
    settings.WEBHOOK_DISABLE_AFTER_GAVE_UP = 1
    customer = make_customer(language="it")
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500] * 50
    credited(customer)
    drive_until_final(WebhookDelivery.objects.get(endpoint=endpoint))
    (email,) = mail.outbox
    assert "disabilitato" in email.subject.lower()


def test_three_events_given_up_in_a_row_disable_the_endpoint_by_default(
    customer, receiver, endpoint_for, credited, drive_until_final
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500] * 100
    for number in range(3):
        credited(customer, "1.00")
        endpoint.refresh_from_db()
        assert endpoint.enabled is True, f"disabled after {number} events"
        drive_until_final(WebhookDelivery.objects.filter(endpoint=endpoint).latest("pk"))
    endpoint.refresh_from_db()
    assert (endpoint.enabled, endpoint.consecutive_failures) == (False, 3)
    assert len(mail.outbox) == 1


def test_a_delivered_event_resets_the_failure_count(
    customer, receiver, endpoint_for, credited, drive_until_final
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500] * 9
    credited(customer, "1.00")
    drive_until_final(WebhookDelivery.objects.get(endpoint=endpoint))
    endpoint.refresh_from_db()
    assert endpoint.consecutive_failures == 1
    credited(customer, "2.00")  # answered 200
    endpoint.refresh_from_db()
    assert (endpoint.consecutive_failures, endpoint.enabled) == (0, True)


def test_manual_redelivery_sends_the_same_event_again_and_is_refused_while_disabled(
    customer, receiver, endpoint_for, credited, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    event = credited(customer)
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)

    with django_capture_on_commit_callbacks(execute=True):
        delivery_redeliver(delivery_id=delivery.pk, owner=customer)

    assert [r.headers["webhook-id"] for r in receiver.received] == [str(event.event_id)] * 2
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)

    endpoint_set_enabled(endpoint_id=endpoint.pk, owner=customer, enabled=False)
    from api.webhooks.exceptions import EndpointDisabled

    with pytest.raises(EndpointDisabled):
        delivery_redeliver(delivery_id=delivery.pk, owner=customer)
    assert len(receiver.received) == 2


def test_another_customers_delivery_cannot_be_redelivered(
    customer, make_customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    credited(customer)
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    with pytest.raises(WebhookDelivery.DoesNotExist):
        delivery_redeliver(delivery_id=delivery.pk, owner=make_customer())
    assert WebhookDelivery.objects.get(pk=delivery.pk).attempts == 1


def test_a_receiver_that_is_down_is_a_failed_attempt_not_a_crash(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    port = receiver.port
    receiver.server.shutdown()
    receiver.server.server_close()
    credited(customer)
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.response_code is None
    assert str(port) in delivery.error or "refused" in delivery.error.lower()


def test_an_event_raised_while_disabled_after_failures_is_sent_once_enabled_again(
    customer,
    customer_client,
    receiver,
    endpoint_for,
    credited,
    settings,
    drive_until_final,
    django_capture_on_commit_callbacks,
):
    settings.WEBHOOK_DISABLE_AFTER_GAVE_UP = 1
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500] * 9
    credited(customer, "1.00")
    drive_until_final(WebhookDelivery.objects.get(endpoint=endpoint))
    endpoint.refresh_from_db()
    assert endpoint.disabled_by_failures

    missed = credited(customer, "6.00")  # while disabled
    assert len(receiver.received) == 9
    with django_capture_on_commit_callbacks(execute=True):
        response = customer_client.post(
            reverse("webhooks:endpoint_enabled", kwargs={"endpoint_id": endpoint.pk}),
            {"enabled": "1"},
        )
    assert response.status_code == 302

    last = receiver.received[-1]
    assert (len(receiver.received), last.status, last.signature_ok) == (10, 200, True)
    assert last.headers["webhook-id"] == str(missed.event_id)
    assert last.event["data"]["credit"]["amount_usd"] == "6.00"
    delivery = WebhookDelivery.objects.get(endpoint=endpoint, event=missed)
    assert (delivery.status, delivery.attempts) == ("delivered", 1)


def test_an_endpoint_disabled_by_its_owner_gets_no_delivery_for_events_meanwhile(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    endpoint_set_enabled(endpoint_id=endpoint.pk, owner=customer, enabled=False)
    credited(customer, "2.00")
    assert not WebhookDelivery.objects.filter(endpoint=endpoint).exists()
    assert receiver.received == []


def test_a_task_run_long_after_the_sweep_queued_it_signs_and_leases_on_the_real_clock(
    customer, receiver, endpoint_for, credited
):
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500, 500]
    credited(customer)
    delivery = WebhookDelivery.objects.get(endpoint=endpoint)
    # Its retry became due ten minutes ago; the sweep queued it then (with its clock), and
    # the worker, behind a backlog, runs the message only now.
    queued_at = timezone.now() - timedelta(minutes=10)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=queued_at)

    tasks.webhook_deliver.apply(args=[delivery.pk, queued_at.isoformat()])

    second = receiver.received[-1]
    assert len(receiver.received) == 2
    assert abs(int(second.headers["webhook-timestamp"]) - time.time()) < 5
    assert second.signature_ok is True
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    now = timezone.now()
    assert abs((delivery.last_attempt_at - now).total_seconds()) < 5
    # The next retry (1 min) is scheduled from now, not from the stale clock.
    assert timedelta(seconds=50) < delivery.next_attempt_at - now <= timedelta(seconds=61)
