"""List filters from the query string: `status` (one of a list), `created_after` and
`created_before` (ISO 8601), `order` (an id). A value that is not allowed is a 400 problem
naming the parameter and what it accepts; nothing is silently ignored.

The schema shows the same parameters (`status_parameter`, `DATE_PARAMETERS`, ...), so a
client reads there what the server accepts.
"""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from accounts.fields import ascii_int
from api.problems import validation_problem

# YYYY-MM-DD, or a date and time with its offset ("Z" or "+02:00"); ASCII digits only
# (Python's parsers would also read other scripts' digits).
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
    r"(Z|[+-][0-9]{2}:?[0-9]{2})"
)
DATE_FORMATS = "YYYY-MM-DD, or YYYY-MM-DDTHH:MM:SS with its offset (Z or +HH:MM)"


@dataclass(frozen=True, slots=True)
class ListFilters:
    status: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    order_id: int | None = None


def _bad(name: str, message: str):
    return validation_problem([{"field": name, "message": message}])


def parse_status(params, allowed) -> str | None:
    value = params.get("status")
    if value is None:
        return None
    allowed = list(allowed)
    if value not in allowed:
        raise _bad(
            "status",
            _("Unknown status “%(value)s”. Use one of: %(allowed)s.")
            % {"value": value[:50], "allowed": ", ".join(allowed)},
        )
    return value


def parse_when(params, name: str) -> datetime | None:
    """An aware datetime; a date alone is its first instant in UTC."""
    value = params.get(name)
    if value is None:
        return None
    message = _("Give %(name)s as %(formats)s.") % {"name": name, "formats": DATE_FORMATS}
    try:
        if _DATE.fullmatch(value):
            return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
        if _DATETIME.fullmatch(value):
            parsed = parse_datetime(value)
            if parsed is not None and parsed.tzinfo is not None:
                return parsed
    except ValueError:  # 2030-02-30, 25:00...
        pass
    raise _bad(name, message)


def parse_order(params) -> int | None:
    value = params.get("order")
    if value is None:
        return None
    order_id = ascii_int(value)
    if order_id is None or order_id < 1 or order_id > 2**63 - 1:
        raise _bad("order", _("Give order as the id of one of your orders (digits 0 to 9)."))
    return order_id


def list_filters(request, *, statuses=None, order: bool = False) -> ListFilters:
    """The filters of a list request (400 problem for a bad one); the dates must be in
    order."""
    params = request.query_params
    after = parse_when(params, "created_after")
    before = parse_when(params, "created_before")
    if after is not None and before is not None and after >= before:
        raise _bad("created_before", _("created_before must be later than created_after."))
    return ListFilters(
        status=parse_status(params, statuses) if statuses is not None else None,
        created_after=after,
        created_before=before,
        order_id=parse_order(params) if order else None,
    )


def created_between(queryset, filters: ListFilters, field: str = "created_at"):
    if filters.created_after is not None:
        queryset = queryset.filter(**{f"{field}__gte": filters.created_after})
    if filters.created_before is not None:
        queryset = queryset.filter(**{f"{field}__lt": filters.created_before})
    return queryset


# ------------------------------------------------------------------------ the schema


def status_parameter(choices, description: str) -> OpenApiParameter:
    return OpenApiParameter(
        "status",
        OpenApiTypes.STR,
        enum=[value for value, _label in choices],
        description=description,
    )


DATE_PARAMETERS = [
    OpenApiParameter(
        "created_after",
        OpenApiTypes.STR,
        description=f"Created at or after this instant: {DATE_FORMATS} (a date is 00:00 UTC).",
    ),
    OpenApiParameter(
        "created_before",
        OpenApiTypes.STR,
        description=f"Created before this instant: {DATE_FORMATS} (a date is 00:00 UTC).",
    ),
]

ORDER_PARAMETER = OpenApiParameter(
    "order", OpenApiTypes.INT64, description="Only those of this order (its id)."
)
