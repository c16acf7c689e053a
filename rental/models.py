from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from statemachine.audit import StatusChange, status_pair

from .pricing import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS
from .readiness import host_port


class ComputePlatform(models.TextChoices):
    CUDA = "cuda", "CUDA"
    ROCM = "rocm", "ROCm"


class Duration(models.IntegerChoices):
    THREE_DAYS = 3, _("3 days")
    SEVEN_DAYS = 7, _("7 days")
    THIRTY_DAYS = 30, _("30 days")


assert tuple(Duration.values) == DURATIONS_DAYS


class Preparation(models.TextChoices):
    UBUNTU = "ubuntu", _("Ubuntu")
    PYTORCH = "pytorch", _("PyTorch")
    BLENDER = "blender", _("Blender")
    CUSTOM = "custom", _("Custom")


class GpuModel(models.Model):
    slug = models.SlugField(_("slug"), max_length=40, unique=True)
    name = models.CharField(_("name"), max_length=60)
    vendor = models.CharField(_("vendor"), max_length=40)
    compute_platform = models.CharField(
        _("compute platform"), max_length=8, choices=ComputePlatform.choices
    )
    memory_gb_per_card = models.PositiveSmallIntegerField(_("memory per card (GB)"))
    cards_per_lot = models.PositiveSmallIntegerField(_("cards per lot"), default=1)
    description = models.CharField(_("short description"), max_length=300)
    active = models.BooleanField(_("active"), default=True)
    display_order = models.PositiveSmallIntegerField(_("display order"), default=0)

    class Meta:
        verbose_name = _("GPU model")
        verbose_name_plural = _("GPU models")
        ordering = ("display_order", "name")
        constraints = [
            models.CheckConstraint(
                condition=Q(cards_per_lot__gte=1), name="gpumodel_cards_per_lot_positive"
            ),
            models.CheckConstraint(
                condition=Q(memory_gb_per_card__gte=1), name="gpumodel_memory_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_rocm(self) -> bool:
        return self.compute_platform == ComputePlatform.ROCM


class StockVersion(models.Model):
    """One row: a number that every committed change to what the catalogue shows (GPU models,
    prices, hosts' state and cards, allocations, orders holding lots) raises, through the
    database's triggers (migration 0011); rental/stock.py caches the catalogue on it."""

    id = models.PositiveSmallIntegerField(primary_key=True)
    value = models.BigIntegerField()

    class Meta:
        verbose_name = _("stock version")

    def __str__(self) -> str:
        return str(self.value)


class LotPrice(models.Model):
    """USD for one lot (all of its cards) for the whole duration."""

    gpu_model = models.ForeignKey(GpuModel, on_delete=models.CASCADE, related_name="lot_prices")
    duration_days = models.PositiveSmallIntegerField(_("duration (days)"), choices=Duration.choices)
    price_usd = models.DecimalField(_("price per lot (USD)"), max_digits=12, decimal_places=2)

    class Meta:
        verbose_name = _("lot price")
        verbose_name_plural = _("lot prices")
        ordering = ("gpu_model", "duration_days")
        constraints = [
            models.UniqueConstraint(
                fields=("gpu_model", "duration_days"), name="lotprice_one_per_duration"
            ),
            models.CheckConstraint(condition=Q(price_usd__gt=0), name="lotprice_positive"),
            models.CheckConstraint(
                condition=Q(duration_days__in=DURATIONS_DAYS), name="lotprice_known_duration"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.gpu_model} · {self.duration_days} d · {self.price_usd} USD"


class ProvisioningIssue(models.TextChoices):
    """Why an order waits in the operators' provisioning queue."""

    CAPACITY = "capacity", _("Not enough free cards")
    READINESS = "readiness", _("SSH did not answer")
    # An active order whose customer's diagnostics report shows fewer cards, another model,
    # less memory or another platform than rented (raised by the pilot app through
    # rental.services.handover).
    HANDOVER = "handover", _("Handover problem")


class OrderStatus(models.TextChoices):
    AWAITING_PAYMENT = "awaiting_payment", _("Awaiting payment")
    PAYMENT_REVIEW = "payment_review", _("Payment under review")
    PAID = "paid", _("Paid")
    PROVISIONING = "provisioning", _("Provisioning")
    ACTIVE = "active", _("Active")
    ENDED = "ended", _("Ended")
    CANCELLED = "cancelled", _("Cancelled")


# Which status may follow which; every change goes through rental.services.order_set_status.
ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    OrderStatus.AWAITING_PAYMENT: frozenset(
        {OrderStatus.PAID, OrderStatus.PAYMENT_REVIEW, OrderStatus.CANCELLED}
    ),
    # Back to awaiting payment when operators credit the received money to the balance.
    OrderStatus.PAYMENT_REVIEW: frozenset(
        {OrderStatus.PAID, OrderStatus.CANCELLED, OrderStatus.AWAITING_PAYMENT}
    ),
    # Paid stays paid while capacity is missing (operators' queue), then cards are allocated.
    # Ended early by an operator (no cards in time, a failed host): the hours not delivered
    # go back to the customer's balance (payments.ledger.services.refunds).
    OrderStatus.PAID: frozenset({OrderStatus.PROVISIONING, OrderStatus.ENDED}),
    OrderStatus.PROVISIONING: frozenset({OrderStatus.ACTIVE, OrderStatus.ENDED}),
    OrderStatus.ACTIVE: frozenset({OrderStatus.ENDED}),
    OrderStatus.ENDED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}
# Statuses whose order holds lots without cards allocated yet (see rental.capacity).
HOLDING_STATUSES = frozenset({OrderStatus.AWAITING_PAYMENT, OrderStatus.PAYMENT_REVIEW})
CANCELLABLE_BY_CUSTOMER = frozenset({OrderStatus.AWAITING_PAYMENT})
# The hosts and cards of the order are shown to its customer, on its page and in the API
# (with the SSH commands while active).
ACCESS_STATUSES = frozenset({OrderStatus.ACTIVE, OrderStatus.ENDED})
KEY_EDITABLE_STATUSES = frozenset(
    {
        OrderStatus.AWAITING_PAYMENT,
        OrderStatus.PAYMENT_REVIEW,
        OrderStatus.PAID,
        OrderStatus.PROVISIONING,
    }
)


class Order(models.Model):
    """What the customer confirmed, frozen: later catalogue edits never change it."""

    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="orders"
    )
    gpu_model = models.ForeignKey(GpuModel, on_delete=models.PROTECT, related_name="orders")
    status = models.CharField(
        _("status"),
        max_length=20,
        choices=OrderStatus.choices,
        default=OrderStatus.AWAITING_PAYMENT,
    )
    # Snapshot of the summary the customer confirmed.
    model_name = models.CharField(_("GPU model"), max_length=60)
    vendor = models.CharField(_("vendor"), max_length=40)
    compute_platform = models.CharField(
        _("compute platform"), max_length=8, choices=ComputePlatform.choices
    )
    memory_gb_per_card = models.PositiveSmallIntegerField(_("memory per card (GB)"))
    cards_per_lot = models.PositiveSmallIntegerField(_("cards per lot"))
    duration_days = models.PositiveSmallIntegerField(_("duration (days)"), choices=Duration.choices)
    lots = models.PositiveSmallIntegerField(_("lots"))
    total_cards = models.PositiveSmallIntegerField(_("total cards"))
    preparation = models.CharField(_("preparation"), max_length=10, choices=Preparation.choices)
    custom_preparation = models.TextField(_("what must be installed"), blank=True)
    lot_price_usd = models.DecimalField(_("lot price (USD)"), max_digits=12, decimal_places=2)
    total_usd = models.DecimalField(_("total (USD)"), max_digits=12, decimal_places=2)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)
    # An unpaid order's lots are released at this time (ORDER_HOLD_MINUTES after it was placed
    # or sent back to awaiting payment). Empty while a live crypto payment holds them: the
    # payment's expiry releases them then (rental.services.intents).
    hold_until = models.DateTimeField(_("lots held until"), null=True, blank=True)
    # Provisioning and the rental's life.
    ssh_public_key = models.TextField(_("SSH public key"), blank=True)
    provisioning_issue = models.CharField(
        _("provisioning issue"), max_length=12, choices=ProvisioningIssue.choices, blank=True
    )
    provisioning_issue_detail = models.CharField(_("issue detail"), max_length=500, blank=True)
    prepared_at = models.DateTimeField(_("prepared"), null=True, blank=True)
    prepared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("prepared by"),
    )
    access_notes = models.TextField(_("access details"), blank=True)
    readiness_attempts = models.PositiveSmallIntegerField(_("readiness checks failed"), default=0)
    readiness_error = models.CharField(_("last readiness error"), max_length=500, blank=True)
    starts_at = models.DateTimeField(_("starts"), null=True, blank=True)
    ends_at = models.DateTimeField(_("ends"), null=True, blank=True)
    # The rental period the reminders belong to: 0 for the order's own, +1 per paid extension
    # (rental.services.extensions). Each period gets its own reminders (OrderEmail.period).
    period = models.PositiveSmallIntegerField(_("rental period"), default=0)
    # When an operator ended it before its end (ended early, the hours not delivered refunded).
    ended_early_at = models.DateTimeField(_("ended early"), null=True, blank=True)

    class Meta:
        verbose_name = _("order")
        verbose_name_plural = _("orders")
        ordering = ("-created_at", "-pk")
        constraints = [
            models.CheckConstraint(
                condition=Q(lots__gte=MIN_LOTS) & Q(lots__lte=MAX_LOTS), name="order_lots_in_range"
            ),
            models.CheckConstraint(
                condition=Q(duration_days__in=DURATIONS_DAYS), name="order_known_duration"
            ),
            models.CheckConstraint(
                condition=Q(total_cards=F("lots") * F("cards_per_lot")),
                name="order_cards_match_lots",
            ),
            models.CheckConstraint(
                condition=Q(total_usd=F("lot_price_usd") * F("lots")),
                name="order_total_is_lots_times_price",
            ),
            models.CheckConstraint(
                condition=~Q(preparation=Preparation.CUSTOM) | ~Q(custom_preparation=""),
                name="order_custom_preparation_described",
            ),
            models.CheckConstraint(
                condition=Q(status__in=OrderStatus.values), name="order_known_status"
            ),
            models.CheckConstraint(
                condition=~Q(status=OrderStatus.ACTIVE)
                | (Q(starts_at__isnull=False) & Q(ends_at__gt=F("starts_at"))),
                name="order_active_has_period",
            ),
            # An ended order ran (a period), or was ended early before it started (none).
            models.CheckConstraint(
                condition=~Q(status=OrderStatus.ENDED)
                | (Q(starts_at__isnull=False) & Q(ends_at__gt=F("starts_at")))
                | (Q(starts_at__isnull=True) & Q(ended_early_at__isnull=False)),
                name="order_ended_has_period",
            ),
            models.CheckConstraint(
                condition=Q(provisioning_issue__in=["", *ProvisioningIssue.values]),
                name="order_known_provisioning_issue",
            ),
        ]
        indexes = [
            models.Index(fields=("customer", "-created_at"), name="order_customer_recent"),
            models.Index(fields=("status", "ends_at"), name="order_status_ends"),
            models.Index(fields=("status", "hold_until"), name="order_status_hold"),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.model_name} × {self.lots}"

    @property
    def reference(self) -> str:
        return f"GR-{self.pk:06d}"

    @property
    def is_rocm(self) -> bool:
        return self.compute_platform == ComputePlatform.ROCM

    @property
    def can_be_cancelled_by_customer(self) -> bool:
        return self.status in CANCELLABLE_BY_CUSTOMER

    @property
    def accepts_ssh_key(self) -> bool:
        """The key may change until an operator has prepared the hosts with it."""
        return self.status in KEY_EDITABLE_STATUSES and self.prepared_at is None

    @property
    def provisioning_delayed(self) -> bool:
        return bool(self.provisioning_issue)


class OrderStatusChange(StatusChange):
    """One row per status change: who, when, from what, to what and why."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="status_changes")
    from_status, to_status = status_pair(max_length=20, choices=OrderStatus.choices)

    subject_field = "order"

    class Meta(StatusChange.Meta):
        verbose_name = _("order status change")
        verbose_name_plural = _("order status changes")


class IssueEventKind(models.TextChoices):
    RAISED = "raised", _("Raised")
    RESOLVED = "resolved", _("Resolved by an operator")
    CLEARED = "cleared", _("Cleared by a later report")


class ProvisioningIssueEvent(models.Model):
    """One row when an issue that is not a status change is raised or closed (a handover
    problem): the order's history shows who closed it and when."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="issue_events")
    issue = models.CharField(_("issue"), max_length=12, choices=ProvisioningIssue.choices)
    kind = models.CharField(_("event"), max_length=10, choices=IssueEventKind.choices)
    detail = models.CharField(_("detail"), max_length=500, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(_("when"), auto_now_add=True)

    class Meta:
        verbose_name = _("provisioning issue event")
        verbose_name_plural = _("provisioning issue events")
        ordering = ("created_at", "pk")
        constraints = [
            models.CheckConstraint(
                condition=Q(issue__in=ProvisioningIssue.values), name="issue_event_known_issue"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=IssueEventKind.values), name="issue_event_known_kind"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.issue} {self.kind}"


class HostState(models.TextChoices):
    # Registered; its host key is not confirmed or its host check has not passed yet.
    UNCHECKED = "unchecked", _("Not checked yet")
    AVAILABLE = "available", _("Available")
    # No new orders; the current rentals finish.
    DRAINING = "draining", _("Draining")
    MAINTENANCE = "maintenance", _("Maintenance")
    # Failed (an operator ended an order because of it, or a check failed): its cards are not
    # sold again until a host check passes.
    OUT_OF_SERVICE = "out_of_service", _("Out of service")
    # The host answered with another host key than the pinned one: nothing runs there until an
    # operator confirms a key again and a host check passes.
    HOST_KEY_CHANGED = "host_key_changed", _("Host key changed")


# Which state may follow which; every change goes through rental.hosts.services.host_set_state.
# A worker-managed host reaches "available" only through a passing host check
# (rental.hosts.services.host_check); a manually prepared host through an operator.
HOST_TRANSITIONS: dict[str, frozenset[str]] = {
    HostState.UNCHECKED: frozenset(
        {HostState.AVAILABLE, HostState.MAINTENANCE, HostState.OUT_OF_SERVICE,
         HostState.HOST_KEY_CHANGED}
    ),
    HostState.AVAILABLE: frozenset(
        {HostState.DRAINING, HostState.MAINTENANCE, HostState.OUT_OF_SERVICE,
         HostState.HOST_KEY_CHANGED, HostState.UNCHECKED}
    ),
    HostState.DRAINING: frozenset(
        {HostState.AVAILABLE, HostState.MAINTENANCE, HostState.OUT_OF_SERVICE,
         HostState.HOST_KEY_CHANGED, HostState.UNCHECKED}
    ),
    HostState.MAINTENANCE: frozenset(
        {HostState.AVAILABLE, HostState.DRAINING, HostState.OUT_OF_SERVICE,
         HostState.HOST_KEY_CHANGED, HostState.UNCHECKED}
    ),
    HostState.OUT_OF_SERVICE: frozenset(
        {HostState.AVAILABLE, HostState.MAINTENANCE, HostState.HOST_KEY_CHANGED,
         HostState.UNCHECKED}
    ),
    HostState.HOST_KEY_CHANGED: frozenset({HostState.UNCHECKED, HostState.OUT_OF_SERVICE}),
}


class HostManagement(models.TextChoices):
    # The worker prepares, verifies and tears down over SSH (Ansible playbooks).
    WORKER = "worker", _("By the worker over SSH")
    # Operators prepare the host by hand and confirm its teardown in /ops/.
    MANUAL = "manual", _("By hand (operators)")


MAX_CARDS_PER_HOST = 64


class Host(models.Model):
    """A machine whose cards are rented out; customers reach it over SSH.

    A worker-managed host also has the worker's administrative login (`admin_user`, a user
    with sudo; its private key is the file named by settings.HOSTS_ADMIN_KEY_FILE, never in
    the database) and a pinned host key: work runs only against that key.
    """

    name = models.CharField(_("name"), max_length=60, unique=True)
    gpu_model = models.ForeignKey(
        GpuModel, on_delete=models.PROTECT, related_name="hosts", verbose_name=_("GPU model")
    )
    cards = models.PositiveSmallIntegerField(_("cards"))
    ssh_host = models.CharField(_("SSH host"), max_length=253)
    ssh_port = models.PositiveIntegerField(_("SSH port"), default=22)
    ssh_user = models.CharField(_("SSH user"), max_length=32)
    management = models.CharField(
        _("prepared"),
        max_length=8,
        choices=HostManagement.choices,
        default=HostManagement.WORKER,
    )
    admin_user = models.CharField(_("administrative user"), max_length=32, blank=True)
    # Where the cards' device files are (/dev on a GPU host) and the vendor tool to read them
    # (empty: nvidia-smi or rocm-smi on the host's PATH).
    device_dir = models.CharField(_("device directory"), max_length=200, default="/dev")
    gpu_tool = models.CharField(_("GPU tool"), max_length=200, blank=True)
    state = models.CharField(
        _("state"), max_length=16, choices=HostState.choices, default=HostState.AVAILABLE
    )
    state_detail = models.CharField(_("why"), max_length=500, blank=True)
    # The host key: offered by the host when fetched, pinned once an operator confirmed it.
    host_key_offered = models.TextField(_("host key offered"), blank=True)
    host_key = models.TextField(_("pinned host key"), blank=True)
    host_key_pinned_at = models.DateTimeField(_("host key pinned"), null=True, blank=True)
    host_key_pinned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
        related_name="+", verbose_name=_("host key confirmed by"),
    )
    # The last host check: the cards as the vendor tool read them (index, uuid, name, memory).
    cards_seen = models.JSONField(_("cards seen"), default=list, blank=True)
    checked_at = models.DateTimeField(_("last host check"), null=True, blank=True)
    check_passed = models.BooleanField(_("host check passed"), null=True, blank=True)
    check_detail = models.CharField(_("host check detail"), max_length=1000, blank=True)
    # One job at a time on a host: the worker holding the lease (renewed while it works).
    lease_token = models.CharField(max_length=32, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    notes = models.CharField(_("operators' notes"), max_length=300, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("host")
        verbose_name_plural = _("hosts")
        ordering = ("name",)
        constraints = [
            models.CheckConstraint(
                condition=Q(cards__gte=1) & Q(cards__lte=MAX_CARDS_PER_HOST),
                name="host_cards_in_range",
            ),
            models.CheckConstraint(
                condition=Q(ssh_port__gte=1) & Q(ssh_port__lte=65535), name="host_port_in_range"
            ),
            models.CheckConstraint(
                condition=Q(state__in=HostState.values), name="host_known_state"
            ),
            models.CheckConstraint(
                condition=Q(management__in=HostManagement.values), name="host_known_management"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_available(self) -> bool:
        return self.state == HostState.AVAILABLE

    @property
    def worker_managed(self) -> bool:
        return self.management == HostManagement.WORKER

    @property
    def ssh_endpoint(self) -> str:
        """user@host:port, an IPv6 address in brackets."""
        return f"{self.ssh_user}@{host_port(self.ssh_host, self.ssh_port)}"


class HostStateChange(StatusChange):
    """One row per host state change: who, when, from what, to what and why."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="state_changes")
    # Named like every audit row's; the columns keep their first names.
    from_status, to_status = status_pair(
        max_length=16, choices=HostState.choices, db_columns=("from_state", "to_state")
    )

    subject_field = "host"

    class Meta(StatusChange.Meta):
        verbose_name = _("host state change")
        verbose_name_plural = _("host state changes")


class CardAllocation(models.Model):
    """One card of a host given to one order; released when the rental ends.

    The partial unique constraint is the last line of defence: a card is never held twice.
    """

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="allocations")
    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="allocations")
    lot = models.PositiveSmallIntegerField(_("lot"))
    card_index = models.PositiveSmallIntegerField(_("card"))
    allocated_at = models.DateTimeField(_("allocated"), auto_now_add=True)
    released_at = models.DateTimeField(_("released"), null=True, blank=True)

    class Meta:
        verbose_name = _("card allocation")
        verbose_name_plural = _("card allocations")
        ordering = ("order", "lot", "host", "card_index")
        constraints = [
            models.UniqueConstraint(
                fields=("host", "card_index"),
                condition=Q(released_at__isnull=True),
                name="card_allocated_once",
            ),
            models.CheckConstraint(
                condition=Q(card_index__lt=MAX_CARDS_PER_HOST), name="card_index_in_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.host} #{self.card_index} → {self.order_id}"


class OrderEmailKind(models.TextChoices):
    PAYMENT_RECEIVED = "payment_received", _("Payment received")
    PROVISIONING_DELAYED = "provisioning_delayed", _("Provisioning delayed")
    READY = "ready", _("Ready")
    REMINDER_72H = "reminder_72h", _("Ends in 72 hours")
    REMINDER_24H = "reminder_24h", _("Ends in 24 hours")
    REMINDER_1H = "reminder_1h", _("Ends in 1 hour")
    ENDED = "ended", _("Ended")


# Reminder → hours before the end of the rental when it is due.
REMINDER_HOURS: dict[str, int] = {
    OrderEmailKind.REMINDER_1H: 1,
    OrderEmailKind.REMINDER_24H: 24,
    OrderEmailKind.REMINDER_72H: 72,
}


class OrderEmail(models.Model):
    """An email sent for one event of one order: the unique pair makes it once only."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="emails")
    kind = models.CharField(_("email"), max_length=24, choices=OrderEmailKind.choices)
    # The order's rental period (Order.period) it was sent for: an extension starts a new
    # period, whose reminders are due again before the new end.
    period = models.PositiveSmallIntegerField(_("rental period"), default=0)
    sent_at = models.DateTimeField(_("sent"), auto_now_add=True)

    class Meta:
        verbose_name = _("order email")
        verbose_name_plural = _("order emails")
        ordering = ("sent_at", "pk")
        constraints = [
            models.UniqueConstraint(
                fields=("order", "kind", "period"), name="order_email_once_per_period"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.order_id}: {self.kind}"


class ExtensionStatus(models.TextChoices):
    AWAITING_PAYMENT = "awaiting_payment", _("Awaiting payment")
    PAID = "paid", _("Paid")
    # The customer cancelled it, or the order ended before it was paid.
    CANCELLED = "cancelled", _("Cancelled")


# Which status may follow which; every change goes through
# rental.services.extensions.extension_set_status, which checks this map.
EXTENSION_TRANSITIONS: dict[str, frozenset[str]] = {
    ExtensionStatus.AWAITING_PAYMENT: frozenset(
        {ExtensionStatus.PAID, ExtensionStatus.CANCELLED}
    ),
    ExtensionStatus.PAID: frozenset(),
    ExtensionStatus.CANCELLED: frozenset(),
}


class OrderExtension(models.Model):
    """More days on an active order, priced when asked for (the lot price of that duration ×
    the order's lots, frozen like an order's); the same cards stay allocated and, once paid,
    the order's end moves by the duration."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="extensions")
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="order_extensions"
    )
    duration_days = models.PositiveSmallIntegerField(_("duration (days)"), choices=Duration.choices)
    lots = models.PositiveSmallIntegerField(_("lots"))
    lot_price_usd = models.DecimalField(_("lot price (USD)"), max_digits=12, decimal_places=2)
    total_usd = models.DecimalField(_("total (USD)"), max_digits=12, decimal_places=2)
    status = models.CharField(
        _("status"),
        max_length=20,
        choices=ExtensionStatus.choices,
        default=ExtensionStatus.AWAITING_PAYMENT,
    )
    # Its price is held until then without a payment (ORDER_HOLD_MINUTES, like an order's
    # lots); NULL while a stablecoin payment holds it (that payment's expiry releases it).
    hold_until = models.DateTimeField(_("price held until"), null=True, blank=True)
    # Set when paid: the period it added (from the order's end before, to its end after).
    period_starts_at = models.DateTimeField(_("extends from"), null=True, blank=True)
    period_ends_at = models.DateTimeField(_("extends to"), null=True, blank=True)
    paid_at = models.DateTimeField(_("paid"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("order extension")
        verbose_name_plural = _("order extensions")
        ordering = ("created_at", "pk")
        constraints = [
            models.CheckConstraint(
                condition=Q(duration_days__in=DURATIONS_DAYS), name="extension_known_duration"
            ),
            models.CheckConstraint(
                condition=Q(total_usd=F("lot_price_usd") * F("lots")),
                name="extension_total_is_lots_times_price",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ExtensionStatus.values), name="extension_known_status"
            ),
            models.CheckConstraint(
                condition=~Q(status=ExtensionStatus.PAID)
                | (
                    Q(paid_at__isnull=False)
                    & Q(period_starts_at__isnull=False)
                    & Q(period_ends_at__gt=F("period_starts_at"))
                ),
                name="extension_paid_has_period",
            ),
            # One extension waiting for payment per order at a time.
            models.UniqueConstraint(
                fields=("order",),
                condition=Q(status=ExtensionStatus.AWAITING_PAYMENT),
                name="extension_one_awaiting_per_order",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference}: {self.order_id} +{self.duration_days}d"

    @property
    def reference(self) -> str:
        return f"EXT-{self.pk:06d}"


class ExtensionStatusChange(StatusChange):
    """One row per extension status change: who, when, from what, to what and why."""

    extension = models.ForeignKey(
        OrderExtension, on_delete=models.CASCADE, related_name="status_changes"
    )
    from_status, to_status = status_pair(max_length=20, choices=ExtensionStatus.choices)

    subject_field = "extension"

    class Meta(StatusChange.Meta):
        verbose_name = _("extension status change")
        verbose_name_plural = _("extension status changes")


from .hosts.models import (  # noqa: E402, F401  (registered with the rental app)
    TENANCY_TRANSITIONS,
    Tenancy,
    TenancyStatus,
    TenancyStatusChange,
    TenancyStep,
)
