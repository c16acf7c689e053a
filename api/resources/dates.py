"""`created_after` / `created_before`: the lists' date filters (UTC days, YYYY-MM-DD).

`created_after=D` keeps what was created from the start of day D (UTC, included);
`created_before=D` what was created before day D began (excluded). So
`created_after=2030-01-01&created_before=2030-02-01` is January 2030. A bad date, or a range
that ends before it starts, is a 400 problem naming the parameter.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError

CREATED_AFTER = "created_after"
CREATED_BEFORE = "created_before"
# ASCII digits only: date.fromisoformat alone would take other scripts' digits on some inputs.
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INVALID = _("Enter a date as YYYY-MM-DD, for example 2030-01-31.")
_EMPTY_RANGE = _("Choose a day after created_after: this range holds nothing.")


@dataclass(frozen=True, slots=True)
class CreatedRange:
    after: datetime | None = None
    before: datetime | None = None


def _day(value: str | None) -> date | None | str:
    if value is None:
        return None
    if not _ISO_DATE.fullmatch(value):
        return "invalid"
    try:
        return date.fromisoformat(value)
    except ValueError:
        return "invalid"


def created_range(query_params) -> CreatedRange:
    """The range a list's query asks for; ValidationError (a 400 problem) for a bad one."""
    days = {name: _day(query_params.get(name)) for name in (CREATED_AFTER, CREATED_BEFORE)}
    errors = {name: [str(_INVALID)] for name, day in days.items() if day == "invalid"}
    if errors:
        raise ValidationError(errors)
    after, before = days[CREATED_AFTER], days[CREATED_BEFORE]
    if after is not None and before is not None and before <= after:
        raise ValidationError({CREATED_BEFORE: [str(_EMPTY_RANGE)]})
    return CreatedRange(
        after=datetime.combine(after, time.min, tzinfo=UTC) if after else None,
        before=datetime.combine(before, time.min, tzinfo=UTC) if before else None,
    )


def _parameter(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        {"type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
        OpenApiParameter.QUERY,
        description=description,
    )


CREATED_PARAMETERS = [
    _parameter(CREATED_AFTER, "Only what was created on this UTC day or later (YYYY-MM-DD)."),
    _parameter(
        CREATED_BEFORE,
        "Only what was created before this UTC day began (YYYY-MM-DD); after created_after.",
    ),
]
