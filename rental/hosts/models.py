"""An order's access to one host: a tenancy, with its life and its journal.

A tenancy is the unit the worker acts on: one tenant account per order and host, holding that
order's cards of that host. Its states (TENANCY_TRANSITIONS, changed only by
rental.hosts.tenancy.tenancy_set_status):

    provisioning ─▶ verifying ─▶ ready ─▶ revoking ─▶ erased   (cards back in stock only here)
         │              │          │         │
         └──────────────┴──────────┴─────────┴─▶ revoking / quarantined
    quarantined ─▶ revoking (an operator's retry)

A teardown that fails or a host that does not answer leaves the tenancy quarantined: its cards
stay allocated (out of stock) and it is in front of an operator until a retry finishes it.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from statemachine.audit import StatusChange, status_pair


class TenancyStatus(models.TextChoices):
    PROVISIONING = "provisioning", _("Preparing")
    VERIFYING = "verifying", _("Verifying")
    READY = "ready", _("Ready")
    REVOKING = "revoking", _("Revoking")
    ERASED = "erased", _("Erased")
    QUARANTINED = "quarantined", _("Quarantined")


TENANCY_TRANSITIONS: dict[str, frozenset[str]] = {
    TenancyStatus.PROVISIONING: frozenset({TenancyStatus.VERIFYING, TenancyStatus.REVOKING}),
    TenancyStatus.VERIFYING: frozenset(
        {TenancyStatus.READY, TenancyStatus.PROVISIONING, TenancyStatus.REVOKING}
    ),
    TenancyStatus.READY: frozenset({TenancyStatus.REVOKING}),
    TenancyStatus.REVOKING: frozenset({TenancyStatus.ERASED, TenancyStatus.QUARANTINED}),
    TenancyStatus.QUARANTINED: frozenset({TenancyStatus.REVOKING, TenancyStatus.ERASED}),
    TenancyStatus.ERASED: frozenset(),
}
# The worker still has something to do on the host.
WORKING_STATUSES = frozenset(
    {TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING, TenancyStatus.REVOKING}
)


class Tenancy(models.Model):
    """One order's access to one host: its tenant account and its cards there."""

    order = models.ForeignKey("rental.Order", on_delete=models.PROTECT, related_name="tenancies")
    host = models.ForeignKey("rental.Host", on_delete=models.PROTECT, related_name="tenancies")
    # The tenant's POSIX account on the host (settings.HOSTS_ACCOUNT_PREFIX + order + host).
    account = models.CharField(_("account"), max_length=32)
    cards = models.JSONField(_("cards"), default=list)  # card indices on the host, ascending
    account_uid = models.PositiveIntegerField(_("account uid"), null=True, blank=True)
    account_home = models.CharField(_("account home"), max_length=200, blank=True)
    # The preparation's steps ran (PyTorch, Blender with steps defined for the platform).
    preparation_applied = models.BooleanField(_("preparation steps ran"), default=False)
    # Waits for an operator's step in /ops/ before verification (Custom, or no steps defined).
    operator_step = models.BooleanField(_("waits for an operator"), default=False)
    operator_note = models.CharField(_("operator's note"), max_length=500, blank=True)
    status = models.CharField(
        _("status"),
        max_length=14,
        choices=TenancyStatus.choices,
        default=TenancyStatus.PROVISIONING,
    )
    # The last failure (a step, an unreachable host); empty once a run succeeds.
    problem = models.CharField(_("problem"), max_length=1000, blank=True)
    attempts = models.PositiveSmallIntegerField(_("failed runs"), default=0)
    # The cards as the tenant saw them when the worker logged in as the tenant.
    cards_verified = models.JSONField(_("cards seen by the tenant"), default=list, blank=True)
    handover_report = models.JSONField(_("handover report"), null=True, blank=True)
    ready_at = models.DateTimeField(_("verified ready"), null=True, blank=True)
    revoke_started_at = models.DateTimeField(_("revocation started"), null=True, blank=True)
    # Verified: a login as the tenant was refused, no process and no file of it remained.
    erased_at = models.DateTimeField(_("erased (verified)"), null=True, blank=True)
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("teardown confirmed by"),
    )
    # What was revoked and erased, step by step, as verified (shown to operators).
    erasure_summary = models.JSONField(_("erasure summary"), default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("tenancy")
        verbose_name_plural = _("tenancies")
        ordering = ("order", "host__name", "pk")
        constraints = [
            models.UniqueConstraint(fields=("order", "host"), name="tenancy_one_per_order_host"),
            models.CheckConstraint(
                condition=Q(status__in=TenancyStatus.values), name="tenancy_known_status"
            ),
            models.CheckConstraint(
                condition=~Q(status=TenancyStatus.ERASED) | Q(erased_at__isnull=False),
                name="tenancy_erased_has_time",
            ),
        ]
        indexes = [models.Index(fields=("status", "updated_at"), name="tenancy_status_updated")]

    def __str__(self) -> str:
        return f"{self.account} ({self.status})"


class TenancyStatusChange(StatusChange):
    """One row per tenancy status change: who, when, from what, to what and why."""

    tenancy = models.ForeignKey(Tenancy, on_delete=models.CASCADE, related_name="status_changes")
    from_status, to_status = status_pair(max_length=14, choices=TenancyStatus.choices)

    subject_field = "tenancy"

    class Meta(StatusChange.Meta):
        verbose_name = _("tenancy status change")
        verbose_name_plural = _("tenancy status changes")


class TenancyStep(models.Model):
    """The journal: one row per step the worker ran on the host for a tenancy (an Ansible
    task), written when it starts and when it finishes. A step started and never finished was
    interrupted (a worker killed): the next run does it again, which changes nothing when it
    had already taken effect."""

    tenancy = models.ForeignKey(Tenancy, on_delete=models.CASCADE, related_name="steps")
    phase = models.CharField(_("phase"), max_length=16)  # provision, verify, teardown
    run = models.CharField(_("run"), max_length=32)  # one id per playbook run
    name = models.CharField(_("step"), max_length=200)
    started_at = models.DateTimeField(_("started"))
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    outcome = models.CharField(_("outcome"), max_length=12, blank=True)  # ok, changed, failed...
    output = models.CharField(_("output"), max_length=1000, blank=True)

    class Meta:
        verbose_name = _("tenancy step")
        verbose_name_plural = _("tenancy steps")
        ordering = ("started_at", "pk")

    def __str__(self) -> str:
        return f"{self.tenancy_id} {self.phase}: {self.name} ({self.outcome or 'running'})"
