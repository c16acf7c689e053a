from django.contrib import admin

from .models import (
    CardAllocation,
    ExtensionStatusChange,
    GpuModel,
    Host,
    LotPrice,
    Order,
    OrderEmail,
    OrderExtension,
    OrderStatusChange,
)


class LotPriceInline(admin.TabularInline):
    model = LotPrice
    extra = 0
    max_num = 3


@admin.register(GpuModel)
class GpuModelAdmin(admin.ModelAdmin):
    """Operators edit the catalogue here. Prices changed here never touch existing orders:
    each order keeps the snapshot it was confirmed with. Stock comes from the hosts in
    /ops/hosts/."""

    list_display = (
        "name",
        "vendor",
        "compute_platform",
        "memory_gb_per_card",
        "cards_per_lot",
        "active",
    )
    list_filter = ("active", "compute_platform", "vendor")
    prepopulated_fields = {"slug": ("name",)}
    inlines = (LotPriceInline,)


class OrderStatusChangeInline(admin.TabularInline):
    model = OrderStatusChange
    extra = 0
    can_delete = False
    readonly_fields = ("from_status", "to_status", "actor", "reason", "created_at")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Order)
class OrderAdmin(admin.ModelAdmin):
    """Read-only: orders change only through the rental services."""

    list_display = (
        "reference",
        "customer",
        "model_name",
        "duration_days",
        "lots",
        "total_usd",
        "status",
        "created_at",
    )
    list_filter = ("status", "model_name", "duration_days")
    search_fields = ("customer__email", "customer__last_name", "pk")
    list_select_related = ("customer",)
    inlines = (OrderStatusChangeInline,)

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in Order._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    """Raw data; operators manage hosts in /ops/hosts/, which guards the cards in use."""

    list_display = ("name", "gpu_model", "cards", "ssh_host", "ssh_port", "state")
    list_filter = ("state", "gpu_model")
    search_fields = ("name", "ssh_host")

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in Host._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(CardAllocation)
class CardAllocationAdmin(admin.ModelAdmin):
    list_display = ("order", "host", "lot", "card_index", "allocated_at", "released_at")
    list_filter = ("host",)
    list_select_related = ("order", "host")

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in CardAllocation._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(OrderEmail)
class OrderEmailAdmin(admin.ModelAdmin):
    list_display = ("order", "kind", "sent_at")
    list_filter = ("kind",)

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in OrderEmail._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ExtensionStatusChangeInline(admin.TabularInline):
    model = ExtensionStatusChange
    fields = ("created_at", "from_status", "to_status", "actor", "reason")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(OrderExtension)
class OrderExtensionAdmin(admin.ModelAdmin):
    """Raw data only: extensions change through rental.services.extensions, never here."""

    list_display = ("reference", "order", "customer", "duration_days", "total_usd", "status")
    list_filter = ("status", "duration_days")
    search_fields = ("customer__email", "order__id")
    list_select_related = ("order", "customer")
    inlines = (ExtensionStatusChangeInline,)

    def get_readonly_fields(self, request, obj=None):
        return [field.name for field in OrderExtension._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
