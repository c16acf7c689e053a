"""Numbers typed by people: ASCII digits only, in every form and every view of every app.

Python's int() and Decimal() read far more than digits: other scripts' digits ("٥" is 5,
"１０" is 10), "_" between digits ("1_0" is 10), a sign ("+5"), surrounding spaces, exponents
("1e3" is 1000), and Django's IntegerField also takes "5.0". A number that was not typed as
digits is refused with the field's message instead of being read as some other number.
"""

import re
from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

# Longer numbers are refused before int() or Decimal() spends time on them.
MAX_DIGITS = 30
_INTEGER = re.compile(rf"-?[0-9]{{1,{MAX_DIGITS}}}")
_DECIMAL = re.compile(rf"-?(?=[0-9.]{{1,{MAX_DIGITS + 1}}}\Z)(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def ascii_int(value: object) -> int | None:
    """The whole number `value` spells in ASCII digits (at most MAX_DIGITS, no sign), or None:
    for page numbers and ids read from a query string by hand."""
    if not isinstance(value, str) or not _INTEGER.fullmatch(value) or value.startswith("-"):
        return None
    return int(value)


class _NoMinusSign:
    """Shared by both fields: a minus sign only where `allow_negative`. Elsewhere a field with
    a minimum above zero refuses the number with its "min_value" message (its validator runs
    next), and any other field with its "negative" message."""

    def _refuse_minus(self, text: str) -> None:
        minimum_refuses_it = self.min_value is not None and self.min_value > 0
        if text.startswith("-") and not self.allow_negative and not minimum_refuses_it:
            raise ValidationError(self.error_messages["negative"], code="negative")


class ASCIIIntegerField(_NoMinusSign, forms.IntegerField):
    default_error_messages = {
        "invalid": _("Enter a whole number, with the digits 0 to 9 only."),
        "negative": _("Enter the number without a minus sign."),
    }

    def __init__(self, *, allow_negative: bool = False, **kwargs):
        self.allow_negative = allow_negative
        super().__init__(**kwargs)

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return value  # an initial value, not typed
        text = str(value)
        if not _INTEGER.fullmatch(text):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        self._refuse_minus(text)
        return int(text)


class ASCIIDecimalField(_NoMinusSign, forms.DecimalField):
    """Digits with an optional decimal point: "25", "25.5", "25.50", ".5"."""

    default_error_messages = {
        "invalid": _("Enter a number such as 25.00, with the digits 0 to 9 and a point only."),
        "negative": _("Enter the amount without a minus sign."),
    }

    def __init__(self, *, allow_negative: bool = False, **kwargs):
        self.allow_negative = allow_negative
        super().__init__(**kwargs)

    def to_python(self, value):
        if value in self.empty_values:
            return None
        if isinstance(value, Decimal):
            return value  # an initial value, not typed
        text = str(value)
        if not _DECIMAL.fullmatch(text):
            raise ValidationError(self.error_messages["invalid"], code="invalid")
        self._refuse_minus(text)
        return Decimal(text)
