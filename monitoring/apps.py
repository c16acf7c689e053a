from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MonitoringConfig(AppConfig):
    name = "monitoring"
    verbose_name = _("Monitoring")
    # Task outcomes are recorded by monitoring/signals.py, connected by config/celery_app.py in
    # every process that runs tasks (workers, and eager tasks in tests); web processes, which do
    # not load Celery, run none.
