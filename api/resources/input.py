"""Request bodies, checked by the pages' own forms: the API has no second copy of a rule.

A JSON body is first checked for its shape (an object, known fields, JSON types as the
schema declares them: no text where a number goes, no list where text goes), then bound to
the page's form, whose messages become the problem's field errors.
"""

from django import forms
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

NOT_AN_OBJECT = _("Send a JSON object with the fields of this request.")
UNKNOWN_FIELD = _("This field is not part of this request.")
EXPECTED_TEXT = _("Send this field as a JSON string.")
EXPECTED_NUMBER = _("Send this field as a whole number (or a string of the digits 0 to 9).")
EXPECTED_AMOUNT = _('Send this amount as a JSON string, such as "25.00".')
EXPECTED_BOOLEAN = _("Send this field as true or false.")
EXPECTED_ID = _("Send this field as a whole number, or null.")
EXPECTED_LIST = _("Send this field as a JSON list of strings.")
# As api.problems.form_errors names them: the request as a whole.
NON_FIELD = ""


# Not a value of any JSON type: what a refused null is checked as, for its type's message.
_NOT_NULL = object()


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_error(field: serializers.Field, value) -> str | None:
    """What is wrong with the JSON type of `value` for `field`, or None. A null for a required
    or nullable field is left out, as a missing field is (the form then says what it needs); a
    null for an optional field the schema does not declare nullable is refused, as the schema
    says, rather than read as "left out" (which PATCH account/billing/ read as "empty it")."""
    if value is None:
        if field.allow_null or field.required:
            return None
        return _type_error(field, _NOT_NULL)
    if isinstance(field, serializers.BooleanField):
        return None if isinstance(value, bool) else EXPECTED_BOOLEAN
    if isinstance(field, serializers.ListField | serializers.MultipleChoiceField):
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return None
        return EXPECTED_LIST
    numeric_choices = isinstance(field, serializers.ChoiceField) and all(
        _is_int(choice) for choice in field.choices
    )
    if isinstance(field, serializers.IntegerField) or numeric_choices:
        if _is_int(value) or isinstance(value, str):
            return None
        return EXPECTED_ID if field.allow_null else EXPECTED_NUMBER
    if isinstance(field, serializers.DecimalField):
        return None if isinstance(value, str) else EXPECTED_AMOUNT
    return None if isinstance(value, str) else EXPECTED_TEXT


def _errors_of(form: forms.Form, names: dict[str, str]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name, messages in form.errors.items():
        key = NON_FIELD if name == "__all__" else names.get(name, name)
        errors.setdefault(key, []).extend(str(message) for message in messages)
    return errors


def bind(request_serializer: type[serializers.Serializer], data, form_factory, *, fields=None):
    """The valid form for a JSON body, or ValidationError (a 400 problem with field errors).

    `request_serializer` declares the body (it is what the schema shows); `form_factory(data)`
    builds the page's form from the body (nulls left out); `fields` names the API field that
    answers for a form field whose name differs.
    """
    if not isinstance(data, dict):
        raise ValidationError({NON_FIELD: [str(NOT_AN_OBJECT)]})
    declared = request_serializer().fields
    errors: dict[str, list[str]] = {}
    for key, value in data.items():
        field = declared.get(key)
        if field is None or field.read_only:
            errors[key] = [str(UNKNOWN_FIELD)]
        elif (problem := _type_error(field, value)) is not None:
            errors[key] = [str(problem)]
    if errors:
        raise ValidationError(errors)
    form = form_factory({key: value for key, value in data.items() if value is not None})
    if not form.is_valid():
        raise ValidationError(_errors_of(form, fields or {}))
    return form


def stablecoin(data: dict) -> str:
    """The page's stablecoin choice ("network:asset") for an API body's network and asset."""
    network, asset = data.get("network"), data.get("asset")
    return f"{network}:{asset}" if network and asset else ""
