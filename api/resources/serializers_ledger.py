"""What the money resources answer: receipts, an order's refund, withdrawals, the payment
history. Read by the pages' selectors; money as strings with 2 decimals, token amounts as
strings of base units beside their display form."""

from decimal import Decimal

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers import UsdField
from payments.crypto.selectors.state import PaymentState
from payments.models import PaymentPurpose, TransactionKind, WithdrawalStatus
from payments.withdrawals.forms import MAX_WITHDRAWAL_USD

from .serializers import CurrencyField, ReceiptLinkSerializer, receipt_link

CENT = Decimal("0.01")

# ------------------------------------------------------------------------ receipts


class ReceiptSerializer(serializers.Serializer):
    """A receipt as the list shows it."""

    number = serializers.IntegerField(min_value=1)
    reference = serializers.CharField()
    kind = serializers.ChoiceField(choices=TransactionKind.choices)
    kind_label = serializers.CharField(source="get_kind_display")
    amount_usd = UsdField()
    currency = CurrencyField()
    description = serializers.CharField()
    language = serializers.CharField(help_text="The language it was issued in.")
    issued_at = serializers.DateTimeField()
    order_id = serializers.IntegerField(source="transaction.order_id", allow_null=True)
    extension_id = serializers.IntegerField(source="transaction.extension_id", allow_null=True)
    payment_id = serializers.IntegerField(source="transaction.payment_id", allow_null=True)
    withdrawal_id = serializers.IntegerField(source="transaction.withdrawal_id", allow_null=True)
    url = serializers.SerializerMethodField()
    pdf_url = serializers.SerializerMethodField()

    def get_url(self, receipt) -> str:
        return reverse("api:receipt_detail", kwargs={"number": receipt.number})

    def get_pdf_url(self, receipt) -> str:
        return reverse("api:receipt_pdf", kwargs={"number": receipt.number})


class IssuerSerializer(serializers.Serializer):
    name = serializers.CharField()
    address_lines = serializers.ListField(child=serializers.CharField())
    vat_number = serializers.CharField()
    email = serializers.CharField()


class BillingLineSerializer(serializers.Serializer):
    label = serializers.CharField()
    value = serializers.CharField()


class ReceiptDocumentSerializer(ReceiptSerializer):
    """One receipt with what its page and PDF show (payments' receipt_document), its texts in
    the language it was issued in."""

    title = serializers.SerializerMethodField()
    issuer = serializers.SerializerMethodField()
    customer_name = serializers.SerializerMethodField()
    customer_email = serializers.SerializerMethodField()
    billing = serializers.SerializerMethodField()
    method_label = serializers.SerializerMethodField()
    method = serializers.SerializerMethodField()
    tx_hash = serializers.SerializerMethodField()
    reversal_note = serializers.SerializerMethodField()
    note = serializers.SerializerMethodField()

    def _doc(self):
        return self.context["document"]

    def get_title(self, receipt) -> str:
        return self._doc().title

    @extend_schema_field(IssuerSerializer)
    def get_issuer(self, receipt) -> dict:
        return IssuerSerializer(self._doc().issuer).data

    def get_customer_name(self, receipt) -> str:
        return self._doc().customer_name

    def get_customer_email(self, receipt) -> str:
        return self._doc().customer_email

    @extend_schema_field(BillingLineSerializer(many=True))
    def get_billing(self, receipt) -> list[dict]:
        return [{"label": label, "value": value} for label, value in self._doc().billing]

    def get_method_label(self, receipt) -> str:
        return self._doc().method_label

    def get_method(self, receipt) -> str:
        return self._doc().method

    def get_tx_hash(self, receipt) -> str:
        return self._doc().tx_hash

    def get_reversal_note(self, receipt) -> str:
        return self._doc().reversal_note

    def get_note(self, receipt) -> str:
        return self._doc().note


# ------------------------------------------------------------------------ withdrawals


class WithdrawalRequest(serializers.Serializer):
    amount = UsdField(
        read_only=False,
        max_value=MAX_WITHDRAWAL_USD,
        min_value=CENT,
        help_text='USD, such as "25.00": from the minimum withdrawal (WITHDRAWAL_MIN_USD, '
        "10.00 by default) up to the balance, at most two decimals.",
    )
    network = serializers.CharField(help_text='An enabled network\'s key, such as "local".')
    asset = serializers.CharField(help_text='An asset of that network, such as "USDC".')
    to_address = serializers.CharField(
        max_length=42,
        help_text="Your wallet: 0x and 40 hexadecimal characters (a mixed-case address must "
        "carry its EIP-55 checksum).",
    )


class WithdrawalSerializer(serializers.Serializer):
    """A withdrawal as its page shows it (payments.withdrawals.selectors.WithdrawalView)."""

    id = serializers.IntegerField(source="withdrawal.pk")
    reference = serializers.CharField(source="withdrawal.reference")
    status = serializers.ChoiceField(source="withdrawal.status", choices=WithdrawalStatus.choices)
    status_label = serializers.CharField()
    next_step = serializers.CharField(help_text="What happens next, as the page says it.")
    amount_usd = UsdField(source="withdrawal.amount_usd")
    currency = CurrencyField()
    asset = serializers.CharField(source="withdrawal.asset")
    network = serializers.CharField(source="withdrawal.network")
    network_name = serializers.CharField()
    chain_id = serializers.IntegerField(source="withdrawal.chain_id")
    token_address = serializers.CharField(source="withdrawal.token_address")
    decimals = serializers.IntegerField(source="withdrawal.decimals")
    amount_units = serializers.SerializerMethodField()
    amount = serializers.CharField(source="amount_tokens", help_text='"25.000000".')
    to_address = serializers.CharField(source="withdrawal.to_address")
    tx_hash = serializers.CharField(source="withdrawal.tx_hash", help_text="Empty until sent.")
    confirmations = serializers.SerializerMethodField()
    check_reason = serializers.CharField(help_text="The last on-chain check, once sent.")
    reject_reason = serializers.CharField(source="withdrawal.reject_reason")
    created_at = serializers.DateTimeField(source="withdrawal.created_at")
    decided_at = serializers.DateTimeField(source="withdrawal.decided_at", allow_null=True)
    paid_at = serializers.DateTimeField(source="withdrawal.paid_at", allow_null=True)
    receipt = serializers.SerializerMethodField()

    def get_amount_units(self, view) -> str:
        return str(int(view.withdrawal.amount_units))

    @extend_schema_field(
        {
            "type": ["object", "null"],
            "properties": {"seen": {"type": "integer"}, "required": {"type": "integer"}},
            "required": ["seen", "required"],
            "description": "n/N while the transfer gathers its confirmations, else null.",
        }
    )
    def get_confirmations(self, view) -> dict | None:
        counted = view.confirmations
        return {"seen": counted[0], "required": counted[1]} if counted else None

    @extend_schema_field(ReceiptLinkSerializer(allow_null=True))
    def get_receipt(self, view) -> dict | None:
        return receipt_link(view.receipt_number)


# ------------------------------------------------------------------------ payment history


class PaymentSummarySerializer(serializers.Serializer):
    """A crypto payment as the payment history lists it (payments_retrieve has the rest:
    transfers and confirmations)."""

    id = serializers.IntegerField(source="payment.pk")
    reference = serializers.CharField(source="payment.reference")
    purpose = serializers.ChoiceField(source="payment.purpose", choices=PaymentPurpose.choices)
    order_id = serializers.IntegerField(source="payment.order_id", allow_null=True)
    extension_id = serializers.IntegerField(source="payment.extension_id", allow_null=True)
    status = serializers.ChoiceField(
        source="state", choices=PaymentState.choices, help_text="The payment page's state."
    )
    status_label = serializers.CharField(source="state_label")
    asset = serializers.CharField(source="payment.asset")
    network = serializers.CharField(source="payment.network")
    deposit_address = serializers.CharField(source="payment.deposit_address.address")
    amount_due_usd = UsdField(source="payment.amount_due_usd")
    amount_still_due_usd = UsdField()
    currency = CurrencyField()
    expires_at = serializers.DateTimeField(source="payment.expires_at")
    declared_at = serializers.DateTimeField(source="payment.declared_at", allow_null=True)
    created_at = serializers.DateTimeField(source="payment.created_at")
    url = serializers.SerializerMethodField()

    def get_url(self, view) -> str:
        return reverse("api:payment_detail", kwargs={"payment_id": view.payment.pk})
