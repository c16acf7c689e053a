"""Operators' forms: every action on a payment or a transfer carries its reason."""

from django import forms
from django.utils.translation import gettext_lazy as _

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
