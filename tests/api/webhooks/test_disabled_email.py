"""The "endpoint disabled" email is sent with no row lock held: the notification is claimed
and committed first; a failed send releases the claim so that the retry sends it, once."""

import pytest
from django.db import transaction
from django.utils import timezone

from api.webhooks.locks import lock_endpoint
from api.webhooks.models import DisabledReason, WebhookEndpoint
from api.webhooks.services.emails import endpoint_disabled_email_send
from api.webhooks.services.endpoints import endpoint_create, endpoint_disable

from .mail_probe import LockProbeBackend

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def probe(settings):
    settings.MAILERS = {"default": {"BACKEND": "tests.api.webhooks.mail_probe.LockProbeBackend"}}
    LockProbeBackend.seen = []
    LockProbeBackend.fail_next = 0
    return LockProbeBackend


def test_the_email_is_sent_after_the_claim_commits_with_no_lock_held(customer, probe):
    endpoint = endpoint_create(owner=customer, url="http://127.0.0.1:9/h", events=["order.paid"])
    with transaction.atomic():  # as the delivery does after the last failure
        locked = lock_endpoint(endpoint_id=endpoint.pk)
        endpoint_disable(locked, reason=DisabledReason.FAILURES)
    # The commit queued the email task (eager here): it ran.
    (sent,) = probe.seen
    assert sent["locked"] is False
    assert sent["notified"][0] is not None  # the claim was committed before the send
    assert "disabled" in sent["subjects"][0]
    assert endpoint_disabled_email_send(endpoint_id=endpoint.pk) is False  # once only
    assert len(probe.seen) == 1


def test_a_failed_send_releases_the_claim_and_the_retry_sends_once(customer, probe):
    endpoint = endpoint_create(owner=customer, url="http://127.0.0.1:9/h", events=["order.paid"])
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        enabled=False, disabled_reason=DisabledReason.FAILURES, disabled_at=timezone.now()
    )
    probe.fail_next = 1
    with pytest.raises(OSError):
        endpoint_disabled_email_send(endpoint_id=endpoint.pk)
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).disabled_notified_at is None

    assert endpoint_disabled_email_send(endpoint_id=endpoint.pk) is True
    assert endpoint_disabled_email_send(endpoint_id=endpoint.pk) is False
    assert [p.get("failed", False) for p in probe.seen] == [True, False]
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).disabled_notified_at is not None
