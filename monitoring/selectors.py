"""Reads for the operators' health page, the banner on every operators' page, /readyz and the
metrics: how each enabled network's watcher stands, and which tasks keep failing."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import BigIntegerField, CharField, F, Value
from django.utils import timezone

from payments.chain.networks import Network, enabled_networks
from payments.models import ChainCursor

from .models import TaskHealth
from .redact import redact

# Why a network is not healthy (None when it is).
NEVER_SCANNED = "never-scanned"
STALE = "stale"
LAGGING = "lagging"


@dataclass(frozen=True, slots=True)
class NetworkHealth:
    key: str
    name: str
    last_scan_at: datetime | None
    head: int | None  # the chain's head at the last successful scan
    read_to: int | None  # the last block the watcher has read
    last_error: str  # the last attempt's error, cleared by a successful scan
    last_error_at: datetime | None
    scan_age_seconds: float | None
    lag: int | None  # head - read_to: blocks behind the head at the last successful scan
    problem: str | None

    @property
    def healthy(self) -> bool:
        return self.problem is None


def _judge(scan_age: float | None, lag: int | None) -> str | None:
    if scan_age is None:
        return NEVER_SCANNED
    if scan_age > settings.WATCHER_MAX_SCAN_AGE_SECONDS:
        return STALE
    if lag is not None and lag > settings.WATCHER_MAX_LAG_BLOCKS:
        return LAGGING
    return None


def _network_health(network: Network, cursor: dict | None, now: datetime) -> NetworkHealth:
    cursor = cursor or {}
    last_scan_at, head = cursor.get("last_scan_at"), cursor.get("last_head")
    next_block = cursor.get("next_block")
    read_to = next_block - 1 if last_scan_at and next_block else None
    scan_age = (now - last_scan_at).total_seconds() if last_scan_at else None
    lag = max(0, head - read_to) if head is not None and read_to is not None else None
    return NetworkHealth(
        key=network.key,
        name=str(network.name),
        last_scan_at=last_scan_at,
        head=head,
        read_to=read_to,
        last_error=redact(cursor.get("last_error") or ""),
        last_error_at=cursor.get("last_error_at"),
        scan_age_seconds=scan_age,
        lag=lag,
        problem=_judge(scan_age, lag),
    )


CURSOR_FIELDS = (
    "network",
    "next_block",
    "last_head",
    "last_scan_at",
    "last_error",
    "last_error_at",
)


def networks_health(*, now: datetime | None = None) -> list[NetworkHealth]:
    """Every enabled network's watcher, from its cursor row (one query)."""
    now = now or timezone.now()
    networks = enabled_networks()
    cursors = {
        row["network"]: row
        for row in ChainCursor.objects.filter(network__in=list(networks)).values(*CURSOR_FIELDS)
    }
    return [_network_health(n, cursors.get(key), now) for key, n in networks.items()]


def tasks_health() -> list[TaskHealth]:
    """Every task that ran, failing ones first."""
    return list(TaskHealth.objects.order_by("-consecutive_failures", "task"))


@dataclass(frozen=True, slots=True)
class Alerts:
    failing_tasks: list[TaskHealth]
    networks: list[NetworkHealth]  # the unhealthy ones

    def __bool__(self) -> bool:
        return bool(self.failing_tasks or self.networks)


def ops_alerts(*, now: datetime | None = None) -> Alerts:
    """What the banner on every operators' page shows: tasks that failed at least
    TASK_FAILURE_ALERT_THRESHOLD times in a row, and unhealthy networks. One query (the tasks
    and the cursors in one UNION), since every operators' page pays for it."""
    now = now or timezone.now()
    networks = enabled_networks()
    text, number = CharField(), BigIntegerField()
    tasks = (
        TaskHealth.objects.filter(consecutive_failures__gte=settings.TASK_FAILURE_ALERT_THRESHOLD)
        .annotate(
            kind=Value("task", text),
            name=F("task"),
            number=F("consecutive_failures"),
            other=Value(None, number),
            since=F("failing_since"),
            at=F("last_failure_at"),
            error=F("last_error"),
        )
        .values_list("kind", "name", "number", "other", "since", "at", "error")
    )
    cursors = (
        ChainCursor.objects.filter(network__in=list(networks))
        .annotate(
            kind=Value("network", text),
            name=F("network"),
            number=F("last_head"),
            other=F("next_block"),
            since=F("last_scan_at"),
            at=F("last_error_at"),
            error=F("last_error"),
        )
        .values_list("kind", "name", "number", "other", "since", "at", "error")
    )
    failing, cursor_rows = [], {}
    rows = tasks.order_by().union(cursors.order_by(), all=True).order_by()
    for kind, name, count, other, since, at, error in rows:
        if kind == "task":
            failing.append(
                TaskHealth(
                    task=name,
                    consecutive_failures=count,
                    failing_since=since,
                    last_failure_at=at,
                    last_error=error,
                )
            )
        else:
            cursor_rows[name] = {
                "last_head": count,
                "next_block": other,
                "last_scan_at": since,
                "last_error_at": at,
                "last_error": error,
            }
    unhealthy = [
        health
        for key, network in networks.items()
        if not (health := _network_health(network, cursor_rows.get(key), now)).healthy
    ]
    failing.sort(key=lambda row: (-row.consecutive_failures, row.task))
    return Alerts(failing_tasks=failing, networks=unhealthy)
