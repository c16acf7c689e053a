"""The outbox: domain events written in the transaction that causes them.

A row is the event's one durable copy; its `event_id` is the id every receiver sees, however
many times the event is delivered. `dispatched_at` is set once the handlers of OUTBOX_HANDLERS
(webhooks: the fan-out to endpoints) have taken it, in the same transaction.
"""

import uuid
from datetime import UTC

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class OutboxEvent(models.Model):
    event_id = models.UUIDField(_("event id"), default=uuid.uuid4, unique=True, editable=False)
    event_type = models.CharField(_("type"), max_length=40)
    # Indexed by outbox_account_recent (account, -created_at), which also serves the cascade
    # from a deleted account: an index of its own cost every event a write for nothing.
    account = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="outbox_events",
        verbose_name=_("account"),
        db_index=False,
    )
    payload = models.JSONField(_("data"), encoder=DjangoJSONEncoder)
    # At most one event per key, for events that are not a row's change of state (a reminder
    # is decided by a periodic tick that may run many times): the second emit writes nothing.
    # Unique where set (outbox_once_key): most events have none, and are in no index of it.
    once_key = models.CharField(_("once key"), max_length=100, null=True, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    dispatched_at = models.DateTimeField(_("dispatched"), null=True, blank=True)
    # The events of one transaction carry one token, the argument of its one dispatch task
    # (outbox.services.outbox_dispatch_batch).
    dispatch_batch = models.UUIDField(_("dispatch batch"), null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("outbox event")
        verbose_name_plural = _("outbox events")
        ordering = ("created_at", "pk")
        indexes = [
            models.Index(
                fields=("created_at",),
                name="outbox_undispatched",
                condition=Q(dispatched_at__isnull=True),
            ),
            models.Index(fields=("account", "-created_at"), name="outbox_account_recent"),
            models.Index(
                fields=("dispatch_batch",),
                name="outbox_batch_undispatched",
                condition=Q(dispatched_at__isnull=True),
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=("once_key",), name="outbox_once_key", condition=Q(once_key__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.event_id}"

    @property
    def timestamp(self) -> str:
        """When the event happened, RFC 3339 in UTC."""
        return self.created_at.astimezone(UTC).isoformat().replace("+00:00", "Z")

    def envelope(self) -> dict:
        """What a receiver gets (the Standard Webhooks payload; the id is the `webhook-id`
        header): the same for every delivery of this event."""
        return {"type": self.event_type, "timestamp": self.timestamp, "data": self.payload}


class OutboxMessage(models.Model):
    """A task for a worker (an email, a webhook attempt, host work, a check), written in the
    transaction that causes it: the task is published after the commit, and if the broker
    cannot take it then (down, unreachable), the relay publishes it later. A committed action
    never loses its message and never answers 500 for it."""

    task = models.CharField(_("task"), max_length=100)
    args = models.JSONField(_("arguments"), default=list, encoder=DjangoJSONEncoder)
    kwargs = models.JSONField(_("keyword arguments"), default=dict, encoder=DjangoJSONEncoder)
    eta = models.DateTimeField(_("not before"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    # A publisher's claim (the one after the commit, or the relay's): another one leaves the
    # row alone until then; a publisher killed before it published leaves it to the relay.
    claimed_until = models.DateTimeField(_("claimed until"), null=True, blank=True)
    published_at = models.DateTimeField(_("published"), null=True, blank=True)
    attempts = models.PositiveIntegerField(_("publish attempts"), default=0)
    last_error = models.CharField(_("last error"), max_length=500, blank=True)

    class Meta:
        verbose_name = _("outbox message")
        verbose_name_plural = _("outbox messages")
        indexes = [
            models.Index(
                fields=("created_at", "id"),
                condition=Q(published_at__isnull=True),
                name="outbox_message_pending",
            ),
            models.Index(
                fields=("published_at",),
                condition=Q(published_at__isnull=False),
                name="outbox_message_published",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task}{tuple(self.args)}"
