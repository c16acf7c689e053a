"""What the monitoring keeps: the outcome of every Celery task, by task name."""

from django.db import models
from django.utils.translation import gettext_lazy as _


class TaskHealth(models.Model):
    """One row per task name, written by the workers' task signals (monitoring.signals) with
    one upsert per outcome: the operators' banner and the metrics read it, whichever process
    ran the task. A retried attempt counts as a failure; a success ends the streak."""

    task = models.CharField(_("task"), max_length=200, unique=True)
    consecutive_failures = models.PositiveIntegerField(_("failures in a row"), default=0)
    failures_total = models.PositiveBigIntegerField(_("failures in all"), default=0)
    successes_total = models.PositiveBigIntegerField(_("successes in all"), default=0)
    failing_since = models.DateTimeField(_("failing since"), null=True, blank=True)
    last_failure_at = models.DateTimeField(_("last failure"), null=True, blank=True)
    last_error = models.CharField(_("last error"), max_length=1000, blank=True)
    last_success_at = models.DateTimeField(_("last success"), null=True, blank=True)

    class Meta:
        verbose_name = _("task health")
        verbose_name_plural = _("task health")
        ordering = ("task",)

    def __str__(self) -> str:
        return f"{self.task}: {self.consecutive_failures} failure(s) in a row"
