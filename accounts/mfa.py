"""The second factor of the people who may move money (allauth's MFA: TOTP and recovery codes).

Staff pages open only for users with an active TOTP authenticator (`accounts.roles`); actions
that move money above a threshold ask for a code again through `StepUpFormMixin`. Codes are
checked by allauth's own classes, so a TOTP code is accepted once in its window and a recovery
code once ever."""

from allauth.core import context
from allauth.mfa.base.internal.flows import check_rate_limit
from allauth.mfa.models import Authenticator
from django import forms
from django.utils.translation import gettext_lazy as _

STEP_UP_CODE_INVALID = _(
    "That code is not valid. Enter the current 6-digit code from your authenticator app."
)


def has_totp(user) -> bool:
    """Whether `user` has an active TOTP authenticator. Read along with the session's user by
    `accounts.auth_backends` (no query of its own); otherwise one query per user object."""
    if not user.is_authenticated:
        return False
    if not hasattr(user, "_has_totp"):
        user._has_totp = Authenticator.objects.filter(
            user_id=user.pk, type=Authenticator.Type.TOTP
        ).exists()
    return user._has_totp


def remember_totp(user, enrolled: bool) -> None:
    user._has_totp = bool(enrolled)


def verify_step_up_code(user, code: str) -> bool:
    """A current TOTP code of `user` (each accepted once within its window) or one of their
    unused recovery codes (used up by this call). WebAuthn keys cannot check typed codes."""
    code = (code or "").strip()
    if not code or user is None or not user.is_authenticated:
        return False
    authenticators = Authenticator.objects.filter(
        user_id=user.pk, type__in=(Authenticator.Type.TOTP, Authenticator.Type.RECOVERY_CODES)
    )
    for authenticator in authenticators:
        if authenticator.wrap().validate_code(code):
            authenticator.record_usage()
            return True
    return False


def step_up_code_field() -> forms.CharField:
    return forms.CharField(
        label=_("Authenticator code"),
        help_text=_(
            "Enter the current code from your authenticator app (or a recovery code) to confirm."
        ),
        max_length=64,
        error_messages={
            "required": _("Enter the current code from your authenticator app to confirm."),
            "max_length": STEP_UP_CODE_INVALID,
        },
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class StepUpFormMixin:
    """Asks for the code again. Put it before the form class in the bases; the form takes a
    `step_up_user` keyword (the person acting) and gets a `mfa_code` field, last. Override
    `step_up_required` to ask only for some actions (e.g. above an amount, read from
    `self.data` or `self.cleaned_data`); when it answers False the field is optional and never
    checked. The field comes last, so the code is checked only once every other field is
    valid."""

    def __init__(self, *args, step_up_user=None, **kwargs):
        self.step_up_user = step_up_user
        super().__init__(*args, **kwargs)
        self.fields["mfa_code"] = step_up_code_field()
        self.fields["mfa_code"].required = self.step_up_required()

    def step_up_required(self) -> bool:
        return True

    def clean_mfa_code(self) -> str:
        code = self.cleaned_data.get("mfa_code", "")
        if not self.step_up_required():
            return ""
        if self._errors:
            # Another field is wrong, so nothing happens anyway: keep the code unused (a TOTP
            # code is accepted once, a recovery code once ever) for the corrected form.
            return code
        # allauth's limit on code attempts per user, where a request is at hand (its middleware
        # sets it): after too many wrong codes even a right one waits.
        clear_rate_limit = None
        if context.request is not None and self.step_up_user is not None:
            clear_rate_limit = check_rate_limit(self.step_up_user)
        if not verify_step_up_code(self.step_up_user, code):
            raise forms.ValidationError(STEP_UP_CODE_INVALID, "invalid_mfa_code")
        if clear_rate_limit is not None:
            clear_rate_limit()
        return code
