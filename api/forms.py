import re
from datetime import UTC, datetime, time, timedelta

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .models import Scope

# The furthest expiry a token may have.
MAX_EXPIRY_DAYS = 366
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class ASCIIDateField(forms.DateField):
    """A date typed as YYYY-MM-DD (what the browser's date input sends) in ASCII digits only:
    Python's date parsing would also read other scripts' digits (accounts/fields.py)."""

    default_error_messages = {"invalid": _("Enter a date as YYYY-MM-DD, for example 2030-01-31.")}

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if not isinstance(value, str) or not _ISO_DATE.fullmatch(value.strip()):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value.strip())


class ApiTokenForm(forms.Form):
    name = forms.CharField(
        label=_("Name"),
        max_length=100,
        help_text=_("What the token is for, such as “CI pipeline” or “laptop script”."),
        error_messages={
            "required": _("Give the token a name."),
            "max_length": _("Keep the name to %(limit_value)d characters (it has %(show_value)d)."),
        },
    )
    scopes = forms.MultipleChoiceField(
        label=_("Scopes"),
        choices=Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": _("Choose at least one scope."),
            "invalid_choice": _("Choose scopes from the list: read, order, pay, withdraw, tokens."),
            "invalid_list": _("Choose scopes from the list: read, order, pay, withdraw, tokens."),
        },
    )
    expires_on = ASCIIDateField(
        label=_("Expires after (optional)"),
        required=False,
        help_text=_("The token stops working at the end of this day (UTC). Empty: no expiry."),
        widget=forms.DateInput(attrs={"type": "date"}),
    )

    def clean_expires_on(self):
        day = self.cleaned_data.get("expires_on")
        if day is None:
            return None
        today = timezone.now().date()
        if day < today:
            raise ValidationError(_("Choose today or a later day."), code="past")
        if day > today + timedelta(days=MAX_EXPIRY_DAYS):
            raise ValidationError(
                _("Choose a day within %(days)d days.") % {"days": MAX_EXPIRY_DAYS}, code="far"
            )
        return day

    def expires_at(self) -> datetime | None:
        day = self.cleaned_data.get("expires_on")
        if day is None:
            return None
        return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
