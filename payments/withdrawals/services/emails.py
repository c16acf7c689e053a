"""The customer's emails about a withdrawal: paid (with the transaction), rejected (with the
reason, the amount back on the balance).

Each is tied to the WithdrawalEvent that caused it and sent once: the event row is locked, and
the send and the `emailed_at` mark share one transaction (a failed send rolls the mark back
and the task retries; a task delivered twice finds the mark and sends nothing).
"""

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from ...locks import lock_withdrawal_event
from ...models import WithdrawalStatus

# status reached → template under templates/payments/email/
TEMPLATES = {
    WithdrawalStatus.PAID: "withdrawal_paid",
    WithdrawalStatus.REJECTED: "withdrawal_rejected",
}


def withdrawal_event_email_send(*, event_id: int) -> bool:
    """Email the customer about this event of their withdrawal, once; True when sent now."""
    with transaction.atomic():
        event = lock_withdrawal_event(event_id)  # alone, in a transaction of its own
        if event is None or event.emailed_at is not None:
            return False
        template = TEMPLATES.get(event.to_status)
        if template is None:
            return False
        withdrawal, customer = event.withdrawal, event.withdrawal.customer
        site = settings.SITE_URL.rstrip("/")
        with translation.override(customer.language or settings.LANGUAGE_CODE):
            context = {
                "event": event,
                "withdrawal": withdrawal,
                "customer": customer,
                "withdrawal_url": site
                + reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk}),
                "statement_url": site + reverse("payments:statement"),
                "help_url": site + reverse("rental:help") + "#withdrawals",
            }
            subject = render_to_string(f"payments/email/{template}_subject.txt", context).strip()
            body = render_to_string(f"payments/email/{template}.txt", context)
        send_mail(subject, body, None, [customer.email])
        event.emailed_at = timezone.now()
        event.save(update_fields=["emailed_at"])
    return True
