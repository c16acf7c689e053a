from django import forms
from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from . import services
from .exceptions import RentalError
from .models import GpuModel, LotPrice, Order, OrderStatusChange


class LotPriceInline(admin.TabularInline):
    model = LotPrice
    extra = 0
    max_num = 3


class GpuModelAdminForm(forms.ModelForm):
    stock_change = forms.IntegerField(
        label=_("Change stock by"),
        required=False,
        help_text=_("Lots to add (positive) or remove (negative). Stock never goes below zero."),
    )

    class Meta:
        model = GpuModel
        fields = (
            "slug",
            "name",
            "vendor",
            "compute_platform",
            "memory_gb_per_card",
            "cards_per_lot",
            "description",
            "active",
            "display_order",
        )


@admin.register(GpuModel)
class GpuModelAdmin(admin.ModelAdmin):
    """Operators edit the catalogue here. Prices changed here never touch existing orders:
    each order keeps the snapshot it was confirmed with."""

    form = GpuModelAdminForm
    list_display = (
        "name",
        "vendor",
        "compute_platform",
        "memory_gb_per_card",
        "cards_per_lot",
        "lots_in_stock",
        "active",
    )
    list_filter = ("active", "compute_platform", "vendor")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("lots_in_stock",)
    inlines = (LotPriceInline,)

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        delta = form.cleaned_data.get("stock_change")
        if delta:
            try:
                services.stock_adjust(gpu_model_id=obj.pk, delta=delta)
            except RentalError as exc:
                self.message_user(request, exc.message, level=messages.ERROR)


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
