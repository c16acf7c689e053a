from django.contrib import admin

from .models import OutboxEvent, OutboxMessage


@admin.register(OutboxEvent)
class OutboxEventAdmin(admin.ModelAdmin):
    list_display = ("event_type", "event_id", "account", "created_at", "dispatched_at")
    list_filter = ("event_type",)
    search_fields = ("event_id", "account__email")
    readonly_fields = ("event_id", "event_type", "account", "payload", "created_at")


@admin.register(OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    """Read-only: what was (or is still to be) published; the relay publishes, not a person."""

    list_display = ("task", "created_at", "eta", "published_at", "attempts", "last_error")
    list_filter = ("task",)
    search_fields = ("task",)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
