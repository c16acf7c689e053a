"""Reading a diagnostics report the customer sends back: validate everything, keep nothing bad.

The report comes from a machine we do not control (diagnose.py, or a file the customer picks on
the order page), so it is checked before anything is stored: size, UTF-8, JSON, the schema name
and version, every field's type and length, and that the steps agree with each other and with
the handover comparison. Nothing is cut or coerced: a report that breaks a rule is refused with
a message saying which. The rules are those of kit/diagnostics/files/report.schema.json (which
the kit documents for the customer), written out in plain Python so that the site needs no
JSON Schema library at run time.
"""

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from django.utils.translation import gettext as _

from .handover import PLATFORMS, PROBLEMS, compare

MAX_REPORT_BYTES = 256 * 1024
SCHEMA = "gpu-rental/diagnostics-report"
SCHEMA_VERSION = 1
STEPS = ("interpreter", "driver", "torch", "compute", "extensions", "peak_memory")
STATUSES = ("ok", "failed", "skipped")
LANGUAGES = ("it", "en")

DETAIL_MAX = 4000
ADVICE_MAX = 2000
MESSAGE_MAX = 4000
DATA_KEYS_MAX = 64
DATA_LIST_MAX = 256
DATA_STRING_MAX = 1000
DATA_DEPTH_MAX = 6

_REFERENCE = re.compile(r"^GR-[0-9]{6,}$")
_TIMESTAMP = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$"
)


class ReportRejected(Exception):
    """The report was refused; `message` says why, in the active language, for the customer."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ReportUnreadable(ReportRejected):
    """The upload is not JSON text at all (not UTF-8, not valid JSON, nested too deeply): the
    API answers it as any other unreadable body (its "malformed" problem), not as a report
    that breaks a rule."""


@dataclass(frozen=True, slots=True)
class HostInfo:
    hostname: str
    platform: str
    python: str


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    status: str
    detail: str
    advice: str
    data: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FirstError:
    step: str
    message: str


@dataclass(frozen=True, slots=True)
class Handover:
    expected: dict
    seen: dict
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Report:
    schema_version: int
    order_id: int
    order_reference: str
    generated_at: datetime
    tool_version: str
    language: str
    host: HostInfo
    steps: tuple[Step, ...]
    step_reached: str
    first_error: FirstError | None
    handover: Handover | None

    @property
    def passed(self) -> bool:
        return self.first_error is None

    @property
    def document(self) -> dict:
        """The report as validated (see as_dict), the JSON object the site stores."""
        return self.as_dict()

    def as_dict(self) -> dict:
        """The report as validated, in the contract's shape: what the site stores."""
        return {
            "schema": SCHEMA,
            "schema_version": self.schema_version,
            "order": {"id": self.order_id, "reference": self.order_reference},
            "generated_at": self.generated_at.isoformat(),
            "tool_version": self.tool_version,
            "language": self.language,
            "host": {
                "hostname": self.host.hostname,
                "platform": self.host.platform,
                "python": self.host.python,
            },
            "steps": [
                {
                    "name": step.name,
                    "status": step.status,
                    "detail": step.detail,
                    "advice": step.advice,
                    "data": step.data,
                }
                for step in self.steps
            ],
            "step_reached": self.step_reached,
            "first_error": (
                {"step": self.first_error.step, "message": self.first_error.message}
                if self.first_error
                else None
            ),
            "handover": (
                {
                    "expected": self.handover.expected,
                    "seen": self.handover.seen,
                    "problems": list(self.handover.problems),
                }
                if self.handover
                else None
            ),
        }


# ------------------------------------------------------------------------------ decoding


def _no_constants(name: str):
    raise ReportRejected(_("The report contains a number that is not finite (NaN or Infinity)."))


def _no_repeated_keys(pairs: list) -> dict:
    result = {}
    for key, value in pairs:
        if key in result:
            raise ReportRejected(_("The report repeats the key “%(key)s”.") % {"key": key[:100]})
        result[key] = value
    return result


def _decode(raw: bytes) -> object:
    if not isinstance(raw, bytes | bytearray):
        raise TypeError("parse_report takes bytes")
    if len(raw) > MAX_REPORT_BYTES:
        raise ReportRejected(
            _("The report is larger than %(limit)d KiB.") % {"limit": MAX_REPORT_BYTES // 1024}
        )
    if not raw.strip():
        raise ReportRejected(_("The report is empty."))
    try:
        text = bytes(raw).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ReportUnreadable(_("The report is not UTF-8 text.")) from None
    try:
        return json.loads(text, parse_constant=_no_constants, object_pairs_hook=_no_repeated_keys)
    except json.JSONDecodeError as error:
        raise ReportUnreadable(
            _("The report is not valid JSON (line %(line)d, column %(column)d).")
            % {"line": error.lineno, "column": error.colno}
        ) from None
    except RecursionError:
        raise ReportUnreadable(_("The report is nested too deeply.")) from None


# ------------------------------------------------------------------------------ field checks

_KINDS = {
    "object": lambda: _("%(field)s must be an object."),
    "list": lambda: _("%(field)s must be a list."),
    "string": lambda: _("%(field)s must be text."),
    "integer": lambda: _("%(field)s must be a whole number."),
    "number": lambda: _("%(field)s must be a number."),
    "string_or_null": lambda: _("%(field)s must be text or null."),
    "integer_or_null": lambda: _("%(field)s must be a whole number or null."),
    "number_or_null": lambda: _("%(field)s must be a number or null."),
}


def _wrong_type(path: str, kind: str) -> ReportRejected:
    return ReportRejected(_KINDS[kind]() % {"field": path})


def _object(value, path: str, required: tuple, optional: tuple = ()) -> dict:
    """A JSON object with exactly these keys (`path` "" for the report itself)."""
    if not isinstance(value, dict):
        raise _wrong_type(path, "object")
    prefix = f"{path}." if path else ""
    for key in required:
        if key not in value:
            raise ReportRejected(
                _("The report lacks the field %(field)s.") % {"field": prefix + key}
            )
    for key in value:
        if key not in required and key not in optional:
            raise ReportRejected(
                _("The report has a field this version does not know: %(field)s.")
                % {"field": prefix + str(key)[:100]}
            )
    return value


def _string(value, path: str, limit: int, *, empty_ok: bool = True, null_ok: bool = False):
    if value is None and null_ok:
        return None
    if not isinstance(value, str):
        raise _wrong_type(path, "string_or_null" if null_ok else "string")
    if len(value) > limit:
        raise ReportRejected(
            _("%(field)s is longer than %(limit)d characters.") % {"field": path, "limit": limit}
        )
    if not empty_ok and not value.strip():
        raise ReportRejected(_("%(field)s must not be empty.") % {"field": path})
    return value


def _integer(value, path: str, low: int, high: int, *, null_ok: bool = False):
    if value is None and null_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(path, "integer_or_null" if null_ok else "integer")
    _in_range(value, path, low, high)
    return value


def _number(value, path: str, low: float, high: float, *, null_ok: bool = False):
    if value is None and null_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _wrong_type(path, "number_or_null" if null_ok else "number")
    _in_range(value, path, low, high)
    return value


def _in_range(value, path: str, low, high) -> None:
    if not low <= value <= high:
        raise ReportRejected(
            _("%(field)s must be between %(low)s and %(high)s.")
            % {"field": path, "low": low, "high": high}
        )


def _choice(value, path: str, allowed: tuple, *, null_ok: bool = False):
    if value is None and null_ok:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise ReportRejected(
            _("%(field)s must be one of: %(allowed)s.")
            % {"field": path, "allowed": ", ".join(allowed)}
        )
    return value


def _data(value, path: str, depth: int = 0):
    """A step's free-form data: plain JSON within the limits the schema documents."""
    if depth > DATA_DEPTH_MAX:
        raise ReportRejected(_("%(field)s is nested too deeply.") % {"field": path})
    if isinstance(value, dict):
        if len(value) > DATA_KEYS_MAX:
            raise ReportRejected(_("%(field)s has too many entries.") % {"field": path})
        for key, item in value.items():
            _string(key, f"{path} (key)", 64)
            _data(item, f"{path}.{key}", depth + 1)
    elif isinstance(value, list):
        if len(value) > DATA_LIST_MAX:
            raise ReportRejected(_("%(field)s has too many entries.") % {"field": path})
        for index, item in enumerate(value):
            _data(item, f"{path}[{index}]", depth + 1)
    elif isinstance(value, str):
        _string(value, path, DATA_STRING_MAX)
    return value


# ------------------------------------------------------------------------------ the parts


def _version(document: dict) -> int:
    if document.get("schema") != SCHEMA:
        shown = document.get("schema")
        raise ReportRejected(
            _("This is not a diagnostics report of this site (schema “%(schema)s”).")
            % {"schema": str(shown)[:100] if shown is not None else "-"}
        )
    version = document.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise _wrong_type("schema_version", "integer")
    if version > SCHEMA_VERSION:
        raise ReportRejected(
            _(
                "This report was written by a newer diagnose.py (report version %(version)d); "
                "this site reads version %(supported)d. Download the kit again from the order "
                "page and run it once more."
            )
            % {"version": version, "supported": SCHEMA_VERSION}
        )
    if version != SCHEMA_VERSION:
        raise ReportRejected(
            _("Report version %(version)d is not one this site reads.") % {"version": version}
        )
    return version


def _timestamp(value) -> datetime:
    _string(value, "generated_at", 40)
    parsed = None
    if _TIMESTAMP.match(value):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ReportRejected(_("generated_at must be a date and time with a time zone (ISO 8601)."))
    return parsed


def _steps(value) -> tuple[Step, ...]:
    if not isinstance(value, list):
        raise _wrong_type("steps", "list")
    steps = []
    seen_names: set[str] = set()
    for index, item in enumerate(value[: len(STEPS) + 1]):
        path = f"steps[{index}]"
        _object(item, path, ("name", "status", "detail", "advice", "data"))
        name = _choice(item["name"], f"{path}.name", STEPS)
        if name in seen_names:
            raise ReportRejected(_("Step %(step)s appears twice.") % {"step": name})
        seen_names.add(name)
        status = _choice(item["status"], f"{path}.status", STATUSES)
        detail = _string(item["detail"], f"{path}.detail", DETAIL_MAX)
        advice = _string(item["advice"], f"{path}.advice", ADVICE_MAX)
        if not isinstance(item["data"], dict):
            raise _wrong_type(f"{path}.data", "object")
        steps.append(Step(name, status, detail, advice, _data(item["data"], f"{path}.data")))
    if tuple(step.name for step in steps) != STEPS:
        raise ReportRejected(
            _("The report must list the six steps in this order: %(steps)s.")
            % {"steps": ", ".join(STEPS)}
        )
    failed = False
    for step in steps:
        if failed and step.status != "skipped":
            raise ReportRejected(
                _("Step %(step)s follows a failed step but is not marked skipped.")
                % {"step": step.name}
            )
        if not failed and step.status == "skipped" and step.name != "peak_memory":
            raise ReportRejected(
                _("Step %(step)s is skipped although no step before it failed.")
                % {"step": step.name}
            )
        failed = failed or step.status == "failed"
    return tuple(steps)


def _first_error(value, steps: tuple[Step, ...]) -> FirstError | None:
    failed = next((step.name for step in steps if step.status == "failed"), None)
    if value is None:
        if failed is not None:
            raise ReportRejected(
                _("Step %(step)s failed but first_error is null.") % {"step": failed}
            )
        return None
    _object(value, "first_error", ("step", "message"))
    step = _choice(value["step"], "first_error.step", STEPS)
    message = _string(value["message"], "first_error.message", MESSAGE_MAX, empty_ok=False)
    if failed is None:
        raise ReportRejected(_("first_error must be null when no step failed."))
    if step != failed:
        raise ReportRejected(
            _("first_error must name the failed step %(step)s.") % {"step": failed}
        )
    return FirstError(step, message)


def _handover(value) -> Handover | None:
    if value is None:
        return None
    _object(value, "handover", ("expected", "seen", "problems"))
    expected = _object(
        value["expected"],
        "handover.expected",
        ("model", "cards", "memory_gb_per_card", "platform"),
        ("host",),
    )
    expected = {
        "model": _string(expected["model"], "handover.expected.model", 200, empty_ok=False),
        "cards": _integer(expected["cards"], "handover.expected.cards", 1, 640),
        "memory_gb_per_card": _integer(
            expected["memory_gb_per_card"], "handover.expected.memory_gb_per_card", 1, 100000
        ),
        "platform": _choice(expected["platform"], "handover.expected.platform", PLATFORMS),
        "host": _string(expected.get("host"), "handover.expected.host", 200, null_ok=True),
    }
    seen = _object(
        value["seen"], "handover.seen", ("model", "cards", "memory_gb_per_card", "platform")
    )
    seen = {
        "model": _string(seen["model"], "handover.seen.model", 200, null_ok=True),
        "cards": _integer(seen["cards"], "handover.seen.cards", 0, 1024, null_ok=True),
        "memory_gb_per_card": _number(
            seen["memory_gb_per_card"], "handover.seen.memory_gb_per_card", 0, 100000, null_ok=True
        ),
        "platform": _choice(seen["platform"], "handover.seen.platform", PLATFORMS, null_ok=True),
    }
    problems = value["problems"]
    if not isinstance(problems, list):
        raise _wrong_type("handover.problems", "list")
    for index, code in enumerate(problems):
        _choice(code, f"handover.problems[{index}]", PROBLEMS)
    actual = compare(expected, seen)
    if problems != actual:
        raise ReportRejected(
            _(
                "handover.problems (%(reported)s) does not match the comparison of expected and "
                "seen (%(actual)s)."
            )
            % {"reported": ", ".join(problems) or "-", "actual": ", ".join(actual) or "-"}
        )
    return Handover(expected, seen, tuple(problems))


def parse_report(raw: bytes) -> Report:
    """The validated report, or ReportRejected with the first rule it breaks."""
    document = _decode(raw)
    if not isinstance(document, dict):
        raise ReportRejected(_("The report must be a JSON object."))
    version = _version(document)
    _object(
        document,
        "",
        (
            "schema",
            "schema_version",
            "order",
            "generated_at",
            "tool_version",
            "language",
            "host",
            "steps",
            "step_reached",
            "first_error",
            "handover",
        ),
    )
    order = _object(document["order"], "order", ("id", "reference"))
    order_id = _integer(order["id"], "order.id", 1, 2**63 - 1)
    reference = _string(order["reference"], "order.reference", 20)
    if not _REFERENCE.match(reference) or int(reference[3:]) != order_id:
        raise ReportRejected(_("order.reference does not match order.id."))
    host = _object(document["host"], "host", ("hostname", "platform", "python"))
    steps = _steps(document["steps"])
    ran = [step.name for step in steps if step.status != "skipped"]
    reached = _choice(document["step_reached"], "step_reached", STEPS)
    if reached != ran[-1]:
        raise ReportRejected(
            _("step_reached says %(reported)s, the steps say %(actual)s.")
            % {"reported": reached, "actual": ran[-1]}
        )
    return Report(
        schema_version=version,
        order_id=order_id,
        order_reference=reference,
        generated_at=_timestamp(document["generated_at"]),
        tool_version=_string(document["tool_version"], "tool_version", 40, empty_ok=False),
        language=_choice(document["language"], "language", LANGUAGES),
        host=HostInfo(
            hostname=_string(host["hostname"], "host.hostname", 255),
            platform=_string(host["platform"], "host.platform", 200),
            python=_string(host["python"], "host.python", 64),
        ),
        steps=steps,
        step_reached=reached,
        first_error=_first_error(document["first_error"], steps),
        handover=_handover(document["handover"]),
    )
