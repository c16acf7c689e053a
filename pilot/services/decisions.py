"""The pilot decision log: launch the planned volume, fix the environment, or revise the
configuration, each with its motivation and, if the customer says so, the report it rests on.

Append-only: a decision is never changed or removed (the database refuses it, migration
0002); a new one is recorded instead.
"""

from django.db import transaction

from accounts.models import User
from rental.models import Order

from ..exceptions import (
    DecisionsClosed,
    MotivationRequired,
    ReportNotOfThisOrder,
    TooManyDecisions,
    UnknownDecision,
)
from ..locks import lock_order_pilot
from ..models import PILOT_STATUSES, DecisionKind, DiagnosticsReport, PilotDecision

MAX_DECISIONS_PER_ORDER = 100
MOTIVATION_MAX_LENGTH = 4000


def decision_record(
    *,
    order_id: int,
    customer: User,
    kind: str,
    motivation: str,
    report_id: int | None = None,
) -> PilotDecision:
    """Record the customer's decision on their own paid order.

    Raises Order.DoesNotExist for another customer's order; UnknownDecision,
    MotivationRequired, ReportNotOfThisOrder (a report of another order, or none such),
    DecisionsClosed (an order never paid) or TooManyDecisions otherwise. Takes the order's
    pilot mutex (the limit counts what is there).
    """
    order = Order.objects.get(pk=order_id, customer=customer)
    if kind not in DecisionKind.values:
        raise UnknownDecision()
    motivation = (motivation or "").strip()
    if not motivation:
        raise MotivationRequired()
    motivation = motivation[:MOTIVATION_MAX_LENGTH]
    if order.status not in PILOT_STATUSES:
        raise DecisionsClosed()
    with transaction.atomic():
        lock_order_pilot(order_id=order.pk)
        if report_id is not None and not (
            DiagnosticsReport.objects.filter(pk=report_id, order=order).exists()
        ):
            raise ReportNotOfThisOrder()
        if PilotDecision.objects.filter(order=order).count() >= MAX_DECISIONS_PER_ORDER:
            raise TooManyDecisions(limit=MAX_DECISIONS_PER_ORDER)
        return PilotDecision.objects.create(
            order=order, kind=kind, motivation=motivation, report_id=report_id, actor=customer
        )
