"""Finance forms: they parse and validate; the services and selectors do the work."""

import re
from datetime import UTC, date, timedelta
from decimal import Decimal
from uuid import uuid4

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.fields import ASCIIDecimalField, ascii_int
from accounts.mfa import StepUpFormMixin
from accounts.models import User
from rental.money import usd

from ..models import TransactionKind
from .selectors import JournalFilters
from .services import MAX_PERIOD_DAYS

# The largest adjustment finance may post in one go; bigger corrections are split on purpose.
MAX_ADJUSTMENT_USD = Decimal("1000000.00")
# Database ids are 64-bit; a longer number is refused here rather than by the database.
MAX_ID = 2**63 - 1
EARLIEST_DATE = date(2000, 1, 1)
LATEST_DATE = date(2999, 12, 31)

DATE_MESSAGE = _("Enter a date as YYYY-MM-DD, between 2000 and 2999.")
DATE_ORDER_MESSAGE = _("The end date must be on or after the start date.")


def _date_field(label) -> forms.DateField:
    return forms.DateField(
        label=label,
        required=False,
        widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        validators=[MinValueValidator(EARLIEST_DATE), MaxValueValidator(LATEST_DATE)],
        error_messages={
            "invalid": DATE_MESSAGE,
            "min_value": DATE_MESSAGE,
            "max_value": DATE_MESSAGE,
            "required": _("Enter a date."),
        },
    )


def utc_today() -> date:
    return timezone.now().astimezone(UTC).date()


class BalanceSearchForm(forms.Form):
    email = forms.CharField(
        label=_("Email contains"),
        required=False,
        max_length=254,
        error_messages={"max_length": _("An email address has at most 254 characters.")},
    )


ORDER_MESSAGE = _("Enter the order's number, such as 12 or GR-000012.")
CUSTOMER_MESSAGE = _("Enter the customer's full email address or their numeric id.")


class JournalFilterForm(forms.Form):
    """Every filter is optional; an empty form lists the whole journal."""

    date_from = _date_field(_("From (UTC)"))
    date_to = _date_field(_("To (UTC), included"))
    kind = forms.ChoiceField(
        label=_("Kind"),
        required=False,
        choices=[("", _("All kinds")), *TransactionKind.choices],
        error_messages={"invalid_choice": _("Choose a kind from the list.")},
    )
    customer = forms.CharField(
        label=_("Customer (email or id)"),
        required=False,
        max_length=254,
        error_messages={"max_length": CUSTOMER_MESSAGE},
    )
    order = forms.CharField(
        label=_("Order"),
        required=False,
        max_length=30,
        error_messages={"max_length": ORDER_MESSAGE},
    )

    def clean_customer(self) -> str | int | None:
        value = self.cleaned_data["customer"].strip()
        if not value:
            return None
        if ascii_int(value) is not None:
            return _id(value, CUSTOMER_MESSAGE)
        try:
            forms.EmailField().clean(value)
        except ValidationError:
            raise ValidationError(CUSTOMER_MESSAGE, code="invalid") from None
        return value

    def clean_order(self) -> int | None:
        value = re.sub(r"^gr-", "", self.cleaned_data["order"].strip(), flags=re.IGNORECASE)
        if not value:
            return None
        return _id(value, ORDER_MESSAGE)

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end and start > end:
            self.add_error("date_to", DATE_ORDER_MESSAGE)
        return cleaned

    def filters(self) -> JournalFilters:
        data = self.cleaned_data
        customer = data["customer"]
        return JournalFilters(
            date_from=data["date_from"],
            date_to=data["date_to"],
            kind=data["kind"],
            customer_id=customer if isinstance(customer, int) else None,
            customer_email=customer if isinstance(customer, str) else "",
            order_id=data["order"],
        )


def _id(digits: str, message) -> int:
    """A database id typed in ASCII digits (accounts/fields.py), else the message."""
    number = ascii_int(digits)
    if number is None or not 1 <= number <= MAX_ID:
        raise ValidationError(message, code="invalid")
    return number


class AdjustmentDirection(models.TextChoices):
    CREDIT = "credit", _("Credit: add to the customer's balance")
    DEBIT = "debit", _("Debit: take from the customer's balance")


AMOUNT_POSITIVE_MESSAGE = _(
    "Enter an amount greater than zero; the direction says whether it is added or taken."
)
REQUEST_KEY_MESSAGE = _(
    "This form is incomplete or was altered. Reload the page and fill it in again."
)


class AdjustmentForm(StepUpFormMixin, forms.Form):
    """A manual credit or debit of one customer's balance, with its reason.

    The hidden request key is generated when the form is first shown and travels with every
    resubmission, so sending the same form twice posts one adjustment. Above
    FINANCE_STEP_UP_THRESHOLD_USD the acting user confirms with their authenticator code.
    """

    customer_email = forms.EmailField(
        label=_("Customer email"),
        max_length=254,
        error_messages={
            "required": _("Enter the customer's email address."),
            "invalid": _("Enter a valid email address."),
            "max_length": _("An email address has at most 254 characters."),
        },
    )
    direction = forms.ChoiceField(
        label=_("Direction"),
        choices=AdjustmentDirection.choices,
        widget=forms.RadioSelect,
        error_messages={
            "required": _("Choose credit or debit."),
            "invalid_choice": _("Choose credit or debit."),
        },
    )
    amount = ASCIIDecimalField(
        label=_("Amount (USD)"),
        max_digits=None,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=MAX_ADJUSTMENT_USD,
        error_messages={
            "required": _("Enter the amount in USD."),
            "invalid": _("Enter the amount as a number, such as 25.00."),
            "min_value": AMOUNT_POSITIVE_MESSAGE,
            "max_value": _("An adjustment is at most 1,000,000.00 USD."),
            "max_decimal_places": _("Enter at most two decimal places (cents)."),
        },
    )
    reason = forms.CharField(
        label=_("Reason"),
        max_length=500,
        help_text=_("Shown in the journal and on the customer's statement."),
        widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={
            "required": _("Give the reason for this adjustment: it is recorded in the journal."),
            "max_length": _(
                "Keep the reason to %(limit_value)d characters (it has %(show_value)d)."
            ),
        },
    )
    request_key = forms.UUIDField(
        widget=forms.HiddenInput,
        error_messages={"required": REQUEST_KEY_MESSAGE, "invalid": REQUEST_KEY_MESSAGE},
    )

    def __init__(self, *args, actor: User, **kwargs):
        self.step_up_threshold = usd(settings.FINANCE_STEP_UP_THRESHOLD_USD)
        super().__init__(*args, step_up_user=actor, **kwargs)
        self.actor = actor
        self.customer: User | None = None
        if not self.is_bound:
            self.initial.setdefault("request_key", uuid4())

    def full_clean(self):
        super().full_clean()
        if self.is_bound and "request_key" in self._errors:
            # Shown again with a fresh key: the damaged one could never be sent successfully.
            self.data = self.data.copy()
            self.data[self.add_prefix("request_key")] = str(uuid4())

    def clean_customer_email(self) -> str:
        email = self.cleaned_data["customer_email"]
        customer = User.objects.filter(email__iexact=email).first()
        if customer is None:
            raise ValidationError(_("No customer has this email address."), code="unknown")
        if customer.pk == self.actor.pk:
            raise ValidationError(
                _("You cannot adjust your own balance; ask another member of finance."),
                code="own_balance",
            )
        self.customer = customer
        return customer.email

    def clean_amount(self) -> Decimal:
        return usd(self.cleaned_data["amount"])

    def step_up_required(self) -> bool:
        """Above the threshold, either direction. While the form is being cleaned the amount is
        the validated one; before that (is the field required?) the amount as typed."""
        if not self.is_bound:
            return False
        amount = getattr(self, "cleaned_data", {}).get("amount")
        if amount is None:
            try:
                amount = Decimal(str(self.data.get(self.add_prefix("amount"), "")).strip())
            except ArithmeticError:
                return False  # the amount itself is refused: nothing is posted
        return amount.is_finite() and amount > self.step_up_threshold

    @property
    def is_credit(self) -> bool:
        return self.cleaned_data["direction"] == AdjustmentDirection.CREDIT

    @property
    def signed_amount(self) -> Decimal:
        amount = self.cleaned_data["amount"]
        return amount if self.is_credit else -amount


class ReconciliationForm(forms.Form):
    """The period to reconcile: whole UTC days, both included, at most MAX_PERIOD_DAYS."""

    DEFAULT_DAYS = 30

    date_from = _date_field(_("From (UTC)"))
    date_to = _date_field(_("To (UTC), included"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("date_from", "date_to"):
            self.fields[name].required = True
        if not self.is_bound:
            today = utc_today()
            self.initial.setdefault("date_from", today - timedelta(days=self.DEFAULT_DAYS - 1))
            self.initial.setdefault("date_to", today)

    def clean(self):
        cleaned = super().clean()
        start, end = cleaned.get("date_from"), cleaned.get("date_to")
        if start and end:
            if start > end:
                self.add_error("date_to", DATE_ORDER_MESSAGE)
            elif (end - start).days + 1 > MAX_PERIOD_DAYS:
                self.add_error(
                    "date_to",
                    ValidationError(
                        _("A reconciliation covers at most %(days)d days."),
                        code="too_long",
                        params={"days": MAX_PERIOD_DAYS},
                    ),
                )
        return cleaned
