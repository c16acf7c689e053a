from django.contrib import admin

from .models import TaskHealth


@admin.register(TaskHealth)
class TaskHealthAdmin(admin.ModelAdmin):
    """Written by the workers only: the admin shows it."""

    list_display = ("task", "consecutive_failures", "failing_since", "last_success_at")
    readonly_fields = [field.name for field in TaskHealth._meta.fields]

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
