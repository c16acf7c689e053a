"""What the pilot app asks of an active order: a handover problem raised or cleared.

A customer's diagnostics report (pilot app) may show fewer cards, another model, less memory or
another platform than the order: the order then waits in the operators' provisioning queue as
"handover problem" until an operator resolves it, or until later reports of every host it was
seen on match the order again. Like the payment intents, each locks the order itself (after
the pilot locks its caller holds: see pilot.locks), decides from the order's current state, and
changes nothing when the order has moved on; each raise and close writes a
ProvisioningIssueEvent, so the order's history says who closed it and when.
"""

import logging

from django.db import transaction

from accounts.models import User

from ..exceptions import NoHandoverProblem
from ..locks import lock_order
from ..models import IssueEventKind, Order, OrderStatus, ProvisioningIssue, ProvisioningIssueEvent
from .orders import order_set_provisioning_issue

logger = logging.getLogger(__name__)

DETAIL_MAX_LENGTH = 500


def _locked(order_id: int) -> Order:
    return lock_order(order_id)


def _set_issue(order: Order, issue: str, detail: str) -> None:
    order_set_provisioning_issue(order, issue=issue, detail=detail)


def _log(order: Order, what: str, detail: str) -> None:
    reference = order.reference
    transaction.on_commit(
        lambda: logger.warning(
            "order %s handover problem %s: %s",
            reference,
            what,
            detail,
            extra={"event": "handover", "order": reference, "what": what, "detail": detail},
        )
    )


def order_report_handover_problem(*, order_id: int, detail: str) -> bool:
    """A report from the customer's machines differs from the order: put the active order in
    the operators' queue with `detail`. True when the problem is newly raised; False when the
    order is not active (the customer has no access yet, or the rental ended) or the problem is
    already open (its detail then becomes this newer one). Raises Order.DoesNotExist."""
    detail = detail.strip()[:DETAIL_MAX_LENGTH]
    with transaction.atomic():
        order = _locked(order_id)
        if order.status != OrderStatus.ACTIVE:
            return False
        if order.provisioning_issue == ProvisioningIssue.HANDOVER:
            if order.provisioning_issue_detail != detail:
                _set_issue(order, ProvisioningIssue.HANDOVER, detail)
            return False
        if order.provisioning_issue:  # another issue is open (never on an active order today)
            return False
        _set_issue(order, ProvisioningIssue.HANDOVER, detail)
        ProvisioningIssueEvent.objects.create(
            order=order, issue=ProvisioningIssue.HANDOVER, kind=IssueEventKind.RAISED, detail=detail
        )
        _log(order, "raised", detail)
    return True


def order_clear_handover_problem(*, order_id: int, reason: str) -> bool:
    """Later reports match the order on every host a problem was seen on: the problem is
    closed without an operator (no one acts on a difference that is gone). False when no
    handover problem is open. Raises Order.DoesNotExist."""
    reason = reason.strip()[:DETAIL_MAX_LENGTH]
    with transaction.atomic():
        order = _locked(order_id)
        if order.provisioning_issue != ProvisioningIssue.HANDOVER:
            return False
        _set_issue(order, "", "")
        ProvisioningIssueEvent.objects.create(
            order=order,
            issue=ProvisioningIssue.HANDOVER,
            kind=IssueEventKind.CLEARED,
            detail=reason,
        )
        _log(order, "cleared", reason)
    return True


def order_resolve_handover_problem(*, order_id: int, actor: User | None, note: str) -> Order:
    """An operator dealt with the handover problem (replaced a card, explained the difference
    to the customer): it leaves the queue, and the history records who and when. Raises
    NoHandoverProblem when none is open and Order.DoesNotExist for a missing order."""
    note = note.strip()[:DETAIL_MAX_LENGTH]
    with transaction.atomic():
        order = _locked(order_id)
        if order.provisioning_issue != ProvisioningIssue.HANDOVER:
            raise NoHandoverProblem()
        _set_issue(order, "", "")
        ProvisioningIssueEvent.objects.create(
            order=order,
            issue=ProvisioningIssue.HANDOVER,
            kind=IssueEventKind.RESOLVED,
            detail=note,
            actor=actor,
        )
        _log(order, "resolved", note)
    order.refresh_from_db()
    return order
