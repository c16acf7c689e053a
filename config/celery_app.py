"""The Celery app, for the processes that run or publish tasks: workers, beat, the outbox relay
(`celery -A config.celery_app ...`, `manage.py outbox_relay`) and the tests. Web processes never
import it: their tasks leave through the outbox (outbox/messages.py)."""

import gc
import os
import time

from celery import Celery
from celery.schedules import crontab
from celery.signals import before_task_publish, worker_init, worker_process_init
from django.conf import settings

from monitoring.signals import connect_task_signals

from .startup import require_settings_module

require_settings_module()  # a worker or beat never falls back to the development settings


def beat_schedule(entries: dict) -> dict:
    """settings.CELERY_BEAT_SCHEDULE, kept as plain data there, with {"crontab": fields}
    made crontab(**fields)."""
    schedule = {}
    for name, entry in entries.items():
        every = entry["schedule"]
        if isinstance(every, dict):
            every = crontab(**every["crontab"])
        schedule[name] = {**entry, "schedule": every}
    return schedule


app = Celery("gpu_rental")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.beat_schedule = beat_schedule(settings.CELERY_BEAT_SCHEDULE)
if not app.conf.broker_transport and str(app.conf.broker_url or "").startswith("redis://"):
    # kombu's Redis transport with one publishing client per pool, not one per message
    # (config/kombu_redis.py).
    app.conf.broker_transport = "config.kombu_redis:Transport"
app.autodiscover_tasks()
connect_task_signals()  # every task's outcome in TaskHealth (/ops/health/, /metrics)


@before_task_publish.connect
def _stamp_publish_time(headers=None, **_kwargs) -> None:
    """Every message says when it was published: /metrics and /ops/health/ show the age of
    the oldest message waiting in each queue (monitoring/queues.py)."""
    if headers is not None:
        headers.setdefault("published_at", time.time())


def freeze_startup_objects() -> None:
    """Everything alive once a worker process has started (Django, the apps, web3, the task
    modules: ~140,000 objects the cycle collector tracks) moved out of the collector's reach
    for good (`gc.freeze()`): each full collection walked them all, ~85 ms on this machine,
    and a scan of 20,800 transfers, whose decoded logs pile up, set off one or two per scan
    (bench/watcher.py, profiled). What the tasks allocate later is collected as before."""
    gc.collect()
    gc.freeze()


@worker_init.connect  # the worker's main process: where solo and thread pools run the tasks
@worker_process_init.connect  # each prefork pool process, once forked
def _freeze_startup_objects(**_kwargs) -> None:
    freeze_startup_objects()


@worker_process_init.connect
def _leave_the_stop_signal_to_the_main_process(**_kwargs) -> None:
    """Each pool process gets a process group of its own. honcho (`make run`) stops a worker
    with SIGTERM to its whole group: the pool processes died of it at once, their tasks cut
    short, and the main process logged "Process 'ForkPoolWorker-1' exited with 'signal 15
    (SIGTERM)'" as an ERROR. Now only the main process hears it and stops them itself, after
    their tasks (warm shutdown); a cold shutdown or a time limit still ends them (billiard
    signals a group leader's whole group: a task's subprocesses too)."""
    os.setpgid(0, 0)
