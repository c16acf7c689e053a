"""The owner is emailed when an endpoint is disabled after failures: never silently.

Sent once: the endpoint row is locked and the send shares a transaction with the
`disabled_notified_at` mark (a failed send rolls it back; the task retries).
"""

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from ..locks import lock_endpoint


def endpoint_disabled_email_send(*, endpoint_id: int) -> bool:
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id)
        if endpoint is None or not endpoint.disabled_by_failures or endpoint.disabled_notified_at:
            return False
        owner = endpoint.owner
        with translation.override(owner.language or settings.LANGUAGE_CODE):
            context = {
                "endpoint": endpoint,
                "customer": owner,
                "failures": endpoint.consecutive_failures,
                "endpoint_url": settings.SITE_URL.rstrip("/")
                + reverse("webhooks:endpoint_detail", kwargs={"endpoint_id": endpoint.pk}),
            }
            subject = render_to_string("api/webhooks/email/disabled_subject.txt", context).strip()
            body = render_to_string("api/webhooks/email/disabled.txt", context)
        send_mail(subject, body, None, [owner.email])
        endpoint.disabled_notified_at = timezone.now()
        endpoint.save(update_fields=["disabled_notified_at"])
    return True
