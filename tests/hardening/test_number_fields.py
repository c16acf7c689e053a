"""The two number fields every form uses, and a check that every form does use them."""

import importlib
import inspect
from decimal import Decimal
from pathlib import Path

import pytest
from django import forms
from django.conf import settings

from accounts.fields import ASCIIDecimalField, ASCIIIntegerField, ascii_int

WHOLE = [("0", 0), ("5", 5), ("05", 5), ("10", 10), ("9" * 30, int("9" * 30))]
NOT_WHOLE = ["٥", "５", "1_0", "+5", " 5", "5 ", "5.0", "5.", "1e1", "0x5", "²", "", "-", "9" * 31]
AMOUNTS = [("25", "25"), ("25.5", "25.5"), ("25.50", "25.50"), (".5", "0.5"), ("5.", "5")]
NOT_AMOUNTS = ["1e3", "١٠", "１０", "10,00", "1_000", "+10", " 10", "NaN", "Infinity", "inf", "."]


@pytest.mark.parametrize(("typed", "number"), WHOLE)
def test_whole_numbers_in_ascii_digits_are_read(typed, number):
    assert ASCIIIntegerField().clean(typed) == number
    assert ascii_int(typed) == number


@pytest.mark.parametrize("typed", NOT_WHOLE)
def test_anything_else_is_not_a_whole_number(typed):
    field = ASCIIIntegerField(required=False)
    if typed == "":
        assert field.clean(typed) is None
    else:
        with pytest.raises(forms.ValidationError) as refused:
            field.clean(typed)
        assert refused.value.messages == ["Enter a whole number, with the digits 0 to 9 only."]
    assert ascii_int(typed) is None


def test_a_minus_sign_only_where_negatives_are_allowed():
    assert ASCIIIntegerField(allow_negative=True).clean("-12") == -12
    with pytest.raises(forms.ValidationError) as refused:
        ASCIIIntegerField().clean("-12")
    assert refused.value.messages == ["Enter the number without a minus sign."]
    with pytest.raises(forms.ValidationError) as below:
        ASCIIIntegerField(min_value=1).clean("-0")
    assert below.value.messages == ["Ensure this value is greater than or equal to 1."]
    assert ascii_int("-12") is None


@pytest.mark.parametrize(("typed", "amount"), AMOUNTS)
def test_amounts_in_ascii_digits_and_a_point_are_read(typed, amount):
    assert ASCIIDecimalField(decimal_places=2).clean(typed) == Decimal(amount)


@pytest.mark.parametrize("typed", NOT_AMOUNTS)
def test_anything_else_is_not_an_amount(typed):
    with pytest.raises(forms.ValidationError) as refused:
        ASCIIDecimalField(decimal_places=2).clean(typed)
    assert [error.code for error in refused.value.error_list] == ["invalid"]


def test_a_negative_amount_only_where_allowed():
    assert ASCIIDecimalField(allow_negative=True).clean("-2.50") == Decimal("-2.50")
    for typed in ("-2.50", "-0"):
        with pytest.raises(forms.ValidationError) as refused:
            ASCIIDecimalField().clean(typed)
        assert refused.value.messages == ["Enter the amount without a minus sign."]


def _project_forms():
    for app in ("accounts", "rental", "payments", "pilot", "api", "monitoring"):
        root = Path(settings.BASE_DIR)
        # forms*.py at any depth: payments keeps a forms module per room (payments/crypto/...).
        for path in sorted((root / app).rglob("forms*.py")):
            dotted = ".".join(path.relative_to(root).with_suffix("").parts)
            module = importlib.import_module(dotted)
            for name, form in inspect.getmembers(module, inspect.isclass):
                if issubclass(form, forms.BaseForm) and form.__module__ == module.__name__:
                    yield f"{module.__name__}.{name}", form


def test_every_number_field_of_every_form_reads_ascii_digits_only():
    forms_seen = dict(_project_forms())
    assert "rental.forms.OrderConfigurationForm" in forms_seen
    assert "payments.finance.forms.AdjustmentForm" in forms_seen
    numbers = {}
    for name, form in forms_seen.items():
        for field_name, field in form.base_fields.items():
            if isinstance(field, forms.IntegerField | forms.DecimalField | forms.FloatField):
                numbers[f"{name}.{field_name}"] = type(field)
    assert numbers  # lots, cards, ports, amounts...
    wrong = {
        field: kind.__name__
        for field, kind in numbers.items()
        if not issubclass(kind, ASCIIIntegerField | ASCIIDecimalField)
    }
    assert wrong == {}
