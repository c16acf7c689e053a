"""A diagnostics report comes back to its order: sent by `diagnose.py --upload` with the kit's
token, or uploaded as a file on the order page. Both go through `report_store`.

Nothing is stored unless everything holds: the size, the schema (pilot.report), the order the
report names, the token (live, of this order, before the rental's end) and the order's limit of
reports. The handover comparison is recomputed here from the order (pilot.handover): the report
says what the machine saw, the order says what was rented. A difference (fewer cards, another
model, less memory, another platform), or no GPU tool at all on the machine (the kit tells the
customer to upload such a report so that the operators correct the handover), puts the active
order in the operators' queue; once the latest report of every host it was seen on matches the
order again, it leaves the queue.
"""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import override

from accounts.models import User
from pilot import handover as handover_rules
from pilot import report as report_schema
from rental.models import Order
from rental.services.handover import order_clear_handover_problem, order_report_handover_problem

from ..exceptions import (
    PilotError,
    ReportOfAnotherOrder,
    ReportsClosed,
    ReportTooLarge,
    TooManyReports,
)
from ..locks import lock_order_pilot
from ..models import DiagnosticsReport, KitToken, ReportSource
from .tokens import kit_token_check, reports_open

MAX_REPORTS_PER_ORDER = 100
NO_VENDOR_TOOL = handover_rules.NO_VENDOR_TOOL
# What the operators must look at (pilot.handover's problem names): the machine differs from
# the order, or no GPU tool answered on it at all (no nvidia-smi, amd-smi or rocm-smi: the
# driver is missing or hidden, and the cards could not even be compared).
HANDOVER_PROBLEMS = frozenset(
    {
        NO_VENDOR_TOOL,
        handover_rules.FEWER_CARDS,
        handover_rules.OTHER_MODEL,
        handover_rules.LESS_MEMORY,
        handover_rules.OTHER_PLATFORM,
    }
)


def max_report_bytes() -> int:
    return report_schema.MAX_REPORT_BYTES


def report_upload_with_token(*, order_id: int, token: str, raw: bytes) -> DiagnosticsReport:
    """What diagnose.py --upload sends. Raises a PilotError (token refused, too large, another
    order's report, order closed, too many reports) or pilot.report.ReportRejected."""
    kit_token = kit_token_check(order_id=order_id, token=token)  # refuse early, checked again
    with override(kit_token.order.customer.language):
        return report_store(order=kit_token.order, raw=raw, token=token)


def report_upload_by_customer(*, order_id: int, customer: User, raw: bytes) -> DiagnosticsReport:
    """The report file uploaded on the customer's own order page. Raises Order.DoesNotExist for
    another customer's order, and what `report_store` raises."""
    order = Order.objects.get(pk=order_id, customer=customer)
    return report_store(order=order, raw=raw, uploaded_by=customer)


def report_store_from_worker(*, order_id: int, host_name: str, raw: bytes) -> None:
    """The kit's report of the worker's handover check (rental.hosts.handover.receive): stored
    like any other and compared with the order. A report that cannot be stored is logged, never
    raised: the host's own verification already passed."""
    import logging

    order = Order.objects.get(pk=order_id)
    try:
        report_store(order=order, raw=raw, source=ReportSource.WORKER)
    except (PilotError, report_schema.ReportRejected) as error:
        logging.getLogger(__name__).warning(
            "order %s: the handover report from %s was not stored: %s",
            order.reference, host_name, error,
        )  # fmt: skip


def report_store(
    *,
    order: Order,
    raw: bytes,
    token: str | None = None,
    uploaded_by: User | None = None,
    source: str | None = None,
) -> DiagnosticsReport:
    """Validate and store one report for `order` (with the kit's `token`, or uploaded on the
    page by `uploaded_by`), then raise or clear the order's handover problem.

    Takes the order's pilot mutex, then (through rental's intents) the order's row lock.
    """
    limit = max_report_bytes()
    if len(raw) > limit:
        raise ReportTooLarge(limit_bytes=limit)
    parsed = report_schema.parse_report(raw)  # raises ReportRejected with its message
    document = _document(parsed)
    if parsed.order_id != order.pk:
        raise ReportOfAnotherOrder(reported=parsed.order_reference, order=order.reference)
    with transaction.atomic():
        lock_order_pilot(order_id=order.pk)
        kit_token: KitToken | None = None
        now = timezone.now()
        if token is not None:
            kit_token = kit_token_check(order_id=order.pk, token=token, now=now)
            order = kit_token.order  # as it is now, under the mutex
        else:
            order = Order.objects.get(pk=order.pk)
            if not reports_open(order, now):
                raise ReportsClosed()
        if DiagnosticsReport.objects.filter(order=order).count() >= MAX_REPORTS_PER_ORDER:
            raise TooManyReports(limit=MAX_REPORTS_PER_ORDER)
        comparison = _comparison(order, document)
        problems = comparison["problems"] if comparison else []
        first_error = parsed.first_error
        report = DiagnosticsReport.objects.create(
            order=order,
            source=source or (ReportSource.TOKEN if kit_token else ReportSource.PAGE),
            token=kit_token,
            uploaded_by=uploaded_by,
            document=document,
            generated_at=parsed.generated_at,
            tool_version=parsed.tool_version,
            hostname=parsed.host.hostname,
            host_platform=parsed.host.platform,
            step_reached=parsed.step_reached,
            first_error_step=first_error.step if first_error else "",
            first_error_message=first_error.message if first_error else "",
            steps=_compact_steps(parsed),
            handover=comparison,
            problems=problems,
            handover_problem=bool(HANDOVER_PROBLEMS.intersection(problems)),
        )
        if kit_token is not None:
            KitToken.objects.filter(pk=kit_token.pk).update(last_used_at=report.uploaded_at)
        _follow_handover(order, report)
    return report


# ------------------------------------------------------------------ the report's content


def _document(parsed: report_schema.Report) -> dict:
    """The validated JSON object, in the contract's shape (pilot.report)."""
    return parsed.as_dict()


def _compact_steps(parsed: report_schema.Report) -> list[dict]:
    """What the page shows of each step, without its data (which stays in `document`)."""
    return [
        {"name": step.name, "status": step.status, "detail": step.detail, "advice": step.advice}
        for step in parsed.steps
    ]


def _comparison(order: Order, document: dict) -> dict | None:
    """The handover comparison recomputed from the order: what the report says the machine
    saw, against what the order rented on that host. None when the driver step never ran."""
    claimed = document.get("handover")
    if not isinstance(claimed, dict):
        return None
    seen = claimed.get("seen") or {}
    claimed_host = (claimed.get("expected") or {}).get("host")
    host_name = claimed_host if isinstance(claimed_host, str) and claimed_host else None
    try:
        expected = handover_rules.expected_for_order(order, host_name=host_name)
    except handover_rules.UnknownHost:  # not one of the order's hosts: the order as a whole
        expected = handover_rules.expected_for_order(order)
    problems = list(handover_rules.compare(expected, seen))
    return {"host": expected.get("host"), "expected": expected, "seen": seen, "problems": problems}


# ------------------------------------------------------------------ the handover problem


def _follow_handover(order: Order, report: DiagnosticsReport) -> None:
    """Raise the order's handover problem on a report that differs from it or found no GPU
    tool; close it once the latest compared report of every host matches the order. A report
    whose driver step never ran changes nothing."""
    if report.handover_problem:
        order_report_handover_problem(order_id=order.pk, detail=problem_detail(report))
    elif report.handover is not None and not report.problems and not _hosts_with_problems(order):
        order_clear_handover_problem(
            order_id=order.pk,
            reason=f"Report {report.pk} matches the order on every host a difference was seen on.",
        )


def _hosts_with_problems(order: Order) -> list[str]:
    """The hosts whose latest compared report differs from the order or found no GPU tool."""
    latest: dict[str, bool] = {}
    rows = (
        DiagnosticsReport.objects.filter(order=order, handover__isnull=False)
        .order_by("uploaded_at", "pk")
        .values_list("handover", "problems")
    )
    for handover, problems in rows:
        latest[handover.get("host") or ""] = bool(HANDOVER_PROBLEMS.intersection(problems or []))
    return [host for host, problem in latest.items() if problem]


def problem_detail(report: DiagnosticsReport) -> str:
    """For the operators (kept in English, like the other provisioning details)."""
    comparison = report.handover or {}
    expected, seen = comparison.get("expected", {}), comparison.get("seen", {})
    where = comparison.get("host") or "no allocated host"
    parts = []
    for problem in comparison.get("problems", []):
        if problem == NO_VENDOR_TOOL:
            on = (
                f"host {comparison['host']}"
                if comparison.get("host")
                else f"machine {report.hostname or '?'}"
            )
            parts.append(
                f"the diagnostics kit found no GPU tool on {on} (no nvidia-smi, amd-smi or "
                "rocm-smi answered: a missing driver or PATH); the cards could not be compared"
            )
        elif problem == "fewer_cards":
            parts.append(
                f"fewer cards ({seen.get('cards')} seen, {expected.get('cards')} rented "
                "on this host)"
            )
        elif problem == "other_model":
            parts.append(
                f"another model (seen {seen.get('model')}, rented {expected.get('model')})"
            )
        elif problem == "less_memory":
            parts.append(
                f"less memory ({seen.get('memory_gb_per_card')} GB per card seen, "
                f"{expected.get('memory_gb_per_card')} GB rented)"
            )
        elif problem == "other_platform":
            parts.append(
                f"another platform (seen {seen.get('platform')}, rented {expected.get('platform')})"
            )
    return f"Report {report.pk} from {where} (machine {report.hostname or '?'}): " + "; ".join(
        parts
    )
