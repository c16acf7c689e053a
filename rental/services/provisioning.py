"""From paid to active: cards allocated on hosts, each host's access given and verified.

paid ──allocate──▶ provisioning ──every tenancy ready──▶ active (the rental clock starts)
 │ no capacity: stays paid, issue "capacity"     │ a host not ready after retries: issue
 └──▶ operators' queue                           └──▶ "readiness", in the operators' queue

A worker-managed host's tenancy is ready when the worker logged in *as the tenant* and saw
exactly the allocated cards (rental.hosts.tenancy). A host operators prepare by hand is ready
when an operator marked the order prepared and its SSH endpoint answered with a banner
(`order_check_readiness`). Nothing is promised to the customer before that.
"""

import enum
import logging
from collections import Counter
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.services import user_set_ssh_key
from accounts.ssh_keys import parse_ssh_public_key
from outbox.messages import enqueue

from .. import capacity, locks
from ..allocation import plan_allocation
from ..exceptions import (
    HostCardsInUse,
    HostModelLocked,
    NotAwaitingCapacity,
    NotBeingProvisioned,
    NotReadinessFailed,
    SshKeyChanged,
    SshKeyLocked,
    SshKeyMissing,
)
from ..hosts.models import Tenancy, TenancyStatus
from ..hosts.services import host_set_initial_state
from ..hosts.tenancy import (
    tenancies_key_given,
    tenancies_key_installed,
    tenancies_open,
    tenancy_set_status,
)
from ..models import (
    CardAllocation,
    Host,
    HostManagement,
    Order,
    OrderEmailKind,
    OrderStatus,
    ProvisioningIssue,
)
from ..readiness import Endpoint, ProbeFailure, backoff_seconds, probe_all
from .orders import order_set_provisioning_issue, order_set_status

logger = logging.getLogger(__name__)


def _log_issue(order: Order, what: str, detail: str) -> None:
    """One log line per provisioning problem, once committed (status changes are logged by
    order_set_status)."""
    reference = order.reference
    transaction.on_commit(
        lambda: logger.warning(
            "order %s provisioning: %s: %s",
            reference,
            what,
            detail,
            extra={"event": "provisioning", "order": reference, "issue": what, "detail": detail},
        )
    )


# ------------------------------------------------------------------------ allocation


def order_allocate(*, order_id: int, actor: User | None) -> Order:
    """Give a paid order its cards, or leave it paid in the operators' queue with the reason.

    Locks the GPU model row, the same lock `order_create` takes: allocations and new orders of
    one model run one at a time, so no card is given twice (the partial unique index on live
    allocations would refuse it anyway).
    """

    with transaction.atomic():
        order = locks.lock_order(order_id)
        if order.status != OrderStatus.PAID:
            raise NotAwaitingCapacity()
        locks.lock_gpu_model(order.gpu_model_id)
        hosts = capacity.free_hosts([order.gpu_model_id]).get(order.gpu_model_id, [])
        plan = plan_allocation(hosts, lots=order.lots, cards_per_lot=order.cards_per_lot)
        if plan is None:
            free = sum(len(host.free_cards) for host in hosts)
            detail = (
                f"Needs {order.lots} lot(s) of {order.cards_per_lot} card(s) on one host each; "
                f"free on available hosts: {free} card(s) on {len(hosts)} host(s)."
            )
            first_time = order.provisioning_issue != ProvisioningIssue.CAPACITY
            order_set_provisioning_issue(order, issue=ProvisioningIssue.CAPACITY, detail=detail)
            if first_time:
                enqueue("rental.tasks.order_email", order.pk, OrderEmailKind.PROVISIONING_DELAYED)
            _log_issue(order, "capacity", detail)
            return order
        CardAllocation.objects.bulk_create(
            CardAllocation(
                order=order, host_id=place.host_id, lot=place.lot, card_index=place.card_index
            )
            for place in plan
        )
        cards_by_host: dict[int, list[int]] = {}
        for place in plan:
            cards_by_host.setdefault(place.host_id, []).append(place.card_index)
        names = dict(
            Host.objects.filter(pk__in={p.host_id for p in plan}).values_list("pk", "name")
        )
        per_host = Counter(place.host_id for place in plan)
        placed = ", ".join(f"{names[host_id]} ×{cards}" for host_id, cards in per_host.items())
        order = order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.PROVISIONING,
            actor=actor,
            reason=f"Cards allocated: {placed}",
        )  # closes a capacity issue
        tenancies_open(order=order, cards_by_host=cards_by_host)
    return order


# ------------------------------------------------------------------------ the SSH key


def order_set_ssh_key(
    *, order_id: int, customer: User, key_text: str, save_on_account: bool = False
) -> Order:
    """The customer's public key for this order (and, if asked, for the next ones too).

    Raises Order.DoesNotExist for another customer's order, ValidationError for a bad key and
    SshKeyLocked once the hosts are prepared.
    """
    key = parse_ssh_public_key(key_text)
    with transaction.atomic():
        order = locks.lock_order(order_id, customer=customer)
        if not order.accepts_ssh_key or tenancies_key_installed(order.pk):
            raise SshKeyLocked()
        order.ssh_public_key = key.line
        order.save(update_fields=["ssh_public_key", "updated_at"])
        tenancies_key_given(order_id=order.pk)
        if save_on_account:
            user_set_ssh_key(user=customer, text=key.line)
    return order


# ------------------------------------------------------------------------ prepared, then ready


def order_mark_prepared(
    *, order_id: int, actor: User | None, access_notes: str, key_fingerprint: str | None = None
) -> Order:
    """The hosts are prepared: record the access details and let the worker check readiness.

    `key_fingerprint` is the key the hosts were prepared with, as the operator saw it: when the
    customer replaced the key meanwhile, SshKeyChanged is raised and nothing changes. Marking
    again (after a failed readiness check) replaces the details and starts the checks over.
    """

    with transaction.atomic():
        order = locks.lock_order(order_id)
        if order.status != OrderStatus.PROVISIONING:
            raise NotBeingProvisioned()
        if not order.ssh_public_key:
            raise SshKeyMissing()
        if key_fingerprint is not None and (
            key_fingerprint != parse_ssh_public_key(order.ssh_public_key).fingerprint
        ):
            raise SshKeyChanged()
        order_set_provisioning_issue(
            order,
            issue="",
            prepared_at=timezone.now(),
            prepared_by=actor,
            access_notes=access_notes.strip(),
            readiness_attempts=0,
            readiness_error="",
        )
        enqueue("rental.tasks.order_readiness", order.pk)
    return order


def order_recheck_readiness(*, order_id: int, actor: User | None) -> Order:
    """Operators: the SSH endpoint is fixed, check again (the counter starts over). Only once
    the worker gave up: while it still checks, a second chain of checks would run beside it."""

    with transaction.atomic():
        order = locks.lock_order(order_id)
        if (
            order.status != OrderStatus.PROVISIONING
            or order.provisioning_issue != ProvisioningIssue.READINESS
        ):
            raise NotReadinessFailed()
        order_set_provisioning_issue(order, issue="", readiness_attempts=0)
        enqueue("rental.tasks.order_readiness", order.pk)
    return order


class Readiness(enum.StrEnum):
    READY = "ready"  # every host answered: the order is active
    RETRY = "retry"  # some host did not answer; check again after a backoff
    GAVE_UP = "gave_up"  # too many failures: in the operators' queue
    NOT_APPLICABLE = "not_applicable"  # not prepared, already active, ended...


def order_endpoints(order: Order) -> list[Endpoint]:
    """The SSH endpoints of the hosts prepared by hand that hold the order's live cards, by
    host name (worker-managed hosts are verified by logging in as the tenant instead)."""
    hosts = (
        Host.objects.filter(
            allocations__order=order,
            allocations__released_at__isnull=True,
            management=HostManagement.MANUAL,
        )
        .distinct()
        .order_by("name")
    )
    return [Endpoint(host=host.ssh_host, port=host.ssh_port, label=host.name) for host in hosts]


def order_check_readiness(*, order_id: int, now: datetime | None = None) -> Readiness:
    """Probe the SSH endpoint of every host of the order prepared by hand (no lock held), then
    record the outcome.

    All answered: those hosts' tenancies are ready, and the order becomes active once every
    tenancy is (`order_activate_if_verified`). Otherwise the failure is counted and the next
    check is queued after a growing pause (`backoff_seconds`); after `READINESS_MAX_ATTEMPTS`
    the order goes to the operators' queue.
    """

    order = Order.objects.get(pk=order_id)
    if order.status != OrderStatus.PROVISIONING or order.prepared_at is None:
        return Readiness.NOT_APPLICABLE
    if order.provisioning_issue == ProvisioningIssue.READINESS:
        return Readiness.GAVE_UP
    prepared_at = order.prepared_at
    endpoints = order_endpoints(order)
    results = probe_all(endpoints, timeout=settings.READINESS_TIMEOUT_SECONDS)
    failures = [result for _endpoint, result in results if isinstance(result, ProbeFailure)]
    with transaction.atomic():
        order = locks.lock_order(order_id)
        if order.status != OrderStatus.PROVISIONING or order.prepared_at != prepared_at:
            return Readiness.NOT_APPLICABLE  # marked again meanwhile: that check decides
        if not endpoints:
            failures_text = "No allocated host prepared by hand to check."
        elif not failures:
            hosts = ", ".join(endpoint.label for endpoint in endpoints)
            manual = Tenancy.objects.filter(
                order=order,
                host__management=HostManagement.MANUAL,
                status__in=[TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING],
            ).order_by("pk")
            for tenancy in manual:
                if tenancy.status == TenancyStatus.PROVISIONING:
                    tenancy_set_status(
                        tenancy_id=tenancy.pk,
                        to_status=TenancyStatus.VERIFYING,
                        actor=order.prepared_by,
                        reason="Prepared by hand by an operator",
                    )
                tenancy_set_status(
                    tenancy_id=tenancy.pk,
                    to_status=TenancyStatus.READY,
                    actor=None,
                    reason=f"SSH answered on {tenancy.host.name} (prepared by hand)",
                    ready_at=now or timezone.now(),
                )
            Order.objects.filter(pk=order.pk).update(readiness_error="")
            order_activate_if_verified(
                order_id=order.pk, now=now, reason=f"SSH answered on {hosts}"
            )
            return Readiness.READY
        else:
            failures_text = "; ".join(str(failure) for failure in failures)
        order.readiness_attempts += 1
        order.readiness_error = failures_text[:500]
        outcome = Readiness.RETRY
        if order.readiness_attempts >= settings.READINESS_MAX_ATTEMPTS:
            order_set_provisioning_issue(
                order,
                issue=ProvisioningIssue.READINESS,
                detail=f"No SSH banner after {order.readiness_attempts} checks: {failures_text}",
                readiness_attempts=order.readiness_attempts,
                readiness_error=order.readiness_error,
            )
            outcome = Readiness.GAVE_UP
        else:
            order.save(update_fields=["readiness_attempts", "readiness_error", "updated_at"])
        _log_issue(order, f"readiness check {order.readiness_attempts}", failures_text)
        if outcome == Readiness.RETRY:
            delay = backoff_seconds(order.readiness_attempts)
            enqueue("rental.tasks.order_readiness", order_id, countdown=delay)
    return outcome


def order_activate_if_verified(
    *, order_id: int, now: datetime | None = None, reason: str = ""
) -> Order | None:
    """The intent rental.hosts calls when a tenancy is ready: once every tenancy of the order
    is ready, the order is active and the rental clock starts now (never before), and the
    customer is told after the commit. None when it is not yet (or no longer) the time."""

    with transaction.atomic():
        order = locks.lock_order(order_id)
        if order.status != OrderStatus.PROVISIONING:
            return None
        statuses = list(Tenancy.objects.filter(order=order).values_list("status", "host__name"))
        if not statuses or any(status != TenancyStatus.READY for status, _name in statuses):
            return None
        now = now or timezone.now()
        hosts = ", ".join(sorted(name for _status, name in statuses))
        order = order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.ACTIVE,
            actor=None,
            reason=reason or f"Access verified as the tenant on {hosts}",
            starts_at=now,
            ends_at=now + timedelta(days=order.duration_days),
            readiness_error="",
        )  # closes a readiness issue
        enqueue("rental.tasks.order_email", order.pk, OrderEmailKind.READY)
    return order


def order_host_not_ready(*, order_id: int, detail: str) -> None:
    """A host of the order could not be prepared or verified after the retries: the order
    waits in the operators' queue with what failed (its cards stay allocated)."""
    with transaction.atomic():
        order = locks.lock_order(order_id)
        if order.status != OrderStatus.PROVISIONING:
            return
        order_set_provisioning_issue(
            order, issue=ProvisioningIssue.READINESS, detail=detail, readiness_error=detail[:500]
        )
        _log_issue(order, "host not ready", detail)


# ------------------------------------------------------------------------ hosts


# What an operator edits on a host (its state, key and checks change only through
# rental.hosts.services): an edit never overwrites them.
HOST_FIELDS = (
    "name", "gpu_model", "cards", "ssh_host", "ssh_port", "ssh_user", "management",
    "admin_user", "device_dir", "gpu_tool", "notes",
)  # fmt: skip


def host_save(*, host: Host) -> Host:
    """Create or update a host (validated by the form); refuses to drop rented cards.

    Takes the GPU model row locks that allocation takes (old and new model, by pk), then the
    host's: an allocation never lands on cards being removed, and the cards in use stay; the
    model of a host with rented cards cannot change. A name taken meanwhile by another
    operator is a field error, not a crash.
    """
    with transaction.atomic():
        models = {host.gpu_model_id}
        if host.pk is not None:
            models.add(Host.objects.values_list("gpu_model_id", flat=True).get(pk=host.pk))
        locks.lock_gpu_models(models)
        if host.pk is not None:
            current = locks.lock_host(host.pk)
            live = CardAllocation.objects.filter(host=current, released_at__isnull=True)
            highest = max(live.values_list("card_index", flat=True), default=None)
            if highest is not None:
                if host.gpu_model_id != current.gpu_model_id:
                    raise HostModelLocked()
                if host.cards <= highest:
                    raise HostCardsInUse(needed=highest + 1)
        host.full_clean()
        try:
            with transaction.atomic():
                if host.pk is None:
                    host_set_initial_state(host)
                    host.save()
                else:  # a check or a key confirmed meanwhile keeps what it wrote
                    host.save(update_fields=[*HOST_FIELDS, "updated_at"])
        except IntegrityError:
            raise ValidationError(
                {"name": _("Another host already has this name.")}, code="unique"
            ) from None
    return host
