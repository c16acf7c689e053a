from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from .pricing import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS


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
    lots_in_stock = models.PositiveIntegerField(
        _("lots in stock"),
        default=0,
        help_text=_("Lots free to order. Orders awaiting payment hold their lots."),
    )
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
                condition=Q(lots_in_stock__gte=0), name="gpumodel_stock_not_negative"
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
    OrderStatus.PAID: frozenset({OrderStatus.PROVISIONING}),
    OrderStatus.PROVISIONING: frozenset({OrderStatus.ACTIVE}),
    OrderStatus.ACTIVE: frozenset({OrderStatus.ENDED}),
    OrderStatus.ENDED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}
# Statuses whose order no longer holds its lots.
RELEASED_STATUSES = frozenset({OrderStatus.CANCELLED, OrderStatus.ENDED})
CANCELLABLE_BY_CUSTOMER = frozenset({OrderStatus.AWAITING_PAYMENT})


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
    paid_notified_at = models.DateTimeField(_("payment email sent"), null=True, blank=True)

    class Meta:
        verbose_name = _("order")
        verbose_name_plural = _("orders")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=("customer", "-created_at"), name="order_customer_recent")]
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


class OrderStatusChange(models.Model):
    """One row per status change: who, when, from what, to what and why."""

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(
        _("from"), max_length=20, choices=OrderStatus.choices, blank=True
    )
    to_status = models.CharField(_("to"), max_length=20, choices=OrderStatus.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
    )
    reason = models.CharField(_("reason"), max_length=500, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True)

    class Meta:
        verbose_name = _("order status change")
        verbose_name_plural = _("order status changes")
        ordering = ("created_at", "pk")

    def __str__(self) -> str:
        return f"{self.order_id}: {self.from_status or '∅'} → {self.to_status}"
