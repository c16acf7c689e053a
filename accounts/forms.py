from allauth.account.forms import SignupForm as AllauthSignupForm
from allauth.core import context, ratelimit
from django import forms
from django.contrib.auth.hashers import make_password
from django.utils.translation import gettext_lazy as _

from .ssh_keys import SshPublicKey, parse_ssh_public_key


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

    def full_clean(self):
        """Only sign-ups sent back with errors count against the limit ("signup_failed" in
        ACCOUNT_RATE_LIMITS): new customers signing up one after another are never stopped."""
        request = context.request
        counted = self.is_bound and request is not None and request.method == "POST"
        limited = counted and not ratelimit.consume(request, action="signup_failed", dry_run=True)
        super().full_clean()
        if limited:
            self.add_error(None, _("Too many failed sign-up attempts. Try again later."))
        elif counted and self._errors:
            ratelimit.consume(request, action="signup_failed")

    def try_save(self, request):
        """allauth's enumeration prevention: a taken address creates no account, gets the same
        code page as a new one, and its owner the "account already exists" email."""
        if self.account_already_exists:
            # Takes as long as creating the account would, password hashing included.
            make_password(self.cleaned_data.get("password1"))
        return super().try_save(request)


class SshKeyForm(forms.Form):
    """One SSH public key; cleaned into an SshPublicKey, or None when left empty (if allowed)."""

    ssh_public_key = forms.CharField(
        label=_("SSH public key"),
        strip=True,
        error_messages={"required": _("Paste your SSH public key.")},
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "spellcheck": "false",
                "autocomplete": "off",
                "autocapitalize": "off",
            }
        ),
        help_text=_(
            "Paste the content of your .pub file, for example ~/.ssh/id_ed25519.pub. "
            "No key yet? Make one with: ssh-keygen -t ed25519"
        ),
    )

    def __init__(self, *args, required: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["ssh_public_key"].required = required

    def clean_ssh_public_key(self) -> SshPublicKey | None:
        text = self.cleaned_data["ssh_public_key"]
        if not text:
            return None
        return parse_ssh_public_key(text)


class BillingDetailsForm(forms.Form):
    """The optional details a customer may want on receipts: none is required, and no
    identity document is ever asked for."""

    company_name = forms.CharField(
        label=_("Company name"),
        required=False,
        max_length=200,
        widget=forms.TextInput(attrs={"autocomplete": "organization"}),
    )
    vat_number = forms.CharField(
        label=_("VAT number"),
        required=False,
        max_length=40,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    address = forms.CharField(
        label=_("Billing address"),
        required=False,
        max_length=500,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "street-address"}),
    )
