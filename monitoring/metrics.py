"""Prometheus metrics, computed from the database at scrape time.

Gunicorn runs several web workers and Celery several worker processes: a counter kept in one
process's memory would show whichever process answered the scrape. Every value here is read
from the database when Prometheus asks (a custom collector on a registry of our own), so any
web worker answers the same; task failures come from TaskHealth, which the workers' task
signals write.
"""

from collections import defaultdict
from datetime import timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)

from payments.models import ChainTransfer, CryptoPayment, PaymentStatus
from rental.models import Order, OrderStatus

from .models import TaskHealth
from .queues import outbox_backlog, queue_depths
from .selectors import networks_health

PREFIX = "gpu_rental"
# Seconds from a transfer seen by the watcher to its confirmation (Arbitrum One's 1,200
# blocks take about 5 minutes, Ethereum's 64 about 13, Base's 300 about 10).
CONFIRMATION_BUCKETS = (10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200)


def _watcher() -> list:
    lag = GaugeMetricFamily(
        f"{PREFIX}_watcher_lag_blocks",
        "Blocks between the chain's head and the last block read, at the last scan.",
        labels=["network"],
    )
    head = GaugeMetricFamily(
        f"{PREFIX}_watcher_head_block", "The chain's head at the last scan.", labels=["network"]
    )
    scanned = GaugeMetricFamily(
        f"{PREFIX}_watcher_last_scan_timestamp_seconds",
        "When the network was last scanned successfully (Unix time).",
        labels=["network"],
    )
    failing = GaugeMetricFamily(
        f"{PREFIX}_watcher_failing",
        "1 when the network's last scan failed, else 0.",
        labels=["network"],
    )
    healthy = GaugeMetricFamily(
        f"{PREFIX}_watcher_healthy",
        "1 when the network was scanned recently enough and is not lagging (as /readyz).",
        labels=["network"],
    )
    for network in networks_health():
        labels = [network.key]
        if network.lag is not None:
            lag.add_metric(labels, network.lag)
        if network.head is not None:
            head.add_metric(labels, network.head)
        if network.last_scan_at is not None:
            scanned.add_metric(labels, network.last_scan_at.timestamp())
        failing.add_metric(labels, 1 if network.last_error else 0)
        healthy.add_metric(labels, 1 if network.healthy else 0)
    return [lag, head, scanned, failing, healthy]


def _payments() -> list:
    counts = GaugeMetricFamily(
        f"{PREFIX}_payments", "Crypto payments by network and status.", labels=["network", "status"]
    )
    found: dict[str, dict[str, int]] = defaultdict(dict)
    for row in CryptoPayment.objects.values("network", "status").annotate(n=Count("pk")):
        found[row["network"]][row["status"]] = row["n"]
    for network, by_status in sorted(found.items()):
        for status in PaymentStatus.values:
            counts.add_metric([network, status], by_status.get(status, 0))
    return [counts]


def _confirmation_delay() -> list:
    histogram = HistogramMetricFamily(
        f"{PREFIX}_payment_confirmation_delay_seconds",
        "From a transfer seen by the watcher to its confirmation, per network.",
        labels=["network"],
    )
    delay = ExpressionWrapper(F("confirmed_at") - F("seen_at"), output_field=DurationField())
    buckets = {
        f"le_{seconds}": Count("pk", filter=Q(delay__lte=timedelta(seconds=seconds)))
        for seconds in CONFIRMATION_BUCKETS
    }
    rows = (
        ChainTransfer.objects.filter(confirmed_at__isnull=False)
        .alias(delay=delay)
        .values("network")
        .annotate(count=Count("pk"), total=Sum("delay"), **buckets)
        .order_by("network")
    )
    for row in rows:
        histogram.add_metric(
            [row["network"]],
            [(str(float(s)), row[f"le_{s}"]) for s in CONFIRMATION_BUCKETS]
            + [("+Inf", row["count"])],
            sum_value=(row["total"] or timedelta()).total_seconds(),
        )
    return [histogram]


def _orders() -> list:
    counts = GaugeMetricFamily(f"{PREFIX}_orders", "Orders by status.", labels=["status"])
    found = dict(Order.objects.values_list("status").annotate(n=Count("pk")).order_by())
    for status in OrderStatus.values:
        counts.add_metric([status], found.get(status, 0))
    return [counts]


def _tasks() -> list:
    failures = CounterMetricFamily(
        f"{PREFIX}_task_failures",
        "Failed runs of each Celery task (a retried attempt counts), all processes together.",
        labels=["task"],
    )
    successes = CounterMetricFamily(
        f"{PREFIX}_task_successes", "Successful runs of each Celery task.", labels=["task"]
    )
    streak = GaugeMetricFamily(
        f"{PREFIX}_task_consecutive_failures",
        "Failures in a row of each Celery task since its last success.",
        labels=["task"],
    )
    for task, failed, succeeded, in_a_row in TaskHealth.objects.values_list(
        "task", "failures_total", "successes_total", "consecutive_failures"
    ):
        failures.add_metric([task], failed)
        successes.add_metric([task], succeeded)
        streak.add_metric([task], in_a_row)
    return [failures, successes, streak]


def _queues() -> list:
    depth = GaugeMetricFamily(
        f"{PREFIX}_queue_messages",
        "Messages waiting in each Celery queue (-1: the broker did not answer).",
        labels=["queue"],
    )
    oldest = GaugeMetricFamily(
        f"{PREFIX}_queue_oldest_message_age_seconds",
        "Age of the oldest message waiting in each queue (0 when empty).",
        labels=["queue"],
    )
    for queue in queue_depths():
        depth.add_metric([queue.name], -1 if queue.messages is None else queue.messages)
        oldest.add_metric([queue.name], queue.oldest_age_seconds or 0.0)
    backlog = outbox_backlog()
    unpublished = GaugeMetricFamily(
        f"{PREFIX}_outbox_unpublished_messages",
        "Tasks written to the outbox and not yet published to the broker.",
    )
    unpublished.add_metric([], backlog.messages)
    unpublished_age = GaugeMetricFamily(
        f"{PREFIX}_outbox_oldest_unpublished_age_seconds",
        "Age of the oldest task not yet published (0 when none).",
    )
    unpublished_age.add_metric([], backlog.oldest_age_seconds or 0.0)
    return [depth, oldest, unpublished, unpublished_age]


class DatabaseCollector:
    """Every metric, read when Prometheus scrapes (five queries, and the broker's queues)."""

    def collect(self):
        for part in (_watcher, _payments, _confirmation_delay, _orders, _tasks, _queues):
            yield from part()


registry = CollectorRegistry(auto_describe=False)
registry.register(DatabaseCollector())
