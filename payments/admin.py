from django.contrib import admin

from .models import (
    LedgerAccount,
    LedgerEntry,
    LedgerTransaction,
    Receipt,
    ReconciliationRun,
    Withdrawal,
    WithdrawalEvent,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """The ledger is append-only: the admin shows it and never writes it."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LedgerEntryInline(admin.TabularInline):
    model = LedgerEntry
    fields = ("account", "amount")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(LedgerAccount)
class LedgerAccountAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "kind", "customer", "asset", "network", "balance")
    list_filter = ("kind", "asset", "network")
    search_fields = ("customer__email",)
    list_select_related = ("customer",)


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(ReadOnlyAdmin):
    list_display = ("pk", "created_at", "kind", "memo", "actor", "order", "reverses")
    list_filter = ("kind",)
    search_fields = ("memo", "idempotency_key", "order__id", "actor__email")
    list_select_related = ("actor", "order", "reverses")
    date_hierarchy = "created_at"
    inlines = (LedgerEntryInline,)


@admin.register(ReconciliationRun)
class ReconciliationRunAdmin(ReadOnlyAdmin):
    list_display = (
        "started_at",
        "period_start",
        "period_end",
        "ok",
        "trial_balance",
        "triggered_by",
    )
    list_filter = ("ok",)


class WithdrawalEventInline(admin.TabularInline):
    model = WithdrawalEvent
    fields = ("created_at", "from_status", "to_status", "actor", "reason", "data", "emailed_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Withdrawal)
class WithdrawalAdmin(ReadOnlyAdmin):
    """Raw data only: finance decides on withdrawals in the finance console (with its second
    factor and the one status setter), never here."""

    list_display = ("reference", "created_at", "customer", "amount_usd", "asset", "network")
    list_display += ("status", "tx_hash")
    list_filter = ("status", "network", "asset")
    search_fields = ("customer__email", "to_address", "tx_hash")
    list_select_related = ("customer",)
    inlines = (WithdrawalEventInline,)


@admin.register(Receipt)
class ReceiptAdmin(ReadOnlyAdmin):
    list_display = ("reference", "issued_at", "customer", "kind", "amount_usd", "description")
    list_filter = ("kind",)
    search_fields = ("customer__email", "description")
    list_select_related = ("customer",)
