"""The audit row every state change writes: from what, to what, who, why and when.

Each app's status-change model extends `StatusChange` with the foreign key to its entity and
its own `from_status` / `to_status` (their length and choices are the entity's: `status_pair`
makes both). Payments' event models add their own `kind` and `data`.
"""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


def status_pair(*, max_length: int, choices=None, to_blank: bool = False, db_columns=(None, None)):
    """The `from_status` and `to_status` fields of one entity (from is empty on creation)."""
    from_column, to_column = db_columns
    return (
        models.CharField(
            _("from"), max_length=max_length, choices=choices, blank=True, db_column=from_column
        ),
        models.CharField(
            _("to"), max_length=max_length, choices=choices, blank=to_blank, db_column=to_column
        ),
    )


class StatusChange(models.Model):
    """One row per change of an entity's status: who (`actor`, None for the system), when
    and why. Subclasses add the entity's foreign key and `from_status` / `to_status`."""

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    reason = models.CharField(_("reason"), max_length=500, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True)

    # The name of the foreign key to the entity (for __str__ and StateMachine).
    subject_field = ""

    class Meta:
        abstract = True
        ordering = ("created_at", "pk")

    def __str__(self) -> str:
        subject_id = getattr(self, f"{self.subject_field}_id", None)
        return f"{subject_id}: {self.from_status or '∅'} → {self.to_status}"
