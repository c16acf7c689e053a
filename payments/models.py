"""The USD ledger: double entry, append-only.

Sign convention: an entry's amount is signed and every transaction's entries sum to zero. A
customer's balance account holds what we owe the customer (a top-up adds a positive entry there
and a negative one on the account the money came from); revenue grows positive; the accounts
money comes from (crypto receipts, adjustments) go negative. The trial balance (the sum of all
entries) is therefore always zero, and a customer's balance is the plain sum of their entries.
The database enforces the balance of every transaction at commit and refuses updates and
deletes (migration 0002); corrections are reversing transactions.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

AMOUNT = {"max_digits": 14, "decimal_places": 2}


class LedgerAccountKind(models.TextChoices):
    CUSTOMER_BALANCE = "customer_balance", _("Customer balance")
    CRYPTO_RECEIPTS = "crypto_receipts", _("Crypto receipts")
    REVENUE = "revenue", _("Revenue")
    ADJUSTMENTS = "adjustments", _("Adjustments")
    REFUNDS = "refunds", _("Refunds")


class LedgerAccount(models.Model):
    kind = models.CharField(_("kind"), max_length=20, choices=LedgerAccountKind.choices)
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_accounts",
    )
    asset = models.CharField(_("asset"), max_length=16, blank=True)
    network = models.CharField(_("network"), max_length=32, blank=True)
    # Cached sum of the account's entries; changes only under this row's lock, in the same
    # transaction as the entries (payments.services.ledger.ledger_post).
    balance = models.DecimalField(_("balance (USD)"), default=0, **AMOUNT)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("ledger account")
        verbose_name_plural = _("ledger accounts")
        constraints = [
            models.UniqueConstraint(
                fields=("customer",),
                condition=Q(kind="customer_balance"),
                name="ledgeraccount_one_balance_per_customer",
            ),
            models.UniqueConstraint(
                fields=("kind", "asset", "network"),
                condition=Q(customer__isnull=True),
                name="ledgeraccount_one_system_account",
            ),
            models.CheckConstraint(
                condition=Q(kind="customer_balance", customer__isnull=False)
                | (~Q(kind="customer_balance") & Q(customer__isnull=True)),
                name="ledgeraccount_customer_iff_balance",
            ),
            models.CheckConstraint(
                condition=~Q(kind="customer_balance") | Q(balance__gte=0),
                name="ledgeraccount_customer_balance_not_negative",
            ),
        ]

    def __str__(self) -> str:
        if self.customer_id:
            return f"{self.get_kind_display()} · {self.customer}"
        suffix = " · ".join(part for part in (self.asset, self.network) if part)
        return f"{self.get_kind_display()}{' · ' + suffix if suffix else ''}"


class TransactionKind(models.TextChoices):
    TOP_UP = "top_up", _("Top-up")
    ORDER_PAYMENT = "order_payment", _("Order payment")
    OVERPAYMENT_CREDIT = "overpayment_credit", _("Overpayment credit")
    ADJUSTMENT = "adjustment", _("Adjustment")
    REFUND = "refund", _("Refund")
    REVERSAL = "reversal", _("Reversal")


class LedgerTransaction(models.Model):
    kind = models.CharField(_("kind"), max_length=20, choices=TransactionKind.choices)
    memo = models.CharField(_("memo"), max_length=500)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("acting user"),
    )
    order = models.ForeignKey(
        "rental.Order",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    reverses = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by"
    )
    idempotency_key = models.CharField(_("idempotency key"), max_length=200, unique=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = _("ledger transaction")
        verbose_name_plural = _("ledger transactions")
        ordering = ("created_at", "pk")
        constraints = [
            # One payment transaction per order, whatever paid it.
            models.UniqueConstraint(
                fields=("order",),
                condition=Q(kind="order_payment"),
                name="ledgertransaction_one_payment_per_order",
            ),
            models.CheckConstraint(
                condition=~Q(kind="order_payment") | Q(order__isnull=False),
                name="ledgertransaction_payment_has_order",
            ),
            models.UniqueConstraint(
                fields=("reverses",),
                condition=Q(reverses__isnull=False),
                name="ledgertransaction_reversed_once",
            ),
            models.CheckConstraint(
                condition=Q(kind="reversal", reverses__isnull=False)
                | (~Q(kind="reversal") & Q(reverses__isnull=True)),
                name="ledgertransaction_reversal_points_back",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()}: {self.memo}"


class LedgerEntry(models.Model):
    transaction = models.ForeignKey(
        LedgerTransaction, on_delete=models.PROTECT, related_name="entries"
    )
    account = models.ForeignKey(LedgerAccount, on_delete=models.PROTECT, related_name="entries")
    amount = models.DecimalField(_("amount (USD)"), **AMOUNT)

    class Meta:
        verbose_name = _("ledger entry")
        verbose_name_plural = _("ledger entries")
        ordering = ("transaction_id", "pk")
        indexes = [models.Index(fields=("account", "transaction"), name="ledgerentry_account_txn")]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="ledgerentry_not_zero"),
        ]

    def __str__(self) -> str:
        return f"{self.account}: {self.amount}"


class ReconciliationRun(models.Model):
    """A stored reconciliation report: run by finance on demand and daily by Celery beat."""

    period_start = models.DateField(_("period start"))
    period_end = models.DateField(_("period end"))
    started_at = models.DateTimeField(_("started"), auto_now_add=True)
    triggered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("run by"),
    )
    ok = models.BooleanField(_("no discrepancy"))
    discrepancies = models.JSONField(_("discrepancies"), default=list)
    totals_by_kind = models.JSONField(_("totals by kind"), default=dict)
    trial_balance = models.DecimalField(_("trial balance"), **AMOUNT)

    class Meta:
        verbose_name = _("reconciliation run")
        verbose_name_plural = _("reconciliation runs")
        ordering = ("-started_at", "-pk")

    def __str__(self) -> str:
        return f"{self.period_start} – {self.period_end}: {'OK' if self.ok else 'discrepancies'}"
