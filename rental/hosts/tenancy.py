"""Tenancies: an order's own access to exactly its cards on one host, given and taken back.

Rental asks (in the transaction that allocates or ends an order):
- `tenancies_open` when cards are allocated: one tenancy per host, "provisioning";
- `tenancies_revoke` when the order ends (hard stop, early end, an operator's revoke):
  every live tenancy goes to "revoking".
Both queue the host work after the commit. The hosts' worker then runs, per tenancy:
- `tenancy_provision`: the account, the customer's key, the device files, the preparation
  (provision.yml), then logs in *as the tenant* with a one-time key and reads the cards it
  sees (verify.yml): exactly the allocated cards → "ready" (rental activates the order when
  every tenancy of it is ready: `order_activate_if_verified`);
- `tenancy_teardown`: keys, processes, files, account, device files, card reset, then the
  checks (teardown.yml) → "erased", and only then the cards go back to stock. A failure or an
  unreachable host → "quarantined": the cards stay out of stock, in front of an operator,
  until a retry (`tenancy_retry`) finishes.
Hosts operators prepare by hand get the same end: `tenancy_confirm_teardown` is the operator's
statement, host by host, of what was revoked and erased.

Every step run on a host is journaled (TenancyStep) as it starts and ends; one job at a time
per host (the host's lease); no row lock is held while a host is being talked to.
"""

from __future__ import annotations

import base64
import enum
import json
import logging
import shutil
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from outbox.messages import enqueue
from statemachine import StateMachine, Transition

from ..exceptions import RentalError
from ..locks import lock_tenancy
from ..models import (
    CardAllocation,
    ComputePlatform,
    Host,
    HostState,
    Order,
    Preparation,
)
from . import engine, handover
from .events import tenancy_status_emit
from .models import (
    TENANCY_TRANSITIONS,
    Tenancy,
    TenancyStatus,
    TenancyStatusChange,
    TenancyStep,
)
from .services import (
    default_gpu_tool,
    host_key_changed,
    host_lease_acquire,
    host_lease_release,
    host_lease_renew,
    parse_nvidia_cards,
    target_of,
)

logger = logging.getLogger(__name__)


class TenancyActionRefused(RentalError):
    """The tenancy cannot do that now; `message` says why."""


class Outcome(enum.StrEnum):
    DONE = "done"
    BUSY = "busy"  # another job holds the host: queued again shortly
    RETRY = "retry"  # failed, tried again after a pause
    FAILED = "failed"  # in front of an operator
    WAITING = "waiting"  # an operator's step comes first
    NOT_APPLICABLE = "not_applicable"


# ------------------------------------------------------------------------ the one setter


def _refuse(tenancy: Tenancy, to_status: str) -> TenancyActionRefused:
    return TenancyActionRefused(
        _("This host's access cannot go from %(from)s to %(to)s.")
        % {"from": tenancy.get_status_display(), "to": TenancyStatus(to_status).label}
    )


def _emit(change: Transition) -> None:
    tenancy_status_emit(change.obj)  # webhooks: access.ready, access.revoked


# The tenancy's states: TENANCY_TRANSITIONS, its audit rows, its log line and its webhooks.
TENANCY_STATES = StateMachine(
    name="tenancy",
    transitions=TENANCY_TRANSITIONS,
    audit_model=TenancyStatusChange,
    refuse=_refuse,
    logger=logger,
    describe=lambda tenancy: (f"tenancy {tenancy.account}", {"account": tenancy.account}),
    effects=(_emit,),
)


def tenancy_set_status(
    *, tenancy_id: int, to_status: str, actor: User | None, reason: str, **fields
) -> Tenancy:
    """The one way a tenancy changes status: locks the row, checks TENANCY_TRANSITIONS,
    saves with `fields`, writes the audit row. Raises TenancyActionRefused otherwise."""
    return TENANCY_STATES.set(
        lock=lock_tenancy,
        pk=tenancy_id,
        to_status=to_status,
        actor=actor,
        reason=reason,
        fields=fields,
    )


def account_name(order_id: int, host_id: int) -> str:
    return f"{settings.HOSTS_ACCOUNT_PREFIX}o{order_id}h{host_id}"[:32]


# ------------------------------------------------------------------------ rental's asks


def tenancies_open(*, order: Order, cards_by_host: dict[int, list[int]]) -> list[Tenancy]:
    """In the allocating transaction: one tenancy per host of the order's new cards; the
    worker-managed ones are queued for provisioning after the commit."""

    created = []
    for host_id, cards in sorted(cards_by_host.items()):
        tenancy = Tenancy.objects.create(
            order=order,
            host_id=host_id,
            account=account_name(order.pk, host_id),
            cards=sorted(cards),
        )
        TenancyStatusChange.objects.create(
            tenancy=tenancy,
            from_status="",
            to_status=TenancyStatus.PROVISIONING,
            reason="Cards allocated",
        )
        created.append(tenancy)
    worker_hosts = set(
        Host.objects.filter(pk__in=list(cards_by_host), management="worker").values_list(
            "pk", flat=True
        )
    )
    for tenancy in created:
        if tenancy.host_id in worker_hosts:
            enqueue("rental.tasks.host_provision", tenancy.pk)
    return created


def tenancies_revoke(*, order_id: int, actor: User | None, reason: str) -> list[int]:
    """In the ending transaction: every live tenancy of the order goes to "revoking" and its
    teardown is queued after the commit (hosts prepared by hand: listed for operators)."""

    revoked = []
    live = (
        Tenancy.objects.filter(
            order_id=order_id,
            status__in=[TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING, TenancyStatus.READY],
        )
        .select_related("host")
        .order_by("pk")
    )
    for tenancy in live:
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.REVOKING,
            actor=actor,
            reason=reason,
            revoke_started_at=timezone.now(),
            problem="",
            attempts=0,
        )
        if tenancy.host.worker_managed:
            enqueue("rental.tasks.host_teardown", tenancy.pk)
        revoked.append(tenancy.pk)
    return revoked


# ------------------------------------------------------------------------ the journal


class Journal:
    """Writes one TenancyStep per task as it starts and ends, and renews the host's lease."""

    def __init__(self, tenancy: Tenancy, phase: str, lease_token: str):
        self.tenancy = tenancy
        self.phase = phase
        self.run = uuid.uuid4().hex
        self.token = lease_token
        self.current: TenancyStep | None = None

    def interrupted_before(self) -> list[TenancyStep]:
        """Steps of earlier runs that started and never finished (a worker killed)."""
        return list(
            TenancyStep.objects.filter(
                tenancy=self.tenancy, phase=self.phase, finished_at__isnull=True
            ).order_by("pk")
        )

    def mark_interrupted(self) -> list[str]:
        names = []
        for step in self.interrupted_before():
            step.finished_at = timezone.now()
            step.outcome = "interrupted"
            step.output = "The worker stopped during this step; the next run did it again."
            step.save(update_fields=["finished_at", "outcome", "output"])
            names.append(step.name)
        return names

    def __call__(self, event: engine.StepEvent) -> None:
        now = timezone.now()
        if not event.finished:
            self.current = TenancyStep.objects.create(
                tenancy=self.tenancy,
                phase=self.phase,
                run=self.run,
                name=event.name[:200],
                started_at=now,
            )
        else:
            step = self.current
            if step is None or step.name != event.name[:200]:
                step = TenancyStep.objects.create(
                    tenancy=self.tenancy,
                    phase=self.phase,
                    run=self.run,
                    name=event.name[:200],
                    started_at=now,
                )
            # A loop reports each item: the step's outcome is its worst.
            worst = ("failed", "unreachable", "changed", "ignored", "ok", "skipped", "")
            if not step.outcome or worst.index(event.outcome) < worst.index(step.outcome):
                step.outcome = event.outcome
                step.output = event.output[:1000]
            step.finished_at = now
            step.save(update_fields=["finished_at", "outcome", "output"])
        host_lease_renew(self.tenancy.host_id, self.token)


# ------------------------------------------------------------------------ variables


def _card_devices(host: Host, indices: list[int]) -> list[dict]:
    rocm = host.gpu_model.compute_platform == ComputePlatform.ROCM
    return [
        {"index": index, "device": f"dri/renderD{128 + index}" if rocm else f"nvidia{index}"}
        for index in indices
    ]


def _uuids(host: Host, indices: list[int]) -> list[str]:
    by_index = {card["index"]: card["uuid"] for card in host.cards_seen or []}
    return [by_index.get(index, "") for index in indices]


def _common_vars(tenancy: Tenancy) -> dict:
    host = tenancy.host
    tool = default_gpu_tool(host)
    return {
        "tenant": tenancy.account,
        "tenant_home": tenancy.account_home or f"/home/{tenancy.account}",
        "cards": _card_devices(host, tenancy.cards),
        "device_dir": host.device_dir.rstrip("/") or "/dev",
        "gpu_tool": tool,
        "platform": host.gpu_model.compute_platform,
        "order_reference": tenancy.order.reference,
    }


def _provision_vars(tenancy: Tenancy) -> dict:
    host, order = tenancy.host, tenancy.order
    uuids = _uuids(host, tenancy.cards)
    rocm = host.gpu_model.compute_platform == ComputePlatform.ROCM
    visible = ",".join(uuids) if all(uuids) else ",".join(str(i) for i in tenancy.cards)
    tool = default_gpu_tool(host)
    return {
        **_common_vars(tenancy),
        "customer_key": order.ssh_public_key.strip(),
        "visible_devices_variable": "ROCR_VISIBLE_DEVICES" if rocm else "CUDA_VISIBLE_DEVICES",
        "visible_devices": visible,
        "gpu_tool_dir": str(Path(tool).parent) if "/" in tool else "",
        "preparation": order.preparation,
    }


# ------------------------------------------------------------------------ failures


def _failed(
    tenancy: Tenancy, result: engine.PlaybookResult, phase: str, *, retry: bool = True
) -> Outcome:
    """A run failed: a changed host key stops the host; a teardown quarantines at once; a
    provisioning is tried again after a pause (unless `retry` is False: the tenant saw other
    cards than its own), then waits for an operator."""
    from ..services.provisioning import order_host_not_ready

    if result.host_key_changed:
        host_key_changed(host_id=tenancy.host_id, detail=result.message)
    detail = result.summary
    if phase == "teardown":
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.QUARANTINED,
            actor=None,
            reason=f"Teardown failed: {detail}"[:500],
            problem=detail,
            attempts=tenancy.attempts + 1,
        )
        return Outcome.FAILED
    attempts = tenancy.attempts + 1
    Tenancy.objects.filter(pk=tenancy.pk).update(
        problem=detail, attempts=attempts, updated_at=timezone.now()
    )
    if retry and attempts < settings.HOSTS_MAX_ATTEMPTS and not result.host_key_changed:
        enqueue("rental.tasks.host_provision", tenancy.pk, countdown=settings.HOSTS_RETRY_SECONDS)
        return Outcome.RETRY
    order_host_not_ready(
        order_id=tenancy.order_id,
        detail=f"{tenancy.host.name}: {detail} (after {attempts} attempt(s))",
    )
    return Outcome.FAILED


def _blocked(tenancy: Tenancy) -> str:
    host = tenancy.host
    if host.state == HostState.HOST_KEY_CHANGED:
        return (
            f"Host key changed on {host.name}: nothing runs there until an operator confirms a key."
        )
    if not host.host_key:
        return f"No host key is pinned for {host.name}."
    return ""


def _load(tenancy_id: int) -> Tenancy:
    return Tenancy.objects.select_related("host", "host__gpu_model", "order").get(pk=tenancy_id)


# ------------------------------------------------------------------------ provision + verify


PREPARATION_DEFAULTS = engine.PLAYBOOKS / "roles" / "preparation" / "defaults" / "main.yml"


def preparation_steps(preparation: str, platform: str) -> list[str]:
    """The steps operators defined for a preparation on a platform (the role's defaults)."""
    import yaml  # ansible-core's own dependency

    data = yaml.safe_load(PREPARATION_DEFAULTS.read_text()) or {}
    steps = (data.get("preparation_steps") or {}).get(preparation) or {}
    return list(steps.get(platform) or [])


def needs_operator_step(order: Order, platform: str) -> bool:
    """Custom, or PyTorch/Blender without steps defined for the platform: an operator's step
    in /ops/ comes between provisioning and verification."""
    if order.preparation == Preparation.CUSTOM:
        return True
    if order.preparation in (Preparation.PYTORCH, Preparation.BLENDER):
        return not preparation_steps(order.preparation, platform)
    return False


def tenancy_provision(*, tenancy_id: int) -> Outcome:
    """Provision the tenancy (when still "provisioning") and verify it as the tenant, in one
    run when no operator's step comes in between."""
    tenancy = _load(tenancy_id)
    if tenancy.status not in (TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING):
        return Outcome.NOT_APPLICABLE
    if not tenancy.host.worker_managed:
        return Outcome.NOT_APPLICABLE
    blocked = _blocked(tenancy)
    if blocked:
        Tenancy.objects.filter(pk=tenancy.pk).update(problem=blocked, updated_at=timezone.now())
        return Outcome.FAILED
    if tenancy.status == TenancyStatus.PROVISIONING and not tenancy.order.ssh_public_key.strip():
        return Outcome.WAITING  # order_set_ssh_key queues it again with the key
    token = host_lease_acquire(tenancy.host_id)
    if token is None:
        return Outcome.BUSY
    workdir = Path(tempfile.mkdtemp(prefix="gpu-rental-tenancy-"))
    try:
        if tenancy.status == TenancyStatus.VERIFYING:
            journal = Journal(tenancy, "verify", token)
            journal.mark_interrupted()
            result = engine.run_playbook(
                target_of(tenancy.host), "verify.yml", _verify_vars(tenancy, workdir),
                on_step=journal, workdir=workdir,
            )  # fmt: skip
            if not result.ok:
                return _failed(tenancy, result, "verify")
            return _verified(tenancy, result)
        platform = tenancy.host.gpu_model.compute_platform
        operator_first = needs_operator_step(tenancy.order, platform)
        variables = _provision_vars(tenancy)
        if not operator_first:
            variables.update(_verify_vars(tenancy, workdir))
        journal = Journal(tenancy, "provision", token)
        journal.mark_interrupted()
        result = engine.run_playbook(
            target_of(tenancy.host),
            "provision.yml" if operator_first else "provision_verify.yml",
            variables, on_step=journal, workdir=workdir,
        )  # fmt: skip
        account = result.results.get("Report the account", {}).get("msg", "")
        fields = dict(part.split("=", 1) for part in account.split() if "=" in part)
        if fields.get("uid", "").isdigit():
            steps = preparation_steps(tenancy.order.preparation, platform)
            Tenancy.objects.filter(pk=tenancy.pk).update(
                account_uid=int(fields["uid"]),
                account_home=fields.get("home", "")[:200],
                preparation_applied=bool(steps)
                and tenancy.order.preparation in (Preparation.PYTORCH, Preparation.BLENDER),
            )
            tenancy = _load(tenancy.pk)
        if not result.ok:
            return _failed(tenancy, result, "provision")
        if operator_first:
            Tenancy.objects.filter(pk=tenancy.pk).update(
                operator_step=True, problem="", updated_at=timezone.now()
            )
            return Outcome.WAITING
        tenancy_set_status(
            tenancy_id=tenancy.pk, to_status=TenancyStatus.VERIFYING, actor=None,
            reason="Account, key, cards and preparation in place", problem="",
        )  # fmt: skip
        return _verified(_load(tenancy.pk), result)
    finally:
        host_lease_release(tenancy.host_id, token)
        shutil.rmtree(workdir, ignore_errors=True)


def _verify_vars(tenancy: Tenancy, workdir: Path) -> dict:
    """A one-time key for the login as the tenant, and the diagnostics kit it runs."""
    key = engine.one_time_key(workdir)
    variables = {
        **_common_vars(tenancy),
        "verification_key": key.public_line,
        "verification_key_file": str(key.private_key_file),
    }
    kit = handover.kit_for(tenancy.order)
    if kit is not None:
        variables.update(
            kit_script_b64=base64.b64encode(kit.script.read_bytes()).decode(),
            kit_order_b64=base64.b64encode(json.dumps(kit.order_document).encode()).decode(),
            kit_host=tenancy.host.name,
        )
    return variables


def _verified(tenancy: Tenancy, result: engine.PlaybookResult) -> Outcome:
    """What the tenant saw: exactly its cards → ready (and the order active when every host
    is); anything else → in front of an operator at once."""
    from ..services.provisioning import order_activate_if_verified

    seen = parse_nvidia_cards(
        result.results.get("The tenant logs in and reads its cards", {}).get("stdout", "")
    )
    expected = set(tenancy.cards)
    seen_indices = {card["index"] for card in seen}
    uuids = {uuid for uuid in _uuids(tenancy.host, tenancy.cards) if uuid}
    problem = ""
    if seen_indices != expected:
        problem = (
            f"The tenant sees card(s) {sorted(seen_indices) or 'none'}; "
            f"allocated: {sorted(expected)}."
        )
    elif uuids and {card["uuid"] for card in seen} != uuids:
        problem = "The tenant's cards have other UUIDs than the host check read."
    if problem:
        return _failed(
            tenancy,
            engine.PlaybookResult(ok=False, failed_step="verification", message=problem),
            "verify",
            retry=False,  # wrong or missing cards: in front of an operator at once
        )
    now = timezone.now()
    report = {"checked_at": now.isoformat(), "host": tenancy.host.name, "cards": seen}
    tenancy_set_status(
        tenancy_id=tenancy.pk, to_status=TenancyStatus.READY, actor=None,
        reason=f"Logged in as {tenancy.account}: sees exactly card(s) {sorted(expected)}",
        ready_at=now, cards_verified=seen, handover_report=report, problem="",
    )  # fmt: skip
    order_activate_if_verified(order_id=tenancy.order_id)
    encoded = result.results.get("The diagnostics kit runs as the tenant (the handover report)", {})
    if encoded.get("stdout"):
        # Stored like a customer's report and compared with the order: wrong or missing
        # cards put the (now active) order in front of an operator at once.
        handover.receive(
            order_id=tenancy.order_id,
            host_name=tenancy.host.name,
            raw=base64.b64decode(encoded["stdout"].strip()),
        )
    return Outcome.DONE


def tenancies_key_installed(order_id: int) -> bool:
    """The worker already put the customer's key on a host of this order."""
    return Tenancy.objects.filter(
        order_id=order_id, host__management="worker", account_uid__isnull=False
    ).exists()


def tenancies_key_given(*, order_id: int) -> list[int]:
    """In the transaction that saves the order's key: worker-managed tenancies waiting for it
    are queued for provisioning after the commit."""

    waiting = list(
        Tenancy.objects.filter(
            order_id=order_id, host__management="worker", status=TenancyStatus.PROVISIONING,
            account_uid__isnull=True, operator_step=False,
        ).values_list("pk", flat=True)
    )  # fmt: skip
    for tenancy_id in waiting:
        enqueue("rental.tasks.host_provision", tenancy_id)
    return waiting


def tenancy_confirm_operator_step(*, tenancy_id: int, actor: User | None, note: str) -> Tenancy:
    """Operators did the preparation step by hand (Custom, or no steps defined): verify now."""

    note = note.strip()
    with transaction.atomic():
        tenancy = lock_tenancy(tenancy_id)
        if tenancy.status != TenancyStatus.PROVISIONING or not tenancy.operator_step:
            raise TenancyActionRefused(_("This host is not waiting for an operator's step."))
        tenancy.operator_step = False
        tenancy.operator_note = note[:500]
        tenancy.save(update_fields=["operator_step", "operator_note", "updated_at"])
        tenancy = tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.VERIFYING,
            actor=actor,
            reason=f"Preparation done by an operator: {note}"[:500],
        )
        enqueue("rental.tasks.host_provision", tenancy.pk)
    return tenancy


# ------------------------------------------------------------------------ teardown


def tenancy_teardown(*, tenancy_id: int) -> Outcome:
    """Take everything back and verify it; the cards return to stock only when verified."""
    tenancy = _load(tenancy_id)
    if tenancy.status != TenancyStatus.REVOKING or not tenancy.host.worker_managed:
        return Outcome.NOT_APPLICABLE
    blocked = _blocked(tenancy)
    if blocked:
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.QUARANTINED,
            actor=None,
            reason=blocked[:500],
            problem=blocked,
        )
        return Outcome.FAILED
    token = host_lease_acquire(tenancy.host_id)
    if token is None:
        return Outcome.BUSY
    workdir = Path(tempfile.mkdtemp(prefix="gpu-rental-teardown-"))
    try:
        journal = Journal(tenancy, "teardown", token)
        interrupted = journal.mark_interrupted()
        key = engine.one_time_key(workdir)
        rocm = tenancy.host.gpu_model.compute_platform == ComputePlatform.ROCM
        result = engine.run_playbook(
            target_of(tenancy.host),
            "teardown.yml",
            {
                **_common_vars(tenancy),
                "verification_key_file": str(key.private_key_file),
                "reset_arguments": ["--gpureset", "-d"] if rocm else ["-r", "-i"],
            },
            on_step=journal,
            workdir=workdir,
        )
        if not result.ok:
            return _failed(tenancy, result, "teardown")
        _erased(tenancy, actor=None, summary=_erasure_summary(result, interrupted))
        return Outcome.DONE
    finally:
        host_lease_release(tenancy.host_id, token)
        shutil.rmtree(workdir, ignore_errors=True)


ERASURE_STEPS = (
    ("No key is authorized any more", "keys removed"),
    ("The account is locked and expired (no new login, with or without PAM)", "account locked"),
    ("No process of the tenant runs", "processes ended"),
    (
        "No file of the tenant is left in /tmp, /var/tmp or /dev/shm",
        "files in /tmp, /var/tmp, /dev/shm removed",
    ),
    ("The card device files are back to root only", "device files back to root only"),
    ("The cards are reset where the host allows it (no process on them)", "cards reset"),
    ("The account and its home are removed", "account and home removed"),
    ("No account of that name", "verified: no account"),
    ("No process of its user id", "verified: no process"),
    (
        "No file of its user id outside its home, in /home, /tmp, /var/tmp, /dev/shm or the "
        "devices",
        "verified: no file",
    ),
    ("The card device files are root's only", "verified: device files idle"),
    ("A login as the tenant is refused", "verified: login refused"),
)


def _erasure_summary(result: engine.PlaybookResult, interrupted: list[str]) -> list[str]:
    summary = [label for name, label in ERASURE_STEPS if name in result.results]
    resets = result.results.get(
        "The cards are reset where the host allows it (no process on them)", {}
    )
    if any(item.get("rc") not in (0, None) for item in resets.get("results", [])):
        summary = [
            item if item != "cards reset" else "cards not reset (the host refused)"
            for item in summary
        ]
    if interrupted:
        summary.append(f"resumed after an interruption in: {', '.join(interrupted)}")
    return summary


def _erased(tenancy: Tenancy, *, actor: User | None, summary: list[str]) -> None:
    """Verified erased: the tenancy is closed and its cards go back to stock, in one
    transaction."""
    now = timezone.now()
    with transaction.atomic():
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.ERASED,
            actor=actor,
            reason="; ".join(summary)[:500],
            erased_at=now,
            erased_by=actor,
            erasure_summary=summary,
            problem="",
        )
        CardAllocation.objects.filter(
            order_id=tenancy.order_id, host_id=tenancy.host_id, released_at__isnull=True
        ).update(released_at=now)


MANUAL_TEARDOWN_CHECKLIST = (
    ("keys", "The customer's keys are removed and the account is locked"),
    ("processes", "No process of the tenant runs"),
    ("files", "The tenant's home and its files in /tmp, /var/tmp and /dev/shm are removed"),
    ("devices", "The cards' device files are back to root only, the cards reset"),
    ("login", "A login as the tenant is refused"),
)


def tenancy_confirm_teardown(*, tenancy_id: int, actor: User, confirmed: set[str]) -> Tenancy:
    """A host operators prepare by hand: the operator states, item by item, what was revoked
    and erased; every item is required. The cards then go back to stock."""
    tenancy = _load(tenancy_id)
    if tenancy.host.worker_managed:
        raise TenancyActionRefused(_("The worker tears this host down itself: retry it instead."))
    if tenancy.status not in (TenancyStatus.REVOKING, TenancyStatus.QUARANTINED):
        raise TenancyActionRefused(_("This host's access is not being revoked."))
    missing = [label for key, label in MANUAL_TEARDOWN_CHECKLIST if key not in confirmed]
    if missing:
        raise TenancyActionRefused(
            _("Confirm every item of the teardown: %(missing)s.") % {"missing": "; ".join(missing)}
        )
    summary = [f"confirmed by {actor.email}: {label}" for _key, label in MANUAL_TEARDOWN_CHECKLIST]
    _erased(tenancy, actor=actor, summary=summary)
    return _load(tenancy_id)


def tenancy_retry(*, tenancy_id: int, actor: User | None) -> Tenancy:
    """An operator's retry: a quarantined teardown is run again; a provisioning that failed
    is tried again from the start of what is left."""

    tenancy = _load(tenancy_id)
    if tenancy.status == TenancyStatus.QUARANTINED:
        tenancy_set_status(
            tenancy_id=tenancy.pk,
            to_status=TenancyStatus.REVOKING,
            actor=actor,
            reason="Teardown retried by an operator",
            attempts=0,
        )
        if tenancy.host.worker_managed:
            enqueue("rental.tasks.host_teardown", tenancy_id)
        return tenancy
    if tenancy.status in (TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING) and tenancy.problem:
        Tenancy.objects.filter(pk=tenancy.pk).update(attempts=0, updated_at=timezone.now())
        enqueue("rental.tasks.host_provision", tenancy_id)
        return tenancy
    raise TenancyActionRefused(_("Nothing to retry on this host."))


def tenancies_resume_stalled(*, now) -> list[int]:
    """The minute tick: host work whose worker died (the lease ran out, no step for a while)
    is queued again; the journal makes the next run finish what was left."""
    from datetime import timedelta

    stale = now - timedelta(seconds=settings.HOSTS_LEASE_SECONDS * 2)
    queued = []
    rows = (
        Tenancy.objects.filter(
            status__in=[
                TenancyStatus.PROVISIONING,
                TenancyStatus.VERIFYING,
                TenancyStatus.REVOKING,
            ],
            host__management="worker",
            updated_at__lt=stale,
            operator_step=False,
        )
        .exclude(host__lease_until__gt=now)
        .values_list("pk", "status", "problem", "attempts")
    )
    for tenancy_id, status, problem, attempts in rows:
        if status == TenancyStatus.REVOKING:
            enqueue("rental.tasks.host_teardown", tenancy_id)
        elif not problem or attempts < settings.HOSTS_MAX_ATTEMPTS:
            enqueue("rental.tasks.host_provision", tenancy_id)
        else:
            continue
        Tenancy.objects.filter(pk=tenancy_id).update(updated_at=now)
        queued.append(tenancy_id)
    return queued
