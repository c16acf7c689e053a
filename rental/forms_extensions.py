"""The customer's choice of an extension: only the duration comes from the request."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .models import Duration

DURATION_MESSAGE = _("Choose an extension of 3, 7 or 30 days.")


class ExtensionForm(forms.Form):
    duration_days = forms.TypedChoiceField(
        label=_("Extend by"),
        choices=Duration.choices,
        coerce=int,
        widget=forms.RadioSelect,
        error_messages={"required": DURATION_MESSAGE, "invalid_choice": DURATION_MESSAGE},
    )
