"""Rotating an endpoint's signing secret: the new one is shown once; for
WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS deliveries carry both signatures (`v1,<new> v1,<old>`,
as Standard Webhooks allows), so the receiver can switch without refusing one; then only the
new one."""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import User

from ..locks import lock_endpoint
from ..models import WebhookEndpoint
from ..signing import new_secret


def rotation_overlap() -> timedelta:
    return timedelta(seconds=int(settings.WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS))


def endpoint_rotate_secret(*, endpoint_id: int, owner: User, now=None) -> WebhookEndpoint:
    """A fresh secret for the endpoint (the caller shows `endpoint.secret` once); the one it
    replaces signs too until the overlap ends. A second rotation within the overlap drops the
    oldest: at most two secrets sign. WebhookEndpoint.DoesNotExist for another owner's."""
    now = now or timezone.now()
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
        if endpoint is None:
            raise WebhookEndpoint.DoesNotExist()
        endpoint.previous_secret = endpoint.secret
        endpoint.previous_secret_expires_at = now + rotation_overlap()
        endpoint.secret = new_secret()
        endpoint.save(
            update_fields=["secret", "previous_secret", "previous_secret_expires_at", "updated_at"]
        )
    return endpoint
