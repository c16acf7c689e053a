from celery import Celery

from .startup import require_settings_module

require_settings_module()  # a worker or beat never falls back to the development settings

app = Celery("gpu_rental")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
