"""The customer's emails about their money: sent once per event, in their language."""

from django.core import mail
from django.db import transaction

from payments.crypto.services.emails import payment_event_email_send
from payments.crypto.services.status import payment_set_status
from payments.locks import lock_payments
from payments.models import PaymentEvent, PaymentStatus, ReviewReason


def send_to_review(payment):
    with transaction.atomic():
        payment_set_status(
            lock_payments([payment.pk])[payment.pk],
            to_status=PaymentStatus.NEEDS_REVIEW,
            review_reason=ReviewReason.UNDERPAID,
            reason="underpaid at expiry",
        )
    return PaymentEvent.objects.get(payment=payment, to_status=PaymentStatus.NEEDS_REVIEW)


def test_a_review_is_emailed_once_even_if_the_task_runs_twice(top_up, customer):
    event = send_to_review(top_up("20.00"))

    assert payment_event_email_send(event_id=event.pk) is True
    assert payment_event_email_send(event_id=event.pk) is False

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [customer.email]
    assert event.payment.reference in message.subject
    assert "You do not need to send anything now" in message.body
    event.refresh_from_db()
    assert event.emailed_at is not None


def test_the_email_is_in_the_customers_language(top_up, customer):
    customer.language = "it"
    customer.save(update_fields=["language"])
    event = send_to_review(top_up("20.00"))
    payment_event_email_send(event_id=event.pk)
    assert mail.outbox[0].subject == f"Il pagamento {event.payment.reference} è in verifica"


def test_an_event_that_is_not_emailed_sends_nothing(top_up):
    payment = top_up("20.00")
    created = PaymentEvent.objects.get(payment=payment, kind="created")
    assert payment_event_email_send(event_id=created.pk) is False
    assert payment_event_email_send(event_id=999_999_999) is False
    assert mail.outbox == []
