"""Reminders follow the new end: each rental period (the order's own, then one per paid
extension) gets its reminders and its order.ending events, once each; the customer is told
the new end once."""

from datetime import timedelta

from django.core import mail

from outbox.models import OutboxEvent
from rental.models import OrderEmail, OrderEmailKind
from rental.services import extension_create, extension_pay
from rental.services.extensions import extension_email_send
from rental.services.lifecycle import rentals_tick
from tests.rental.test_order_emails import sent, utc

from .helpers import end_in


def tick(now, capture):
    with capture(execute=True):
        return rentals_tick(now=now)


def pay(order, days, capture, customer):
    extension = extension_create(order_id=order.pk, customer=customer, duration_days=days)
    with capture(execute=True):
        assert extension_pay(extension_id=extension.pk, actor=customer, reason="test")
    order.refresh_from_db()
    extension.refresh_from_db()
    return extension


def ending_events(customer) -> list[int]:
    return [
        event.payload["hours_left"]
        for event in OutboxEvent.objects.filter(
            account=customer, event_type="order.ending"
        ).order_by("pk")
    ]


def test_a_reminder_sent_before_the_extension_is_due_again_before_the_new_end(
    customer, active_order, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    order = active_order(customer)
    now = end_in(order, timedelta(hours=24) - timedelta(minutes=1))
    old_end = order.ends_at
    assert tick(now, capture).reminded == [(order.pk, OrderEmailKind.REMINDER_24H)]
    [first] = sent(order, OrderEmailKind.REMINDER_24H)
    assert utc(old_end) in first.body

    pay(order, 3, capture, customer)
    assert order.ends_at == old_end + timedelta(days=3)
    assert order.period == 1

    # Nothing is due now: the new end is more than 72 hours away.
    assert tick(now, capture).reminded == []
    # 24 hours before the new end, the 24-hour reminder goes out again, once.
    later = order.ends_at - timedelta(hours=23)
    assert tick(later, capture).reminded == [(order.pk, OrderEmailKind.REMINDER_24H)]
    assert tick(later, capture).reminded == []
    first_again, second = sent(order, OrderEmailKind.REMINDER_24H)
    assert first_again is first
    assert utc(order.ends_at) in second.body and utc(old_end) not in second.body
    assert sorted(
        OrderEmail.objects.filter(order=order, kind=OrderEmailKind.REMINDER_24H).values_list(
            "period", flat=True
        )
    ) == [0, 1]
    assert ending_events(customer) == [24, 24]


def test_each_period_gets_its_72_hour_reminder_once(
    customer, active_order, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    order = active_order(customer)
    now = end_in(order, timedelta(hours=72) - timedelta(minutes=1))
    tick(now, capture)
    pay(order, 7, capture, customer)
    pay(order, 7, capture, customer)
    assert order.period == 2

    tick(order.ends_at - timedelta(hours=71), capture)
    tick(order.ends_at - timedelta(hours=71), capture)

    assert len(sent(order, OrderEmailKind.REMINDER_72H)) == 2
    assert ending_events(customer) == [72, 72]
    assert sorted(
        OrderEmail.objects.filter(order=order, kind=OrderEmailKind.REMINDER_72H).values_list(
            "period", flat=True
        )
    ) == [0, 2]


def test_the_customer_is_told_the_new_end_once(
    customer, active_order, django_capture_on_commit_callbacks
):
    order = active_order(customer, lots=2)
    mail.outbox.clear()

    extension = pay(order, 7, django_capture_on_commit_callbacks, customer)

    [message] = mail.outbox
    assert message.to == [customer.email]
    assert message.subject == f"Order {order.reference}: your rental is extended"
    assert (
        f"We have received the payment of 893.76 USD for extension {extension.reference}: "
        f"order {order.reference} is extended by 7 days."
    ) in message.body
    assert f"The rental now ends on {utc(order.ends_at)}." in message.body
    # A task delivered twice sends nothing more; the record is the first extension's period.
    assert extension_email_send(extension_id=extension.pk) is False
    assert len(mail.outbox) == 1
    assert OrderEmail.objects.filter(
        order=order, kind=OrderEmailKind.PAYMENT_RECEIVED, period=1
    ).exists()
    # The webhook event carries the new end.
    (event,) = OutboxEvent.objects.filter(account=customer, event_type="order.extended")
    data = event.payload
    assert data["order"]["ends_at"] == order.ends_at.isoformat()
    assert data["extension"]["reference"] == extension.reference
    assert data["extension"]["total_usd"] == "893.76"
