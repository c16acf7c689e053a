"""Withdrawal forms, the customer's and finance's: they parse and validate; the services in
payments.withdrawals.services do the work (and check everything again)."""

from decimal import Decimal
from uuid import uuid4

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIDecimalField
from accounts.mfa import StepUpFormMixin
from rental.money import usd

from ..chain.forms import StablecoinForm
from ..formats import usd_text
from .services import (
    HASH_MESSAGE,
    TX_HASH_PATTERN,
    WithdrawalAddressError,
    address_checked,
    withdrawal_minimum,
)

MAX_WITHDRAWAL_USD = Decimal("1000000.00")
REQUEST_KEY_MESSAGE = _(
    "This form is incomplete or was altered. Reload the page and fill it in again."
)


class _RequestKeyForm(forms.Form):
    """A hidden key generated when the form is first shown and sent with every resubmission,
    so that the same form sent twice acts once."""

    request_key = forms.UUIDField(
        widget=forms.HiddenInput,
        error_messages={"required": REQUEST_KEY_MESSAGE, "invalid": REQUEST_KEY_MESSAGE},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial.setdefault("request_key", uuid4())

    def full_clean(self):
        super().full_clean()
        if self.is_bound and "request_key" in self._errors:
            # Shown again with a fresh key: the damaged one could never be sent successfully.
            self.data = self.data.copy()
            self.data[self.add_prefix("request_key")] = str(uuid4())


class WithdrawForm(StablecoinForm, _RequestKeyForm):
    """The customer's withdrawal: amount, stablecoin and network, address of their wallet."""

    amount = ASCIIDecimalField(
        label=_("Amount (USD)"),
        max_digits=None,
        decimal_places=2,
        max_value=MAX_WITHDRAWAL_USD,
        error_messages={
            "required": _("Enter the amount in USD."),
            "invalid": _("Enter the amount as a number, such as 25.00."),
            "max_value": _("A withdrawal is at most 1,000,000.00 USD."),
            "max_decimal_places": _("Enter at most two decimal places (cents)."),
        },
    )
    to_address = forms.CharField(
        label=_("Your wallet address"),
        max_length=42,
        strip=True,
        help_text=_(
            "0x followed by 40 hexadecimal characters, on the network you choose. Paste it "
            "from your wallet: mixed upper and lower case carries a checksum, which is checked."
        ),
        error_messages={
            "required": _("Enter the address of your wallet."),
            "max_length": _("An address is 0x followed by 40 hexadecimal characters (0-9, a-f)."),
        },
        widget=forms.TextInput(
            attrs={"placeholder": "0x…", "autocomplete": "off", "spellcheck": "false"}
        ),
    )

    field_order = ("amount", "stablecoin", "to_address")

    def __init__(self, *args, balance: Decimal, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["stablecoin"].label = _("Stablecoin and network to receive")
        self.balance = usd(balance)
        self.minimum = withdrawal_minimum()
        amount = self.fields["amount"]
        amount.widget.attrs.update({"min": str(self.minimum), "max": str(self.balance)})
        amount.help_text = _(
            "From %(minimum)s USD up to your balance, %(balance)s USD, with at most two decimals."
        ) % {"minimum": usd_text(self.minimum), "balance": usd_text(self.balance)}
        self.minimum_message = _("The minimum withdrawal is %(minimum)s USD.") % {
            "minimum": usd_text(self.minimum)
        }
        amount.error_messages["negative"] = self.minimum_message

    def clean_amount(self) -> Decimal:
        amount = usd(self.cleaned_data["amount"])
        if amount < self.minimum:
            raise ValidationError(self.minimum_message, code="min_value")
        if amount > self.balance:
            raise ValidationError(
                _("Your balance is %(balance)s USD: you can withdraw at most that.")
                % {"balance": usd_text(self.balance)},
                code="max_value",
            )
        return amount

    def clean_to_address(self) -> str:
        try:
            return address_checked(self.cleaned_data["to_address"])
        except WithdrawalAddressError as exc:
            raise ValidationError(exc.message, code="invalid") from None


class ApproveForm(StepUpFormMixin, forms.Form):
    """Approving asks for the second factor again: StepUpFormMixin adds the code field and
    checks it for `step_up_user`, the member of finance approving."""


class RejectForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason (the customer sees it)"),
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={
            "required": _("Give the reason for the rejection: the customer sees it."),
            "max_length": _(
                "Keep the reason to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )

    def clean_reason(self) -> str:
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise ValidationError(
                _("Give the reason for the rejection: the customer sees it."), code="required"
            )
        return reason


class HashForm(forms.Form):
    tx_hash = forms.CharField(
        label=_("Transaction hash of your transfer"),
        max_length=66,
        strip=True,
        error_messages={"required": HASH_MESSAGE, "max_length": HASH_MESSAGE},
        widget=forms.TextInput(
            attrs={"placeholder": "0x…", "autocomplete": "off", "spellcheck": "false"}
        ),
    )

    def clean_tx_hash(self) -> str:
        value = self.cleaned_data["tx_hash"]
        if not TX_HASH_PATTERN.fullmatch(value):
            raise ValidationError(HASH_MESSAGE, code="invalid")
        return value.lower()


class TakeBackForm(forms.Form):
    reason = forms.CharField(
        label=_("Why the hash is taken back"),
        max_length=500,
        error_messages={
            "required": _("Say why the hash is taken back: it is kept in the history."),
            "max_length": _(
                "Keep the reason to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
