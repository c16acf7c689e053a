"""The owner is emailed when an endpoint is disabled after failures: never silently.

Sent once, and with no row lock held during the send: the `disabled_notified_at` mark is
claimed and committed first (one claimer wins), the email is sent after. A failed send
releases the claim (if still ours) and raises, so the task's retry sends it again; a worker
killed between the claim and the send loses that one email (the banner still says it).
"""

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from ..locks import lock_endpoint
from ..models import WebhookEndpoint


def _claim(endpoint_id: int) -> tuple[object, str, str, str] | None:
    """(claim time, subject, body, address) once the mark is set, or None: nothing to send."""
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id)
        if endpoint is None or not endpoint.disabled_by_failures or endpoint.disabled_notified_at:
            return None
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
        endpoint.disabled_notified_at = timezone.now()
        endpoint.save(update_fields=["disabled_notified_at"])
    return endpoint.disabled_notified_at, subject, body, owner.email


def endpoint_disabled_email_send(*, endpoint_id: int) -> bool:
    """Send the "endpoint disabled" email if it is owed; True when it was sent now."""
    claimed = _claim(endpoint_id)
    if claimed is None:
        return False
    claimed_at, subject, body, address = claimed
    try:
        send_mail(subject, body, None, [address])
    except BaseException:
        WebhookEndpoint.objects.filter(pk=endpoint_id, disabled_notified_at=claimed_at).update(
            disabled_notified_at=None
        )
        raise
    return True
