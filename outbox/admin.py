from django.contrib import admin

from .models import OutboxEvent


@admin.register(OutboxEvent)
class OutboxEventAdmin(admin.ModelAdmin):
    list_display = ("event_type", "event_id", "account", "created_at", "dispatched_at")
    list_filter = ("event_type",)
    search_fields = ("event_id", "account__email")
    readonly_fields = ("event_id", "event_type", "account", "payload", "created_at")
