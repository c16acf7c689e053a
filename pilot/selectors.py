"""Reads of the pilot shared with the order pages (customer and operators) and the timeline.

`order_pilot` reads an order's reports and decisions in two queries, whatever their number, and
keeps the result on the order object: the pilot section and the timeline of one page share it.
An order that was never paid has no pilot and costs no query.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils.translation import gettext as _

from rental.models import Order
from rental.selectors_extensions import extension_timeline

from .models import PILOT_STATUSES, DecisionKind, DiagnosticsReport, PilotDecision
from .presentation import HandoverView, StepView, handover_view, report_label, steps_view
from .services.tokens import reports_open

_CACHE_ATTRIBUTE = "_pilot_view"


@dataclass(frozen=True, slots=True)
class ReportView:
    report: DiagnosticsReport
    steps: list[StepView]
    handover: HandoverView | None

    @property
    def first_error_label(self) -> str:
        step = next((s for s in self.steps if s.name == self.report.first_error_step), None)
        return step.label if step else self.report.first_error_step

    @property
    def step_reached_label(self) -> str:
        step = next((s for s in self.steps if s.name == self.report.step_reached), None)
        return step.label if step else self.report.step_reached


@dataclass(frozen=True, slots=True)
class DecisionView:
    decision: PilotDecision
    report: DiagnosticsReport | None

    @property
    def revises_configuration(self) -> bool:
        return self.decision.kind == DecisionKind.REVISE_CONFIGURATION


@dataclass(frozen=True, slots=True)
class OrderPilot:
    order: Order
    shown: bool  # the order was paid: the page has a pilot section
    kits_open: bool  # kits downloadable, reports accepted
    reports: list[ReportView] = field(default_factory=list)  # newest first
    decisions: list[DecisionView] = field(default_factory=list)  # oldest first

    @property
    def latest(self) -> ReportView | None:
        return self.reports[0] if self.reports else None

    @property
    def earlier(self) -> list[ReportView]:
        return self.reports[1:]

    @property
    def report_choices(self) -> list[tuple[int, str]]:
        return [(view.report.pk, report_label(view.report)) for view in self.reports]

    @property
    def handover_report(self) -> ReportView | None:
        """The newest report showing a difference from the order (the operators' link)."""
        return next((view for view in self.reports if view.report.handover_problem), None)


def order_pilot(order: Order) -> OrderPilot:
    """The order's pilot: reports (newest first, without their full JSON) and decisions."""
    cached = getattr(order, _CACHE_ATTRIBUTE, None)
    if cached is not None:
        return cached
    if order.status not in PILOT_STATUSES:
        view = OrderPilot(order=order, shown=False, kits_open=False)
    else:
        reports = list(
            DiagnosticsReport.objects.filter(order=order)
            .defer("document")
            .select_related("uploaded_by")
            .order_by("-uploaded_at", "-pk")
        )
        by_id = {report.pk: report for report in reports}
        decisions = list(
            PilotDecision.objects.filter(order=order)
            .select_related("actor")
            .order_by("created_at", "pk")
        )
        view = OrderPilot(
            order=order,
            shown=True,
            kits_open=reports_open(order),
            reports=[
                ReportView(report=r, steps=steps_view(r), handover=handover_view(r))
                for r in reports
            ],
            decisions=[DecisionView(d, by_id.get(d.report_id)) for d in decisions],
        )
    setattr(order, _CACHE_ATTRIBUTE, view)
    return view


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    at: datetime
    kind: str  # status | extension | report | decision
    text: str
    anchor: str = ""


def order_timeline(order: Order) -> list[TimelineEntry]:
    """Status changes (prefetched with the order), its extensions' changes, uploaded reports
    and decisions, oldest first."""
    entries = [
        TimelineEntry(change.created_at, "status", change.get_to_status_display())
        for change in order.status_changes.all()
    ]
    entries += [
        TimelineEntry(event.at, "extension", event.text) for event in extension_timeline(order)
    ]
    pilot = order_pilot(order)
    for view in pilot.reports:
        report = view.report
        if report.first_error_step:
            text = _("Diagnostics report: first error at “%(step)s”") % {
                "step": view.first_error_label
            }
        else:
            text = _("Diagnostics report: no step failed")
        entries.append(TimelineEntry(report.uploaded_at, "report", text, f"report-{report.pk}"))
    for view in pilot.decisions:
        decision = view.decision
        text = _("Decision: %(kind)s") % {"kind": decision.get_kind_display()}
        entries.append(
            TimelineEntry(decision.created_at, "decision", text, f"decision-{decision.pk}")
        )
    return sorted(entries, key=lambda entry: entry.at)


def report_document(*, report_id: int) -> DiagnosticsReport:
    """One report with its full JSON (operators); DoesNotExist for a missing id."""
    return DiagnosticsReport.objects.select_related("order").get(pk=report_id)
