"""What the resources answer, and the request bodies the schema shows.

Output serializers read the objects the pages' selectors return; request serializers only
declare the bodies (types and documentation): their values are checked by the pages' forms
(api.resources.input). Money is a string with 2 decimals, token amounts strings of base units
beside their display form, times ISO 8601 with their offset.
"""

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import (
    EvmAddressField,
    TokenAmountField,
    TokenUnitsField,
    TxHashField,
    UsdField,
)
from payments.chain.networks import ASSET_SYMBOLS, NETWORK_KEYS
from payments.crypto.forms import MAX_TOP_UP_USD
from payments.crypto.selectors.state import PaymentState
from payments.models import PaymentPurpose, TransactionKind
from pilot.models import DecisionKind
from pilot.services.decisions import MOTIVATION_MAX_LENGTH
from rental.forms import CUSTOM_PREPARATION_MAX_LENGTH
from rental.hosts.models import TenancyStatus
from rental.models import ComputePlatform, Duration, OrderStatus, Preparation
from rental.pricing import MAX_LOTS, MIN_LOTS

CURRENCY = "USD"
# The catalogue's slugs (GpuModel.slug): a string, not an enum; api.schema_catalogue adds the
# live catalogue's slugs as examples.
GPU_MODEL_SLUG_MAX_LENGTH = 40
NETWORK_CHOICES = [(key, key) for key in NETWORK_KEYS]
ASSET_CHOICES = [(symbol, symbol) for symbol in ASSET_SYMBOLS]


Money = UsdField


@extend_schema_field({"type": "string", "enum": [CURRENCY]})
class CurrencyField(serializers.ReadOnlyField):
    """Always "USD"."""

    def __init__(self, **kwargs):
        super().__init__(source="*", **kwargs)

    def to_representation(self, value) -> str:
        return CURRENCY


# ------------------------------------------------------------------------ requests


class OrderCreateRequest(serializers.Serializer):
    gpu_model = serializers.SlugField(
        max_length=GPU_MODEL_SLUG_MAX_LENGTH,
        help_text="The GPU model's slug, from the catalogue (GET /api/v1/catalogue/).",
    )
    duration_days = serializers.ChoiceField(choices=Duration.choices)
    lots = serializers.IntegerField(min_value=MIN_LOTS, max_value=MAX_LOTS)
    preparation = serializers.ChoiceField(choices=Preparation.choices)
    custom_preparation = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=CUSTOM_PREPARATION_MAX_LENGTH,
        help_text="Required for a custom preparation: what must be installed.",
    )


class CancelRequest(serializers.Serializer):
    money_confirmed = serializers.BooleanField(
        required=False,
        help_text="Confirms that money already received on the order goes to the balance.",
    )


class StablecoinRequest(serializers.Serializer):
    network = serializers.ChoiceField(
        choices=NETWORK_CHOICES,
        help_text="A network's key; only the networks this site enables are accepted (400).",
    )
    asset = serializers.ChoiceField(
        choices=ASSET_CHOICES, help_text="An asset of that network (400 otherwise)."
    )


class TopUpRequest(StablecoinRequest):
    amount = UsdField(
        read_only=False,
        max_value=MAX_TOP_UP_USD,
        help_text=f'USD, such as "50.00": at least the site\'s minimum top-up, at most '
        f"{MAX_TOP_UP_USD:.2f}.",
    )


@extend_schema_field({"type": "string", "pattern": r"^(0x[0-9a-fA-F]{64})?$"})
class _OptionalTxHashField(serializers.CharField):
    pass


class DeclareRequest(serializers.Serializer):
    tx_hash = _OptionalTxHashField(
        required=False,
        allow_blank=True,
        max_length=66,
        help_text="The transaction's hash (0x and 64 hexadecimal characters), if known.",
    )


class SshKeyRequest(serializers.Serializer):
    ssh_public_key = serializers.CharField(
        allow_blank=True, help_text="One OpenSSH public key line, as in a .pub file."
    )


class OrderSshKeyRequest(serializers.Serializer):
    ssh_public_key = serializers.CharField(help_text="One OpenSSH public key line.")
    save_on_account = serializers.BooleanField(
        required=False, help_text="Also save the key on the account for the next orders."
    )


class DecisionRequest(serializers.Serializer):
    kind = serializers.ChoiceField(choices=DecisionKind.choices)
    motivation = serializers.CharField(max_length=MOTIVATION_MAX_LENGTH)
    report = serializers.IntegerField(
        required=False, allow_null=True, help_text="The id of a report of this order it rests on."
    )


# ------------------------------------------------------------------------ receipts and refunds


def receipt_link(number: int | None) -> dict | None:
    """{number, reference, url, pdf_url} of a receipt, or None."""
    if number is None:
        return None
    return {
        "number": number,
        "reference": f"R-{number:06d}",
        "url": reverse("api:receipt_detail", kwargs={"number": number}),
        "pdf_url": reverse("api:receipt_pdf", kwargs={"number": number}),
    }


class ReceiptLinkSerializer(serializers.Serializer):
    number = serializers.IntegerField(min_value=1)
    reference = serializers.CharField(help_text='"R-000042".')
    url = serializers.CharField(help_text="The receipt in JSON (receipts_retrieve).")
    pdf_url = serializers.CharField(help_text="The same receipt as the page's PDF (receipts_pdf).")


class RefundSerializer(serializers.Serializer):
    """An order ended early (payments.ledger.selectors.refunds.order_refund): the hours not
    delivered, credited to the balance."""

    ended_at = serializers.DateTimeField()
    hours = serializers.IntegerField(min_value=0, help_text="Hours not delivered, refunded.")
    amount_usd = UsdField(source="amount", help_text="Credited to the USD balance.")
    currency = CurrencyField()
    reason = serializers.CharField(help_text="The operator's reason, as the order page shows it.")
    receipt = serializers.SerializerMethodField()

    @extend_schema_field(ReceiptLinkSerializer(allow_null=True))
    def get_receipt(self, refund) -> dict | None:
        return receipt_link(self.context.get("refund_receipt"))


# ------------------------------------------------------------------------ orders


class HostAccessSerializer(serializers.Serializer):
    """One host of the order as its page shows it (rental.selectors.order_access)."""

    host_name = serializers.CharField()
    ssh_host = serializers.CharField()
    ssh_port = serializers.IntegerField()
    ssh_user = serializers.CharField(
        help_text="The order's own account on a host the worker prepares; the host's shared "
        "user on a host operators prepare by hand."
    )
    cards = serializers.ListField(child=serializers.IntegerField(), help_text="From 1.")
    ssh_command = serializers.CharField()
    state = serializers.ChoiceField(
        choices=[("", ""), *TenancyStatus.choices],
        help_text="This host's access: provisioning, verifying, ready, revoking, erased or "
        "quarantined (the removal not confirmed yet: the cards stay out of service); empty "
        "for cards allocated before access was followed per host.",
    )
    ready_at = serializers.DateTimeField(
        allow_null=True, help_text="When the access was checked ready."
    )
    cards_verified = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The cards (from 1) seen when the worker logged in as the order's account.",
    )
    revoke_started_at = serializers.DateTimeField(allow_null=True)
    erased_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the revocation and erasure were verified; null until then.",
    )


class TimelineEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    kind = serializers.CharField(help_text="status, extension, report or decision.")
    text = serializers.CharField()


class ExtensionOfferSerializer(serializers.Serializer):
    """One duration the rental can be extended by, at today's price
    (rental.selectors_extensions.extension_offers)."""

    duration_days = serializers.ChoiceField(choices=Duration.choices)
    lot_price_usd = Money()
    total_usd = Money()
    currency = CurrencyField()
    new_ends_at = serializers.DateTimeField(
        help_text="The rental's end once paid, if paid before the current end."
    )


class OrderSummarySerializer(serializers.Serializer):
    """An order as the list shows it: the snapshot of what was confirmed, and its status."""

    id = serializers.IntegerField()
    reference = serializers.CharField()
    status = serializers.ChoiceField(choices=OrderStatus.choices)
    status_label = serializers.CharField(source="get_status_display")
    gpu_model = serializers.CharField(source="gpu_model.slug", help_text="The model's slug.")
    model_name = serializers.CharField()
    vendor = serializers.CharField()
    compute_platform = serializers.ChoiceField(choices=ComputePlatform.choices)
    memory_gb_per_card = serializers.IntegerField()
    cards_per_lot = serializers.IntegerField()
    duration_days = serializers.IntegerField()
    lots = serializers.IntegerField()
    total_cards = serializers.IntegerField()
    preparation = serializers.ChoiceField(choices=Preparation.choices)
    custom_preparation = serializers.CharField()
    lot_price_usd = Money()
    total_usd = Money()
    currency = CurrencyField()
    created_at = serializers.DateTimeField()
    hold_until = serializers.DateTimeField(allow_null=True)
    starts_at = serializers.DateTimeField(allow_null=True)
    ends_at = serializers.DateTimeField(allow_null=True)


class OrderSerializer(OrderSummarySerializer):
    """One order with what its page shows: next steps, access while running, the timeline.

    The view passes `access` (rental.selectors.order_access, while active or ended), the
    SSH key's fingerprint and the timeline (pilot.selectors.order_timeline) in the context.
    """

    can_cancel = serializers.BooleanField(source="can_be_cancelled_by_customer")
    can_extend = serializers.SerializerMethodField()
    extension_offers = serializers.SerializerMethodField()
    accepts_ssh_key = serializers.BooleanField()
    ssh_key_fingerprint = serializers.SerializerMethodField()
    access_notes = serializers.SerializerMethodField()
    access = serializers.SerializerMethodField()
    timeline = serializers.SerializerMethodField()
    receipt = serializers.SerializerMethodField()
    refund = serializers.SerializerMethodField()

    def get_can_extend(self, order) -> bool:
        """An active rental before its end: orders_extensions_create accepts it."""
        return self.context["extendable"]

    @extend_schema_field(ExtensionOfferSerializer(many=True))
    def get_extension_offers(self, order) -> list[dict]:
        """What the extend page offers now; empty when the order cannot be extended."""
        return ExtensionOfferSerializer(self.context["extension_offers"], many=True).data

    @extend_schema_field(ReceiptLinkSerializer(allow_null=True))
    def get_receipt(self, order) -> dict | None:
        """The receipt of the order's payment, once paid."""
        return receipt_link(self.context["receipts"].get(TransactionKind.ORDER_PAYMENT))

    @extend_schema_field(RefundSerializer(allow_null=True))
    def get_refund(self, order) -> dict | None:
        """Once an operator ended the order early: the hours refunded (orders_refund_retrieve)."""
        refund = self.context["refund"]
        if refund is None:
            return None
        receipt = self.context["receipts"].get(TransactionKind.REFUND)
        return RefundSerializer(refund, context={"refund_receipt": receipt}).data

    def get_ssh_key_fingerprint(self, order) -> str | None:
        return self.context["ssh_key_fingerprint"]

    def get_access_notes(self, order) -> str:
        return order.access_notes if self.context["access"] else ""

    @extend_schema_field(HostAccessSerializer(many=True))
    def get_access(self, order) -> list[dict]:
        return HostAccessSerializer(self.context["access"], many=True).data

    @extend_schema_field(TimelineEntrySerializer(many=True))
    def get_timeline(self, order) -> list[dict]:
        return TimelineEntrySerializer(self.context["timeline"], many=True).data


# ------------------------------------------------------------------------ crypto payments


class TransferSerializer(serializers.Serializer):
    tx_hash = TxHashField()
    explorer_url = serializers.CharField(help_text="Empty on the local test chain.")
    block_number = serializers.IntegerField()
    amount_units = TokenUnitsField(help_text="Token base units.")
    amount = TokenAmountField(help_text='With all the token\'s decimals: "893.760000".')
    confirmations = serializers.IntegerField()
    required = serializers.IntegerField()
    confirmed = serializers.BooleanField()
    reversed = serializers.BooleanField()


class ConfirmationsSerializer(serializers.Serializer):
    seen = serializers.IntegerField(help_text="n: of the least confirmed transfer seen.")
    required = serializers.IntegerField(help_text="N: confirmations the network requires.")


class PaymentSerializer(serializers.Serializer):
    """A crypto payment as its page shows it (payments.crypto.selectors.payment_page.PaymentView):
    instructions only while money is due, for the amount still due."""

    id = serializers.IntegerField(source="payment.pk")
    purpose = serializers.ChoiceField(source="payment.purpose", choices=PaymentPurpose.choices)
    order_id = serializers.IntegerField(source="payment.order_id", allow_null=True)
    status = serializers.ChoiceField(
        source="state",
        choices=PaymentState.choices,
        help_text="The payment's state for you: the same strings as webhooks' `payment.status`.",
    )
    status_label = serializers.CharField(source="state_label")
    asset = serializers.ChoiceField(source="payment.asset", choices=ASSET_CHOICES)
    network = serializers.ChoiceField(source="payment.network", choices=NETWORK_CHOICES)
    network_name = serializers.SerializerMethodField()
    chain_id = serializers.IntegerField(source="payment.chain_id")
    token_address = EvmAddressField(source="payment.token_address")
    decimals = serializers.IntegerField(source="payment.decimals")
    deposit_address = EvmAddressField(source="payment.deposit_address.address")
    amount_due_usd = Money(source="payment.amount_due_usd")
    amount_due_units = serializers.SerializerMethodField()
    amount_due = serializers.SerializerMethodField()
    amount_still_due_units = serializers.SerializerMethodField()
    amount_still_due = TokenAmountField()
    amount_still_due_usd = Money()
    currency = CurrencyField()
    shows_instructions = serializers.BooleanField()
    payment_uri = serializers.CharField(
        source="uri", help_text="EIP-681; empty when nothing is due."
    )
    expires_at = serializers.DateTimeField(source="payment.expires_at")
    confirmations = serializers.SerializerMethodField()
    transfers = TransferSerializer(many=True)
    can_declare = serializers.BooleanField()
    declared_at = serializers.DateTimeField(source="payment.declared_at", allow_null=True)
    declared_tx_hash = serializers.CharField(
        source="payment.declared_tx_hash", help_text="Empty when none was given."
    )
    review_text = serializers.CharField()
    created_at = serializers.DateTimeField(source="payment.created_at")

    def get_network_name(self, view) -> str:
        return str(view.network.name) if view.network else view.payment.network

    @extend_schema_field(TokenUnitsField)
    def get_amount_due_units(self, view) -> str:
        return str(int(view.payment.amount_due_units))

    @extend_schema_field(TokenAmountField)
    def get_amount_due(self, view) -> str:
        from payments.chain.selectors import token_amount

        return token_amount(view.payment.amount_due_units, view.payment.decimals)

    @extend_schema_field(TokenUnitsField)
    def get_amount_still_due_units(self, view) -> str:
        return str(view.amount_still_due_units)

    @extend_schema_field(ConfirmationsSerializer)
    def get_confirmations(self, view) -> dict:
        pending = [t.confirmations for t in view.transfers if not t.reversed]
        return {
            "seen": min(pending) if pending else 0,
            "required": view.payment.confirmations_required,
        }


# ------------------------------------------------------------------------ balance


class BalanceSerializer(serializers.Serializer):
    balance_usd = Money()
    currency = CurrencyField()


class StatementEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    created_at = serializers.DateTimeField(source="transaction.created_at")
    kind = serializers.ChoiceField(source="transaction.kind", choices=TransactionKind.choices)
    kind_label = serializers.CharField(source="transaction.get_kind_display")
    memo = serializers.CharField(source="transaction.memo")
    order_id = serializers.IntegerField(source="transaction.order_id", allow_null=True)
    order_reference = serializers.SerializerMethodField()
    amount_usd = Money(source="amount", signed=True, help_text="Negative for a debit.")
    running_balance_usd = Money(source="running_balance")
    currency = CurrencyField()

    def get_order_reference(self, entry) -> str | None:
        order = entry.transaction.order
        return order.reference if order else None


# ------------------------------------------------------------------------ SSH key


class SshKeySerializer(serializers.Serializer):
    ssh_public_key = serializers.CharField(source="line", help_text="Empty when none is saved.")
    fingerprint = serializers.CharField(allow_null=True)
    key_type = serializers.CharField(allow_null=True)


# ------------------------------------------------------------------------ pilot


class ReportStepSerializer(serializers.Serializer):
    name = serializers.CharField()
    status = serializers.CharField()
    detail = serializers.CharField()
    advice = serializers.CharField()


class ReportSerializer(serializers.Serializer):
    """A diagnostics report of the order (pilot.selectors.ReportView), without its JSON."""

    id = serializers.IntegerField(source="report.pk")
    uploaded_at = serializers.DateTimeField(source="report.uploaded_at")
    source = serializers.CharField(source="report.source")
    generated_at = serializers.DateTimeField(source="report.generated_at", allow_null=True)
    tool_version = serializers.CharField(source="report.tool_version")
    hostname = serializers.CharField(source="report.hostname")
    host_platform = serializers.CharField(source="report.host_platform")
    step_reached = serializers.CharField(source="report.step_reached")
    step_reached_label = serializers.CharField()
    first_error_step = serializers.CharField(source="report.first_error_step")
    first_error_label = serializers.CharField()
    first_error_message = serializers.CharField(source="report.first_error_message")
    steps = serializers.SerializerMethodField()
    handover_problem = serializers.BooleanField(source="report.handover_problem")
    problems = serializers.ListField(child=serializers.CharField(), source="report.problems")

    @extend_schema_field(ReportStepSerializer(many=True))
    def get_steps(self, view) -> list[dict]:
        return [
            {
                "name": step.get("name", ""),
                "status": step.get("status", ""),
                "detail": step.get("detail", ""),
                "advice": step.get("advice", ""),
            }
            for step in view.report.steps
        ]


class DecisionSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="decision.pk")
    kind = serializers.ChoiceField(source="decision.kind", choices=DecisionKind.choices)
    kind_label = serializers.CharField(source="decision.get_kind_display")
    motivation = serializers.CharField(source="decision.motivation")
    report = serializers.IntegerField(source="decision.report_id", allow_null=True)
    created_at = serializers.DateTimeField(source="decision.created_at")
