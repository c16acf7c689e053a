"""What the extension resources answer and the body that asks for one."""

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import UsdField
from rental.models import Duration, ExtensionStatus

from .serializers import CurrencyField
from .serializers_ledger import ReceiptLinkSerializer, receipt_link


class ExtensionCreateRequest(serializers.Serializer):
    duration_days = serializers.ChoiceField(
        choices=Duration.choices,
        help_text="3, 7 or 30 more days, at today's lot price for that duration × the order's "
        "lots (frozen on the extension).",
    )


class ExtensionSerializer(serializers.Serializer):
    """An extension of a rental as the order page lists it. `receipt_number` is annotated on
    the row (api.resources.extensions)."""

    id = serializers.IntegerField()
    reference = serializers.CharField(help_text='"EXT-000042".')
    order_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=ExtensionStatus.choices)
    status_label = serializers.CharField(source="get_status_display")
    duration_days = serializers.ChoiceField(choices=Duration.choices)
    lots = serializers.IntegerField(min_value=1)
    lot_price_usd = UsdField()
    total_usd = UsdField()
    currency = CurrencyField()
    hold_until = serializers.DateTimeField(
        allow_null=True,
        help_text="Its price is held until then without a payment; null while a stablecoin "
        "payment holds it, and once paid or cancelled.",
    )
    period_starts_at = serializers.DateTimeField(allow_null=True, help_text="Set once paid.")
    period_ends_at = serializers.DateTimeField(
        allow_null=True, help_text="The rental's new end, set once paid."
    )
    paid_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()
    receipt = serializers.SerializerMethodField()

    def get_url(self, extension) -> str:
        return reverse("api:extension_detail", kwargs={"extension_id": extension.pk})

    @extend_schema_field(ReceiptLinkSerializer(allow_null=True))
    def get_receipt(self, extension) -> dict | None:
        return receipt_link(getattr(extension, "receipt_number", None))


class ExtensionDetailSerializer(ExtensionSerializer):
    """One extension with what its pay page shows (payments' extension_pay_view, passed as
    `view` in the context): whether it can still be paid, and the balance against it."""

    payable = serializers.SerializerMethodField()
    can_cancel = serializers.SerializerMethodField()
    balance_usd = serializers.SerializerMethodField()
    balance_covers = serializers.SerializerMethodField()
    shortfall_usd = serializers.SerializerMethodField()
    payment_id = serializers.SerializerMethodField()

    def _view(self):
        return self.context["view"]

    def get_payable(self, extension) -> bool:
        """Money can still pay it: awaiting payment, its rental active before its end."""
        return self._view().payable

    def get_can_cancel(self, extension) -> bool:
        return self._view().awaiting

    @extend_schema_field(UsdField())
    def get_balance_usd(self, extension) -> str:
        return f"{self._view().balance:.2f}"

    def get_balance_covers(self, extension) -> bool:
        return self._view().covers

    @extend_schema_field(UsdField())
    def get_shortfall_usd(self, extension) -> str:
        return f"{self._view().shortfall:.2f}"

    def get_payment_id(self, extension) -> int | None:
        """Its open stablecoin payment (payments_retrieve), if any."""
        live = self._view().live_payment
        return live.pk if live else None
