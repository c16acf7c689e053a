"""The pilot of a paid order: the kit's upload token, the diagnostics reports that come back,
and the customer's decision log.

Rental knows nothing of these: the order page shows them through pilot's template tags, and a
handover problem reaches the operators through rental's intent services.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from rental.models import Order, OrderStatus

# The kits are downloaded and reports uploaded while the customer has (or is about to get) the
# machines; the page shows the pilot from payment on, the history once the rental ended too.
KIT_STATUSES = frozenset({OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE})
PILOT_STATUSES = KIT_STATUSES | {OrderStatus.ENDED}


class KitToken(models.Model):
    """The upload token a diagnostics kit carries: it can only add reports to its order.

    Only its SHA-256 is stored. Downloading a new kit replaces the live token (`replaced_at`):
    the old one stops working. It works while the order is paid, being provisioned or active,
    and never after the rental's end.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="pilot_kit_tokens")
    token_hash = models.CharField(_("token (SHA-256)"), max_length=64, unique=True)
    created_at = models.DateTimeField(_("issued"), auto_now_add=True)
    replaced_at = models.DateTimeField(_("replaced"), null=True, blank=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)

    class Meta:
        verbose_name = _("kit upload token")
        verbose_name_plural = _("kit upload tokens")
        ordering = ("order", "created_at", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=("order",),
                condition=Q(replaced_at__isnull=True),
                name="kit_token_one_live_per_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: token of {self.created_at:%Y-%m-%d %H:%M}"

    @property
    def is_live(self) -> bool:
        return self.replaced_at is None


class ReportSource(models.TextChoices):
    TOKEN = "token", _("Sent by diagnose.py")
    PAGE = "page", _("Uploaded on the order page")
    # Run by the worker as the tenant when it verified the host (rental.hosts.handover).
    WORKER = "worker", _("Handover check by our worker")


class DiagnosticsReport(models.Model):
    """One validated report of diagnose.py, as it came back, with what the site recomputed.

    `document` is the validated JSON; the other fields are what the pages need without reading
    it. `handover` is the comparison recomputed here from the order (pilot.handover), never the
    one the report claims.
    """

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="diagnostics_reports")
    uploaded_at = models.DateTimeField(_("uploaded"), auto_now_add=True)
    source = models.CharField(_("sent by"), max_length=8, choices=ReportSource.choices)
    token = models.ForeignKey(
        KitToken, on_delete=models.PROTECT, null=True, blank=True, related_name="reports"
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    document = models.JSONField(_("report"))
    generated_at = models.DateTimeField(_("generated"), null=True, blank=True)
    tool_version = models.CharField(_("diagnose.py version"), max_length=40, blank=True)
    hostname = models.CharField(_("host name"), max_length=255, blank=True)
    host_platform = models.CharField(_("system"), max_length=200, blank=True)
    step_reached = models.CharField(_("step reached"), max_length=20)
    first_error_step = models.CharField(_("first error at"), max_length=20, blank=True)
    first_error_message = models.TextField(_("first error"), blank=True)
    # [{name, status, detail, advice}] in the contract's order: the page needs no `document`.
    steps = models.JSONField(_("steps"), default=list)
    # {host, expected, seen, problems} recomputed from the order, or null when the report has
    # no comparison (the driver step did not run).
    handover = models.JSONField(_("handover comparison"), null=True, blank=True)
    problems = models.JSONField(_("problems"), default=list, blank=True)
    # Fewer cards, another model, less memory or another platform than the order.
    handover_problem = models.BooleanField(_("handover problem"), default=False)

    class Meta:
        verbose_name = _("diagnostics report")
        verbose_name_plural = _("diagnostics reports")
        ordering = ("-uploaded_at", "-pk")
        indexes = [
            models.Index(fields=("order", "-uploaded_at"), name="report_order_recent"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(source__in=ReportSource.values), name="report_known_source"
            ),
            models.CheckConstraint(
                condition=~Q(source=ReportSource.TOKEN) | Q(token__isnull=False),
                name="report_by_token_names_it",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: report {self.pk} ({self.step_reached})"

    @property
    def failed(self) -> bool:
        return bool(self.first_error_step)


class DecisionKind(models.TextChoices):
    LAUNCH = "launch", _("Launch the planned volume")
    FIX_ENVIRONMENT = "fix_environment", _("Fix the environment")
    REVISE_CONFIGURATION = "revise_configuration", _("Revise the configuration")


class PilotDecision(models.Model):
    """What the customer decided after the pilot, and why. Append-only: the database refuses
    updates and deletes (migration 0002), and a decision's report is one of its order's."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="pilot_decisions")
    kind = models.CharField(_("decision"), max_length=24, choices=DecisionKind.choices)
    motivation = models.TextField(_("motivation"))
    report = models.ForeignKey(
        DiagnosticsReport,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="decisions",
        verbose_name=_("report it rests on"),
    )
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(_("recorded"), auto_now_add=True)

    class Meta:
        verbose_name = _("pilot decision")
        verbose_name_plural = _("pilot decisions")
        ordering = ("created_at", "pk")
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=DecisionKind.values), name="decision_known_kind"
            ),
            models.CheckConstraint(
                condition=~Q(motivation=""), name="decision_motivation_required"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.kind}"
