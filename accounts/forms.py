from allauth.account.forms import SignupForm as AllauthSignupForm
from django import forms
from django.utils.translation import gettext_lazy as _


class SignupForm(AllauthSignupForm):
    """First name, last name, email and password: nothing else is ever asked (no KYC)."""

    first_name = forms.CharField(
        label=_("First name"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "given-name"}),
    )
    last_name = forms.CharField(
        label=_("Last name"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "family-name"}),
    )

    field_order = ["first_name", "last_name", "email", "password1", "password2"]

    def clean_first_name(self) -> str:
        return self._clean_name("first_name")

    def clean_last_name(self) -> str:
        return self._clean_name("last_name")

    def _clean_name(self, field: str) -> str:
        value = self.cleaned_data[field].strip()
        if not value:
            raise forms.ValidationError(_("This field is required."), code="required")
        return value
