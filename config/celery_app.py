import time

from celery import Celery
from celery.signals import before_task_publish

from .startup import require_settings_module

require_settings_module()  # a worker or beat never falls back to the development settings

app = Celery("gpu_rental")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@before_task_publish.connect
def _stamp_publish_time(headers=None, **_kwargs) -> None:
    """Every message says when it was published: /metrics and /ops/health/ show the age of
    the oldest message waiting in each queue (monitoring/queues.py)."""
    if headers is not None:
        headers.setdefault("published_at", time.time())
