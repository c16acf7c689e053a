"""Raw data for admins: read only. Tokens show only their hash; decisions are append-only."""

from django.contrib import admin

from .models import DiagnosticsReport, KitToken, PilotDecision


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(KitToken)
class KitTokenAdmin(ReadOnlyAdmin):
    list_display = ("order", "created_at", "replaced_at", "last_used_at")
    list_select_related = ("order",)


@admin.register(DiagnosticsReport)
class DiagnosticsReportAdmin(ReadOnlyAdmin):
    list_display = (
        "order",
        "uploaded_at",
        "source",
        "hostname",
        "step_reached",
        "handover_problem",
    )
    list_filter = ("source", "handover_problem")
    list_select_related = ("order",)


@admin.register(PilotDecision)
class PilotDecisionAdmin(ReadOnlyAdmin):
    list_display = ("order", "created_at", "kind", "actor")
    list_filter = ("kind",)
    list_select_related = ("order", "actor")
