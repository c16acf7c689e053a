"""What the API shows of endpoints and deliveries (and reads to create or change one)."""

import re

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from outbox.events import EVENT_TYPES, SUBSCRIBABLE_EVENT_TYPES

from .models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEndpoint

EVENT_CHOICES = list(SUBSCRIBABLE_EVENT_TYPES)
# The events list shows every type (a ping too).
ALL_EVENT_CHOICES = list(EVENT_TYPES)
URL_MAX_LENGTH = 500


@extend_schema_field(
    {
        "type": "string",
        "format": "uri",
        "pattern": "^https?://",
        "maxLength": URL_MAX_LENGTH,
        "examples": ["https://example.com/hooks/gpu-rental"],
    }
)
class WebhookUrlField(serializers.CharField):
    """An http or https URL (api.webhooks.guard checks the rest: where it resolves)."""


class EndpointSerializer(serializers.ModelSerializer):
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_CHOICES))
    disabled_reason = serializers.CharField()
    previous_secret_expires_at = serializers.DateTimeField(
        allow_null=True,
        help_text=(
            "After a rotation: until then deliveries carry the old secret's signature too "
            "(null when the endpoint's secret was never rotated)."
        ),
    )

    class Meta:
        model = WebhookEndpoint
        fields = (
            "id",
            "url",
            "events",
            "enabled",
            "disabled_reason",
            "disabled_at",
            "consecutive_failures",
            "previous_secret_expires_at",
            "created_at",
        )
        read_only_fields = fields


class EndpointCreatedSerializer(EndpointSerializer):
    """The answer to a creation: the only time the secret is shown."""

    secret = serializers.CharField(
        allow_null=True,
        help_text=(
            "The signing secret. Shown once: store it now. Null in a replayed answer "
            "(Idempotent-Replayed: true): the secret is not kept with it."
        ),
    )

    class Meta(EndpointSerializer.Meta):
        fields = (*EndpointSerializer.Meta.fields, "secret")
        read_only_fields = fields


class EndpointWriteSerializer(serializers.Serializer):
    url = WebhookUrlField(max_length=URL_MAX_LENGTH)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES), allow_empty=False
    )


class EndpointUpdateSerializer(serializers.Serializer):
    url = WebhookUrlField(max_length=URL_MAX_LENGTH, required=False)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_CHOICES), allow_empty=False, required=False
    )
    enabled = serializers.BooleanField(required=False)


class AttemptSerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookAttempt
        fields = ("number", "started_at", "succeeded", "response_code", "error", "duration_ms")
        read_only_fields = fields


class DeliverySerializer(serializers.ModelSerializer):
    event_id = serializers.SerializerMethodField()
    event_type = serializers.SerializerMethodField()
    endpoint = serializers.IntegerField(source="endpoint_id")
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    attempt_log = AttemptSerializer(many=True)

    class Meta:
        model = WebhookDelivery
        fields = (
            "id",
            "endpoint",
            "event_id",
            "event_type",
            "status",
            "attempts",
            "next_attempt_at",
            "response_code",
            "error",
            "duration_ms",
            "created_at",
            "delivered_at",
            "attempt_log",
        )
        read_only_fields = fields

    @extend_schema_field(serializers.UUIDField())
    def get_event_id(self, delivery) -> str:
        return str(delivery.event.event_id)

    @extend_schema_field(serializers.ChoiceField(choices=ALL_EVENT_CHOICES))
    def get_event_type(self, delivery) -> str:
        return delivery.event.event_type


class RotatedSecretSerializer(EndpointSerializer):
    """The answer to a rotation: the only time the new secret is shown."""

    secret = serializers.CharField(
        allow_null=True,
        help_text=(
            "The new signing secret (`whsec_` + base64 of its key). Shown once: store it now. "
            "Null in a replayed answer (Idempotent-Replayed: true)."
        ),
    )

    class Meta(EndpointSerializer.Meta):
        fields = (*EndpointSerializer.Meta.fields, "secret")
        read_only_fields = fields


RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})", re.ASCII
)


class Rfc3339Field(serializers.DateTimeField):
    """An RFC 3339 date-time, with its offset (`Z` or ±hh:mm), ASCII digits only."""

    default_error_messages = {
        "rfc3339": _("Give a date-time as RFC 3339 with its offset, e.g. 2026-12-01T09:00:00Z.")
    }

    def to_internal_value(self, value):
        if not isinstance(value, str) or not RFC3339.fullmatch(value):
            self.fail("rfc3339")
        # Python reads at most 6 fraction digits: finer than microseconds is cut.
        head, dot, rest = value.partition(".")
        if dot:
            digits = re.match(r"\d+", rest, re.ASCII).group()
            value = f"{head}.{digits[:6]}{rest[len(digits) :]}"
        return super().to_internal_value(value)


class ReplayRequestSerializer(serializers.Serializer):
    since = Rfc3339Field(
        help_text="RFC 3339 with its offset, e.g. 2026-12-01T09:00:00Z; at most 30 days back."
    )


class ReplaySerializer(serializers.Serializer):
    queued = serializers.IntegerField(help_text="Events queued for this endpoint.")
    deliveries = serializers.ListField(
        child=serializers.IntegerField(), help_text="The deliveries queued (their ids)."
    )


class EventSerializer(serializers.Serializer):
    """An event as it is delivered (the body's type, timestamp and data; the id is the
    `webhook-id` header)."""

    id = serializers.UUIDField(source="event_id")
    type = serializers.ChoiceField(source="event_type", choices=ALL_EVENT_CHOICES)
    timestamp = serializers.SerializerMethodField()
    data = serializers.JSONField(source="payload")

    @extend_schema_field(serializers.DateTimeField())
    def get_timestamp(self, event) -> str:
        return event.timestamp  # the very string the webhook body carries
