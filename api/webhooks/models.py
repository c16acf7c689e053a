"""Webhook endpoints, one delivery per (endpoint, event), one row per attempt."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from outbox.events import EVENT_TYPES
from outbox.models import OutboxEvent

from .signing import new_secret  # noqa: F401 (the secret's default; named by migration 0001)


class DisabledReason(models.TextChoices):
    BY_OWNER = "owner", _("Disabled by you")
    FAILURES = "failures", _("Disabled after repeated failed deliveries")


class WebhookEndpoint(models.Model):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="webhook_endpoints",
        verbose_name=_("owner"),
    )
    url = models.URLField(_("URL"), max_length=500)
    # Kept in clear: signing needs it. Shown to the owner once, when the endpoint is created
    # or its secret rotated. `whsec_` + base64 of the key (api.webhooks.signing).
    secret = models.CharField(_("signing secret"), max_length=100, default=new_secret)
    # The secret before the last rotation: deliveries are signed with it too until
    # `previous_secret_expires_at` (WEBHOOK_SECRET_ROTATION_OVERLAP_SECONDS after the rotation).
    previous_secret = models.CharField(_("previous signing secret"), max_length=100, blank=True)
    previous_secret_expires_at = models.DateTimeField(
        _("previous secret valid until"), null=True, blank=True
    )
    events = models.JSONField(_("events"), default=list)
    enabled = models.BooleanField(_("enabled"), default=True)
    disabled_reason = models.CharField(
        _("why disabled"), max_length=10, choices=DisabledReason.choices, blank=True
    )
    disabled_at = models.DateTimeField(_("disabled"), null=True, blank=True)
    disabled_notified_at = models.DateTimeField(_("owner told"), null=True, blank=True)
    # Events given up in a row (reset by any delivered event); WEBHOOK_DISABLE_AFTER_GAVE_UP.
    consecutive_failures = models.PositiveIntegerField(_("events failed in a row"), default=0)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("webhook endpoint")
        verbose_name_plural = _("webhook endpoints")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=("owner", "enabled"), name="webhook_endpoint_owner")]
        constraints = [
            models.CheckConstraint(
                condition=Q(enabled=True, disabled_reason="")
                | Q(enabled=False) & ~Q(disabled_reason=""),
                name="webhook_endpoint_disabled_has_reason",
            ),
        ]

    def __str__(self) -> str:
        return self.url

    def signing_secrets(self, now) -> list[str]:
        """The secrets a delivery made at `now` is signed with: the current one, and the
        previous one while the rotation's overlap runs."""
        if (
            self.previous_secret
            and self.previous_secret_expires_at
            and now < (self.previous_secret_expires_at)
        ):
            return [self.secret, self.previous_secret]
        return [self.secret]

    def subscribes_to(self, event_type: str) -> bool:
        return event_type in self.events

    @property
    def event_labels(self) -> list:
        return [EVENT_TYPES[name] for name in self.events if name in EVENT_TYPES]

    @property
    def disabled_by_failures(self) -> bool:
        return not self.enabled and self.disabled_reason == DisabledReason.FAILURES


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed, will retry")
    GAVE_UP = "gave_up", _("Gave up")


# Statuses in which the delivery still has attempts to make.
OPEN_STATUSES = (DeliveryStatus.PENDING, DeliveryStatus.FAILED)

# Which status may follow which; every change goes through
# api.webhooks.services.status.delivery_set_status. An attempt ends an open delivery
# (delivered, failed and retried, or given up); the owner's redelivery reopens any of them.
DELIVERY_TRANSITIONS: dict[str, frozenset[str]] = {
    DeliveryStatus.PENDING: frozenset(
        {
            DeliveryStatus.DELIVERED,
            DeliveryStatus.FAILED,
            DeliveryStatus.GAVE_UP,
            DeliveryStatus.PENDING,
        }
    ),
    DeliveryStatus.FAILED: frozenset(
        {
            DeliveryStatus.DELIVERED,
            DeliveryStatus.FAILED,
            DeliveryStatus.GAVE_UP,
            DeliveryStatus.PENDING,
        }
    ),
    DeliveryStatus.DELIVERED: frozenset({DeliveryStatus.PENDING}),
    DeliveryStatus.GAVE_UP: frozenset({DeliveryStatus.PENDING}),
}


class WebhookDelivery(models.Model):
    """One event for one endpoint: the unique pair makes the fan-out once only."""

    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(OutboxEvent, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(
        _("status"), max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    # Attempts since the last (re)start of the schedule: a manual redelivery starts it again.
    round_attempts = models.PositiveIntegerField(_("attempts in this round"), default=0)
    # When the next attempt is due (null: nothing to do, or paused while the endpoint is
    # disabled). While an attempt runs it is the attempt's lease: a worker killed meanwhile
    # leaves it due again then.
    next_attempt_at = models.DateTimeField(_("next attempt"), null=True, blank=True)
    last_attempt_at = models.DateTimeField(_("last attempt"), null=True, blank=True)
    # The attempt running now (claimed, not recorded yet): at most
    # WEBHOOK_MAX_ATTEMPTS_IN_FLIGHT_PER_ENDPOINT per endpoint. A killed worker's is ignored
    # once its lease has passed.
    attempt_started_at = models.DateTimeField(_("attempt started"), null=True, blank=True)
    # When a message to attempt it was put on the broker and not taken yet: the minute sweep
    # does not queue it again while that message may still be waiting (only once it must
    # have been lost: WEBHOOK_QUEUED_MESSAGE_LOST_AFTER_SECONDS).
    queued_at = models.DateTimeField(_("queued"), null=True, blank=True)
    response_code = models.PositiveSmallIntegerField(_("response code"), null=True, blank=True)
    error = models.CharField(_("error"), max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    delivered_at = models.DateTimeField(_("delivered"), null=True, blank=True)

    class Meta:
        verbose_name = _("webhook delivery")
        verbose_name_plural = _("webhook deliveries")
        ordering = ("-created_at", "-pk")
        constraints = [
            models.UniqueConstraint(fields=("endpoint", "event"), name="webhook_delivery_once"),
            models.CheckConstraint(
                condition=Q(status__in=DeliveryStatus.values), name="webhook_delivery_status"
            ),
        ]
        indexes = [
            models.Index(
                fields=("next_attempt_at",),
                name="webhook_delivery_due",
                condition=Q(status__in=("pending", "failed")),
            ),
            models.Index(fields=("endpoint", "-created_at"), name="webhook_delivery_log"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} → {self.endpoint_id}: {self.status}"

    @property
    def event_label(self):
        """The event's type in words (the type itself if unknown)."""
        return EVENT_TYPES.get(self.event.event_type, self.event.event_type)

    @property
    def retry_scheduled(self) -> bool:
        """Failed, with a next attempt planned (not paused, not final)."""
        return self.status == DeliveryStatus.FAILED and self.next_attempt_at is not None

    def attempt_in_flight(self, now=None) -> bool:
        """An attempt was claimed, is not recorded yet, and its lease is live (after the
        lease its worker is taken for dead, and the sweep sends the delivery again)."""
        from django.utils import timezone

        now = now or timezone.now()
        return (
            self.status in OPEN_STATUSES
            and self.attempts > 0
            and self.next_attempt_at is not None
            and self.next_attempt_at > now
            and not WebhookAttempt.objects.filter(delivery=self, number=self.attempts).exists()
        )


class WebhookAttempt(models.Model):
    """One POST of a delivery (what the log shows under it)."""

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log"
    )
    number = models.PositiveIntegerField(_("attempt"))
    started_at = models.DateTimeField(_("time"))
    succeeded = models.BooleanField(_("succeeded"))
    response_code = models.PositiveSmallIntegerField(_("response code"), null=True, blank=True)
    error = models.CharField(_("error"), max_length=500, blank=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"))

    class Meta:
        verbose_name = _("webhook attempt")
        verbose_name_plural = _("webhook attempts")
        ordering = ("number",)
        constraints = [
            models.UniqueConstraint(fields=("delivery", "number"), name="webhook_attempt_once"),
        ]

    def __str__(self) -> str:
        return f"{self.delivery_id} #{self.number}: {self.response_code or self.error}"
