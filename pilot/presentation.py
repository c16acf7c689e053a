"""A stored report in plain words: each step with ✓/✗/–, and the handover comparison as the
customer (or an operator) reads it. Pure functions over the stored fields: no query."""

from dataclasses import dataclass

from django.utils.formats import date_format, number_format
from django.utils.timezone import localtime
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from . import handover as handover_rules
from .models import DiagnosticsReport

STEP_LABELS = {
    "interpreter": gettext_lazy("Interpreter and environment"),
    "driver": gettext_lazy("Driver and cards"),
    "torch": gettext_lazy("PyTorch import"),
    "compute": gettext_lazy("Real compute on every card"),
    "extensions": gettext_lazy("The project's extensions"),
    "peak_memory": gettext_lazy("Peak memory of a representative task"),
}
STATUS_SYMBOLS = {"ok": "✓", "failed": "✗", "skipped": "–"}
STATUS_LABELS = {
    "ok": gettext_lazy("passed"),
    "failed": gettext_lazy("failed"),
    "skipped": gettext_lazy("not run"),
}
PLATFORM_LABELS = {"cuda": "CUDA", "rocm": "ROCm"}


def step_label(name: str) -> str:
    return str(STEP_LABELS.get(name, name))


@dataclass(frozen=True, slots=True)
class StepView:
    name: str
    label: str
    status: str
    symbol: str
    status_label: str
    detail: str
    advice: str


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    key: str  # cards | model | memory | platform
    label: str
    seen: str
    rented: str
    matches: bool | None  # None: nothing seen to compare


@dataclass(frozen=True, slots=True)
class HandoverView:
    host: str | None
    rows: list[ComparisonRow]
    problems: list[str]
    problem_texts: list[str]  # each problem in plain words
    no_vendor_tool: bool

    @property
    def differs(self) -> bool:
        return any(row.matches is False for row in self.rows)


def steps_view(report: DiagnosticsReport) -> list[StepView]:
    return [
        StepView(
            name=step["name"],
            label=step_label(step["name"]),
            status=step["status"],
            symbol=STATUS_SYMBOLS.get(step["status"], "?"),
            status_label=str(STATUS_LABELS.get(step["status"], step["status"])),
            detail=step.get("detail", ""),
            advice=step.get("advice", ""),
        )
        for step in report.steps
    ]


def _number(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return number_format(value, decimal_pos=1, use_l10n=True)
    return number_format(int(value), use_l10n=True)


def handover_view(report: DiagnosticsReport) -> HandoverView | None:
    """Cards seen against cards rented on that host, model, memory per card and platform."""
    comparison = report.handover
    if not comparison:
        return None
    expected, seen = comparison.get("expected") or {}, comparison.get("seen") or {}
    problems = list(comparison.get("problems") or [])
    no_tool = "no_vendor_tool" in problems

    def judged(problem: str, value) -> bool | None:
        if no_tool or value is None:
            return None
        return problem not in problems

    gb = _("%(amount)s GB")
    rows = [
        ComparisonRow(
            "cards",
            _("Cards on this host"),
            _number(seen.get("cards")),
            _number(expected.get("cards")),
            judged("fewer_cards", seen.get("cards")),
        ),
        ComparisonRow(
            "model",
            _("Model"),
            seen.get("model") or "—",
            expected.get("model") or "—",
            judged("other_model", seen.get("model")),
        ),
        ComparisonRow(
            "memory",
            _("Memory per card"),
            "—"
            if seen.get("memory_gb_per_card") is None
            else gb % {"amount": _number(seen.get("memory_gb_per_card"))},
            gb % {"amount": _number(expected.get("memory_gb_per_card"))},
            judged("less_memory", seen.get("memory_gb_per_card")),
        ),
        ComparisonRow(
            "platform",
            _("Platform"),
            PLATFORM_LABELS.get(seen.get("platform"), "—"),
            PLATFORM_LABELS.get(expected.get("platform"), "—"),
            judged("other_platform", seen.get("platform")),
        ),
    ]
    known = [
        code
        for code in problems
        if code in handover_rules.PROBLEMS and code != handover_rules.NO_VENDOR_TOOL
    ]
    return HandoverView(
        host=comparison.get("host"),
        rows=rows,
        problems=problems,
        problem_texts=handover_rules.describe_problems(expected, seen, known),
        no_vendor_tool=no_tool,
    )


def report_label(report: DiagnosticsReport) -> str:
    """One line naming a report, for the decision form's choices."""
    when = date_format(localtime(report.uploaded_at), "SHORT_DATETIME_FORMAT")
    outcome = (
        _("first error at “%(step)s”") % {"step": step_label(report.first_error_step)}
        if report.first_error_step
        else _("no step failed")
    )
    return f"#{report.pk} · {when} · {outcome}"
