"""Customer emails about their money: a payment under review, money credited to the balance.

Each is tied to the PaymentEvent that caused it and sent once: the event row is locked, the
send and the `emailed_at` mark share one transaction (a failed send rolls the mark back and the
task retries; a task delivered twice finds the mark and sends nothing).
"""

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from ...locks import lock_payment_event
from ...models import PaymentEventKind, PaymentStatus

# (event kind, status reached) → template under templates/payments/email/
TEMPLATES = {
    (PaymentEventKind.CREDITED, ""): "credited",
    (PaymentEventKind.STATUS, PaymentStatus.NEEDS_REVIEW): "review",
}


def payment_event_email_send(*, event_id: int) -> bool:
    """Email the customer about this event of their payment, once; True when sent now."""
    with transaction.atomic():
        event = lock_payment_event(event_id)
        if event is None or event.emailed_at is not None:
            return False
        template = TEMPLATES.get((event.kind, event.to_status))
        if template is None:
            return False
        payment, customer = event.payment, event.payment.customer
        with translation.override(customer.language or settings.LANGUAGE_CODE):
            context = {
                "event": event,
                "payment": payment,
                "customer": customer,
                "amount": event.data.get("amount", ""),
                "payment_url": settings.SITE_URL.rstrip("/")
                + reverse("payments:payment_detail", kwargs={"payment_id": payment.pk}),
                "statement_url": settings.SITE_URL.rstrip("/") + reverse("payments:statement"),
            }
            subject = render_to_string(f"payments/email/{template}_subject.txt", context).strip()
            body = render_to_string(f"payments/email/{template}.txt", context)
        send_mail(subject, body, None, [customer.email])
        event.emailed_at = timezone.now()
        event.save(update_fields=["emailed_at"])
    return True
