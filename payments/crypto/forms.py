"""Forms of the crypto payments: they parse and validate; services do the work. The customer's
(top-up, declaration) and the operators' (every action on a payment carries its reason)."""

from decimal import Decimal

from django import forms
from django.conf import settings
from django.core.validators import RegexValidator
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIDecimalField
from rental.money import usd

from ..chain.forms import StablecoinForm

MAX_TOP_UP_USD = Decimal("100000.00")
TX_HASH_MESSAGE = _(
    "A transaction hash is 0x followed by 64 hexadecimal characters (0-9, a-f). "
    "Leave the field empty if you do not have it."
)




class TopUpForm(StablecoinForm):
    amount = ASCIIDecimalField(
        label=_("Amount (USD)"),
        max_digits=None,
        decimal_places=2,
        max_value=MAX_TOP_UP_USD,
        error_messages={
            "required": _("Enter the amount in USD."),
            "invalid": _("Enter the amount as a number, such as 25.00."),
            "max_value": _("A top-up is at most 100,000.00 USD."),
            "max_decimal_places": _("Enter at most two decimal places (cents)."),
        },
    )

    field_order = ("amount", "stablecoin")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Read when the form is built: the minimum is a setting and may change.
        self.minimum = usd(settings.TOP_UP_MINIMUM_USD)
        amount = self.fields["amount"]
        amount.widget.attrs.update({"min": str(self.minimum), "max": str(MAX_TOP_UP_USD)})
        amount.help_text = _("From %(minimum)s to 100,000.00 USD, with at most two decimals.") % {
            "minimum": self.minimum
        }
        self.minimum_message = _("The minimum top-up is %(minimum)s USD.") % {
            "minimum": self.minimum
        }
        amount.error_messages["negative"] = self.minimum_message

    def clean_amount(self) -> Decimal:
        amount = self.cleaned_data["amount"]
        if amount < self.minimum:
            raise forms.ValidationError(self.minimum_message, code="min_value")
        return usd(amount)


class DeclareForm(forms.Form):
    """The customer's "I have paid", with the transaction hash when they have it."""

    tx_hash = forms.CharField(
        label=_("Transaction hash (optional)"),
        required=False,
        max_length=66,
        strip=True,
        validators=[RegexValidator(r"^0x[0-9a-fA-F]{64}\Z", TX_HASH_MESSAGE, code="invalid")],
        error_messages={"max_length": TX_HASH_MESSAGE},
        widget=forms.TextInput(
            attrs={"placeholder": "0x…", "autocomplete": "off", "spellcheck": "false"}
        ),
    )

    def clean_tx_hash(self) -> str:
        return self.cleaned_data["tx_hash"].lower()

REASON_MAX_LENGTH = 500


class ReviewActionForm(forms.Form):
    reason = forms.CharField(
        label=_("Reason"),
        max_length=REASON_MAX_LENGTH,
        help_text=_("Kept in the payment's history with your name."),
        widget=forms.Textarea(attrs={"rows": 2}),
        error_messages={
            "required": _("Give the reason for this action: it is kept in the payment's history."),
            "max_length": _(
                "Keep the reason to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
