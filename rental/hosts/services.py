"""Hosts: their one state setter, the pinned host key, the host check, the one-job lease.

A worker-managed host is registered "unchecked"; the worker fetches the key it offers
(`host_fetch_key`), an operator confirms its fingerprint (`host_confirm_key`), and a passing
host check (`host_check`) makes it available. A host that later answers with another key is
put in "host key changed": nothing runs there until an operator confirms a key again and a
check passes. Only a passing host check returns a worker-managed host to "available".
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from statemachine import StateMachine

from ..exceptions import RentalError
from ..locks import lock_host
from ..models import (
    HOST_TRANSITIONS,
    ComputePlatform,
    Host,
    HostState,
    HostStateChange,
)
from . import engine

logger = logging.getLogger(__name__)


class HostActionRefused(RentalError):
    """The host cannot do that now; `message` says why."""


# ------------------------------------------------------------------------ the one setter


def _refuse(host: Host, to_state: str) -> HostActionRefused:
    return HostActionRefused(
        _("A host cannot go from %(from)s to %(to)s.")
        % {"from": host.get_state_display(), "to": HostState(to_state).label}
    )


# The host's states: HOST_TRANSITIONS, its audit rows and its log line.
HOST_STATES = StateMachine(
    name="host",
    transitions=HOST_TRANSITIONS,
    audit_model=HostStateChange,
    refuse=_refuse,
    state_field="state",
    logger=logger,
    describe=lambda host: (f"host {host.name}", {"host": host.name}),
)


def host_set_state(*, host_id: int, to_state: str, actor: User | None, reason: str) -> Host:
    """The one way a host changes state: locks the row, checks HOST_TRANSITIONS, writes the
    audit row; the reason is also the host's `state_detail`. Setting the state it already has
    changes nothing (and writes nothing)."""
    return HOST_STATES.set(
        lock=lock_host,
        pk=host_id,
        to_status=to_state,
        actor=actor,
        reason=reason,
        fields={"state_detail": reason[:500]},
        unchanged_ok=True,
    )


def host_set_initial_state(host: Host) -> None:
    """A new host's first state (on the unsaved row; its creation is its first record): a
    worker-managed host sells cards only once its key is confirmed and a host check passed; a
    host prepared by hand is available at once."""
    host.state = HostState.UNCHECKED if host.worker_managed else HostState.AVAILABLE


def hosts_take_out_of_service(*, host_ids, actor: User | None, reason: str) -> None:
    """An operator ended an order because its host failed: its cards are not sold again
    until a host check passes."""
    for host_id in sorted(set(host_ids)):
        host = Host.objects.get(pk=host_id)
        # A changed host key keeps its own state (and reason): it too sells nothing and needs
        # an operator's key, then a passing host check.
        if host.state == HostState.HOST_KEY_CHANGED:
            continue
        if HostState.OUT_OF_SERVICE in HOST_TRANSITIONS[host.state]:
            host_set_state(
                host_id=host_id, to_state=HostState.OUT_OF_SERVICE, actor=actor, reason=reason
            )


def host_drain(*, host_id: int, actor: User | None) -> Host:
    """No new orders on this host; the current rentals finish."""
    return host_set_state(
        host_id=host_id,
        to_state=HostState.DRAINING,
        actor=actor,
        reason="Drained by an operator: no new orders, current rentals finish",
    )


def host_set_maintenance(*, host_id: int, actor: User | None) -> Host:
    return host_set_state(
        host_id=host_id,
        to_state=HostState.MAINTENANCE,
        actor=actor,
        reason="Set aside by an operator",
    )


def host_return_manual(*, host_id: int, actor: User | None) -> Host:
    """A host operators prepare by hand goes back to available on their word (the worker
    cannot check it)."""
    host = Host.objects.get(pk=host_id)
    if host.worker_managed:
        raise HostActionRefused(
            _("A worker-managed host returns only through a passing host check.")
        )
    return host_set_state(
        host_id=host_id, to_state=HostState.AVAILABLE, actor=actor, reason="Returned by an operator"
    )


# ------------------------------------------------------------------------ the host key


def target_of(host: Host) -> engine.Target:
    return engine.Target(
        name=host.name,
        address=host.ssh_host,
        port=host.ssh_port,
        admin_user=host.admin_user,
        host_key=host.host_key,
    )


def host_fetch_key(*, host_id: int) -> Host:
    """Ask the host for its key (no lock held during the network call) and keep it as the key
    offered, for an operator to confirm. Raises HostActionRefused when the host gives none."""
    host = Host.objects.get(pk=host_id)
    try:
        offered = engine.fetch_host_key(host.ssh_host, host.ssh_port)
    except OSError as exc:
        raise HostActionRefused(str(exc)) from exc
    Host.objects.filter(pk=host_id).update(host_key_offered=offered, updated_at=timezone.now())
    host.host_key_offered = offered
    return host


def host_confirm_key(*, host_id: int, actor: User | None, fingerprint: str) -> Host:
    """The operator compared the fingerprint offered with the one read on the host's console:
    the key is pinned. `fingerprint` must be the offered key's (a key fetched again
    meanwhile is not pinned by mistake). A host whose key had changed goes back to unchecked:
    a host check must pass before it sells a card again."""
    with transaction.atomic():
        host = lock_host(host_id)
        if not host.host_key_offered:
            raise HostActionRefused(_("Fetch the host key first."))
        if fingerprint.strip() != engine.fingerprint(host.host_key_offered):
            raise HostActionRefused(
                _("The fingerprint does not match the key the host offered: fetch it again.")
            )
        host.host_key = host.host_key_offered
        host.host_key_pinned_at = timezone.now()
        host.host_key_pinned_by = actor
        host.save(
            update_fields=["host_key", "host_key_pinned_at", "host_key_pinned_by", "updated_at"]
        )
    if host.state == HostState.HOST_KEY_CHANGED:
        host = host_set_state(
            host_id=host_id,
            to_state=HostState.UNCHECKED,
            actor=actor,
            reason=f"New host key confirmed ({fingerprint.strip()}): a host check must pass",
        )
    return host


def host_key_changed(*, host_id: int, detail: str) -> Host:
    """A run met another host key than the pinned one: stop all work there, for an operator."""
    host = Host.objects.get(pk=host_id)
    offered = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        offered = engine.fingerprint(engine.fetch_host_key(host.ssh_host, host.ssh_port))
    pinned = engine.fingerprint(host.host_key) if host.host_key else "-"
    reason = (
        f"Host key changed: pinned {pinned}, offered {offered or 'unknown'}. "
        f"Nothing runs on this host until an operator confirms a key. {detail}"
    )
    if host.state == HostState.HOST_KEY_CHANGED:
        return host
    return host_set_state(
        host_id=host_id, to_state=HostState.HOST_KEY_CHANGED, actor=None, reason=reason
    )


# ------------------------------------------------------------------------ the lease


def host_lease_acquire(host_id: int) -> str | None:
    """One job at a time on a host: a token when the lease was free (or ran out), else None."""
    token = secrets.token_hex(8)
    now = timezone.now()
    free = Host.objects.filter(pk=host_id).filter(lease_until__isnull=True) | Host.objects.filter(
        pk=host_id, lease_until__lt=now
    )
    taken = free.update(
        lease_token=token, lease_until=now + timedelta(seconds=settings.HOSTS_LEASE_SECONDS)
    )
    return token if taken else None


def host_lease_renew(host_id: int, token: str) -> None:
    Host.objects.filter(pk=host_id, lease_token=token).update(
        lease_until=timezone.now() + timedelta(seconds=settings.HOSTS_LEASE_SECONDS)
    )


def host_lease_release(host_id: int, token: str) -> None:
    Host.objects.filter(pk=host_id, lease_token=token).update(lease_token="", lease_until=None)


# ------------------------------------------------------------------------ the host check


@dataclass(frozen=True)
class CheckOutcome:
    passed: bool
    detail: str
    cards: list[dict]
    busy: bool = False


def default_gpu_tool(host: Host) -> str:
    if host.gpu_tool:
        return host.gpu_tool
    return "rocm-smi" if host.gpu_model.compute_platform == ComputePlatform.ROCM else "nvidia-smi"


def parse_nvidia_cards(text: str) -> list[dict]:
    cards = []
    for line in text.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < 4 or not parts[0].isdigit():
            continue
        memory = parts[3].split()[0]
        cards.append(
            {
                "index": int(parts[0]),
                "uuid": parts[1],
                "name": parts[2],
                "memory_mib": int(memory) if memory.isdigit() else None,
            }
        )
    return sorted(cards, key=lambda card: card["index"])


def parse_rocm_cards(text: str) -> list[dict]:
    import json

    try:
        data = json.loads(text or "{}")
    except ValueError:
        return []
    cards = []
    for key, values in data.items():
        if not key.startswith("card") or not key[4:].isdigit():
            continue
        memory = values.get("VRAM Total Memory (B)") or "0"
        cards.append(
            {
                "index": int(key[4:]),
                "uuid": values.get("Unique ID", ""),
                "name": values.get("Card Series") or values.get("Card series", ""),
                "memory_mib": int(memory) // (1024 * 1024) if str(memory).isdigit() else None,
            }
        )
    return sorted(cards, key=lambda card: card["index"])


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def compare_cards(host: Host, cards: list[dict]) -> str:
    """What is wrong with the cards read, for this host's model and card count ("" if none)."""
    model = host.gpu_model
    problems = []
    if len(cards) != host.cards:
        problems.append(f"{len(cards)} card(s) read, the host is registered with {host.cards}")
    # The model's first word ("H100", "MI300X") is in every name the vendor tools give it.
    wanted = _squash(model.name.split()[0])
    for card in cards:
        if wanted not in _squash(card["name"]):
            problems.append(f"card {card['index']} is {card['name']!r}, not {model.name}")
        memory = card.get("memory_mib")
        # The tools report a little less than the marketed size (reserved memory).
        if memory is not None and memory < model.memory_gb_per_card * 1000 * 0.9:
            problems.append(
                f"card {card['index']} has {memory} MiB, less than {model.memory_gb_per_card} GB"
            )
    if len({card["uuid"] for card in cards}) != len(cards):
        problems.append("two cards report the same UUID")
    return "; ".join(problems)


def host_check_vars(host: Host) -> dict:
    return {"gpu_tool": default_gpu_tool(host), "platform": host.gpu_model.compute_platform}


def host_check_queue(*, host_id: int, actor: User) -> bool:
    """An operator asks for the host check: refused (HostActionRefused, the reason) when the
    worker cannot run it now, else queued through the outbox for the hosts' worker. True when
    a passing check returns the host to the stock (it was new, repaired or in maintenance)."""
    from outbox.messages import enqueue

    from ..selectors_ops import RETURNED_BY_CHECK, host_check_refusal, ops_host

    host = ops_host(host_id=host_id)
    refusal = host_check_refusal(host)
    if refusal:
        raise HostActionRefused(refusal)
    make_available = host.state in RETURNED_BY_CHECK
    enqueue("rental.tasks.host_check", host.pk, make_available, actor.pk)
    return make_available


def host_check(*, host_id: int, actor: User | None, make_available: bool = False) -> CheckOutcome:
    """Run the host check: sudo works and the cards match the host's model and card count.

    Passing: the cards are recorded; with `make_available` (registration, a return after
    repair) the host becomes available. Failing: the host is taken out of service with what
    failed (an available host stops selling; its current rentals go on). A changed host key
    puts it in "host key changed". Holds the host's lease while it runs (never a row lock).
    """
    host = Host.objects.select_related("gpu_model").get(pk=host_id)
    if not host.worker_managed:
        raise HostActionRefused(_("The worker cannot check a host that operators prepare by hand."))
    if not host.admin_user:
        raise HostActionRefused(_("Give the host an administrative user first."))
    if not host.host_key:
        raise HostActionRefused(_("Confirm the host key first."))
    if host.state == HostState.HOST_KEY_CHANGED:
        raise HostActionRefused(_("The host key changed: confirm a key first."))
    token = host_lease_acquire(host_id)
    if token is None:
        return CheckOutcome(False, "busy", [], busy=True)
    try:
        result = engine.run_playbook(
            target_of(host),
            "host_check.yml",
            host_check_vars(host),
            on_step=lambda _event: host_lease_renew(host_id, token),
        )
    finally:
        host_lease_release(host_id, token)
    if result.host_key_changed:
        host_key_changed(host_id=host_id, detail=result.message)
        return CheckOutcome(False, result.summary, [])
    cards: list[dict] = []
    if result.ok:
        if host.gpu_model.compute_platform == ComputePlatform.ROCM:
            cards = parse_rocm_cards(
                result.results.get("Read the cards with rocm-smi", {}).get("stdout", "")
            )
        else:
            cards = parse_nvidia_cards(
                result.results.get("Read the cards with nvidia-smi", {}).get("stdout", "")
            )
        detail = compare_cards(host, cards)
    else:
        detail = result.summary
        if "Sudo gives" in result.failed_step or "sudo" in result.message.lower():
            detail = f"sudo fails for {host.admin_user}: {result.message}"[:1000]
    passed = result.ok and not detail
    now = timezone.now()
    Host.objects.filter(pk=host_id).update(
        cards_seen=cards,
        checked_at=now,
        check_passed=passed,
        check_detail=(detail or f"{len(cards)} card(s) as registered")[:1000],
        updated_at=now,
    )
    host.refresh_from_db()
    if passed and make_available and host.state != HostState.AVAILABLE:
        host_set_state(
            host_id=host_id,
            to_state=HostState.AVAILABLE,
            actor=actor,
            reason=f"Host check passed: {len(cards)} card(s) of {host.gpu_model.name}",
        )
    elif not passed and HostState.OUT_OF_SERVICE in HOST_TRANSITIONS[host.state]:
        host_set_state(
            host_id=host_id,
            to_state=HostState.OUT_OF_SERVICE,
            actor=actor,
            reason=f"Host check failed: {detail}"[:500],
        )
    return CheckOutcome(passed, detail, cards)
