"""One Celery queue per kind of work, each with workers of its own.

Seen in a fault run with one queue for everything: two customers' slow webhook receivers (a
byte every 4 s) held every worker, and payment confirmations waited up to 396 s. With a queue
per kind, a slow receiver holds only webhook workers and a dead host only host workers; payments
are confirmed by workers that do nothing else.

Every task of the project is named here, in exactly one queue (tests/test_queues.py checks it),
so a new task has to choose. Plain data: settings, Procfiles and tests read it without Celery.
"""

DEFAULT_QUEUE = "celery"

QUEUES: dict[str, tuple[str, ...]] = {
    # The chain and the money: scans, checks of one payment, expiry, withdrawals on chain.
    "payments": (
        "payments.tasks.scan_all_networks",
        "payments.tasks.scan_network",
        "payments.tasks.payment_check",
        "payments.tasks.expire_payments",
        "payments.tasks.withdrawal_check",
        "payments.tasks.withdrawals_check_sent",
    ),
    # SSH to the hosts: provisioning, teardown, host checks, readiness banners (a dead host
    # makes these wait for their timeouts).
    "hosts": (
        "rental.tasks.host_provision",
        "rental.tasks.host_teardown",
        "rental.tasks.host_check",
        "rental.tasks.order_readiness",
    ),
    # HTTP to customers' receivers: slow I/O, a thread pool (WEBHOOK_WORKER_* below).
    "webhooks": ("api.webhooks.tasks.webhook_deliver",),
    # The mail server.
    "emails": (
        "rental.tasks.order_email",
        "rental.tasks.extension_email",
        "payments.tasks.payment_event_emails",
        "payments.tasks.withdrawal_event_email",
        "api.webhooks.tasks.webhook_disabled_email",
    ),
    # The rest, short database work that beat starts: the rentals tick, sweeps, the outbox's
    # dispatch, reconciliation, purges.
    DEFAULT_QUEUE: (
        "rental.tasks.rentals_tick",
        "outbox.tasks.outbox_dispatch",
        "outbox.tasks.outbox_dispatch_batch",
        "outbox.tasks.outbox_redispatch",
        "outbox.tasks.outbox_relay",
        "api.webhooks.tasks.webhooks_sweep",
        "payments.tasks.reconcile_daily",
        "api.tasks.purge_idempotency_keys",
    ),
}


def queue_name(kind: str, prefix: str = "") -> str:
    """The broker's name of a kind's queue: the kind itself, or `prefix.kind` (a test's)."""
    return f"{prefix}.{kind}" if prefix else kind


def task_routes(prefix: str = "") -> dict[str, dict[str, str]]:
    """CELERY_TASK_ROUTES: each task to its kind's queue."""
    return {
        task: {"queue": queue_name(kind, prefix)}
        for kind, tasks in QUEUES.items()
        for task in tasks
    }


def queue_names(kinds=None, prefix: str = "") -> list[str]:
    """The queues a worker consumes, for `-Q`: the given kinds, or all of them."""
    return [queue_name(kind, prefix) for kind in (kinds or QUEUES)]
