"""The operator's form to end an order early with its refund."""

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIDecimalField
from rental.refunds import EarlyEndCheck

REASON_MAX_LENGTH = 500
TAMPERED_MESSAGE = _(
    "This form is incomplete or was altered. Reload the page and fill it in again."
)


class EndEarlyForm(forms.Form):
    """The reason (shown to the customer), the operator's statement that the host failed when
    the case needs it, and the refund the page showed (hidden), which the service checks."""

    reason = forms.CharField(
        label=_("Reason"),
        max_length=REASON_MAX_LENGTH,
        help_text=_("Shown to the customer on the order page and in the email."),
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "required": _("Give the reason for ending this order early: the customer reads it."),
            "max_length": _(
                "Keep the reason to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
    host_failed = forms.BooleanField(
        label=_("I confirm that the host of this order failed."),
        required=False,
    )
    expected_amount = ASCIIDecimalField(
        widget=forms.HiddenInput,
        max_digits=14,
        decimal_places=2,
        min_value=Decimal("0.00"),
        error_messages={
            "required": TAMPERED_MESSAGE,
            "invalid": TAMPERED_MESSAGE,
            "negative": TAMPERED_MESSAGE,
            "min_value": TAMPERED_MESSAGE,
            "max_digits": TAMPERED_MESSAGE,
            "max_decimal_places": TAMPERED_MESSAGE,
            "max_whole_digits": TAMPERED_MESSAGE,
        },
    )

    def __init__(self, *args, check: EarlyEndCheck, **kwargs):
        super().__init__(*args, **kwargs)
        self.check = check
        if check.quote is not None:
            self.initial.setdefault("expected_amount", check.quote.amount)
        if not check.needs_host_statement:
            del self.fields["host_failed"]

    def clean(self):
        cleaned = super().clean()
        if self.check.refusal:
            raise ValidationError(self.check.refusal, code="not_eligible")
        if self.check.needs_host_statement and not cleaned.get("host_failed"):
            self.add_error(
                "host_failed",
                ValidationError(
                    _(
                        "An active or provisioning order that has not waited for its cards "
                        "can be ended early only if its host failed: confirm it here."
                    ),
                    code="host_not_failed",
                ),
            )
        return cleaned

    @property
    def states_host_failed(self) -> bool:
        return bool(self.cleaned_data.get("host_failed"))
