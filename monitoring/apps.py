from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MonitoringConfig(AppConfig):
    name = "monitoring"
    verbose_name = _("Monitoring")

    def ready(self) -> None:
        # Every process that runs Celery tasks (workers, and eager tasks in tests) records
        # their outcomes; connecting here reaches the worker too (Celery sets Django up).
        from .signals import connect_task_signals

        connect_task_signals()
