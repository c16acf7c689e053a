"""What the API shows of endpoints and deliveries (and reads to create or change one)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from outbox.events import EVENT_TYPES

from .models import DeliveryStatus, WebhookAttempt, WebhookDelivery, WebhookEndpoint

EVENT_CHOICES = list(EVENT_TYPES)
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

    @extend_schema_field(serializers.ChoiceField(choices=EVENT_CHOICES))
    def get_event_type(self, delivery) -> str:
        return delivery.event.event_type
