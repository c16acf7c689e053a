"""order.active carries the access details once the worker saw SSH answer on every host;
order.ending follows the reminders (72, 24, 1 h, each once); order.ended the hard stop.
Driven through the real provisioning and lifecycle services against the test sshd."""

from datetime import timedelta

import pytest

from outbox.models import OutboxEvent
from rental.models import OrderStatus
from tests.rental.test_order_lifecycle_views import generate_key, pay, prepare, tick

pytestmark = pytest.mark.django_db


def events_of(customer, event_type):
    return list(OutboxEvent.objects.filter(account=customer, event_type=event_type).order_by("pk"))


@pytest.fixture(scope="module")
def ssh_key(tmp_path_factory):
    return generate_key(tmp_path_factory.mktemp("ssh-events"))


@pytest.fixture
def active(
    customer, credit, catalogue, place_order, sshd, ssh_key, django_capture_on_commit_callbacks
):
    credit(customer, "5000.00")
    order = pay(
        place_order(customer, catalogue["h100"], lots=2), django_capture_on_commit_callbacks
    )
    assert events_of(customer, "order.active") == []  # paid, not ready yet
    order = prepare(order, sshd, ssh_key[0], django_capture_on_commit_callbacks)
    assert order.status == OrderStatus.ACTIVE
    return order


def test_order_active_is_written_once_with_the_access_details(customer, active, sshd):
    (event,) = events_of(customer, "order.active")
    data = event.envelope()["data"]
    assert data["order"]["reference"] == active.reference
    assert data["order"]["status"] == "active"
    assert data["order"]["ends_at"] == active.ends_at.isoformat()
    hosts = data["access"]["hosts"]
    assert sum(len(host["cards"]) for host in hosts) == 2
    assert {(host["ssh_host"], host["ssh_port"]) for host in hosts} == {(sshd.host, sshd.port)}
    assert all(host["ssh_command"].startswith("ssh ") for host in hosts)
    assert data["access"]["notes"] == active.access_notes
    assert len(events_of(customer, "order.paid")) == 1


def test_reminders_then_the_end_write_order_ending_and_order_ended_once_each(
    customer, active, django_capture_on_commit_callbacks
):
    for hours_before in (72, 71, 24, 23, 1, 0.5):  # two ticks inside each reminder's window
        tick(active.ends_at - timedelta(hours=hours_before), django_capture_on_commit_callbacks)
    ending = events_of(customer, "order.ending")
    assert [event.payload["hours_left"] for event in ending] == [72, 24, 1]
    assert {event.payload["order"]["reference"] for event in ending} == {active.reference}
    assert events_of(customer, "order.ended") == []

    tick(active.ends_at + timedelta(minutes=1), django_capture_on_commit_callbacks)
    tick(active.ends_at + timedelta(minutes=2), django_capture_on_commit_callbacks)
    (ended,) = events_of(customer, "order.ended")
    assert ended.payload["order"]["status"] == "ended"
    assert len({event.event_id for event in OutboxEvent.objects.filter(account=customer)}) == (
        OutboxEvent.objects.filter(account=customer).count()
    )


class DownMailServer:
    """An email backend for a mail server that refuses every message."""

    def __init__(self, *args, **kwargs):
        pass

    def send_messages(self, messages):
        import smtplib

        raise smtplib.SMTPServerDisconnected("the mail server is down")


def test_order_ending_is_written_even_when_the_reminder_email_cannot_be_sent(
    customer, active, settings, django_capture_on_commit_callbacks, mailoutbox, caplog
):
    settings.MAILERS = {"default": {"BACKEND": f"{__name__}.DownMailServer"}}
    for minutes in (0, 1, 2):  # the tick runs every minute while the email keeps failing
        caplog.clear()
        tick(
            active.ends_at - timedelta(hours=72) + timedelta(minutes=minutes),
            django_capture_on_commit_callbacks,
        )
        # The email task's error is logged (in a worker: its log), never raised into the tick.
        assert "mail server is down" in caplog.text
    (ending,) = events_of(customer, "order.ending")
    assert ending.payload["hours_left"] == 72
    assert not active.emails.filter(kind="reminder_72h").exists()  # the email is still owed

    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    tick(active.ends_at - timedelta(hours=71), django_capture_on_commit_callbacks)
    assert active.emails.filter(kind="reminder_72h").exists()
    assert len(events_of(customer, "order.ending")) == 1
