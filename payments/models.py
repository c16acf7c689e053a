"""The USD ledger: double entry, append-only.

Sign convention: an entry's amount is signed and every transaction's entries sum to zero. A
customer's balance account holds what we owe the customer (a top-up adds a positive entry there
and a negative one on the account the money came from); revenue grows positive; the accounts
money comes from (crypto receipts, adjustments) go negative. The trial balance (the sum of all
entries) is therefore always zero, and a customer's balance is the plain sum of their entries.
The database enforces the balance of every transaction at commit and refuses updates and
deletes (migration 0002); corrections are reversing transactions.
"""

import re

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower
from django.utils.translation import gettext_lazy as _

from statemachine.audit import StatusChange, status_pair

AMOUNT = {"max_digits": 14, "decimal_places": 2}


class LedgerAccountKind(models.TextChoices):
    CUSTOMER_BALANCE = "customer_balance", _("Customer balance")
    CRYPTO_RECEIPTS = "crypto_receipts", _("Crypto receipts")
    REVENUE = "revenue", _("Revenue")
    ADJUSTMENTS = "adjustments", _("Adjustments")
    REFUNDS = "refunds", _("Refunds")
    # Crypto received but not yet allocated to an order, a top-up or a refund (a suspense
    # account): settlement and operators move money out of it.
    UNALLOCATED = "unallocated", _("Receipts awaiting allocation")
    # Balance a customer asked to withdraw, held until finance's transfer is seen on chain
    # (payments.withdrawals.services), then moved to the withdrawals paid of its asset/network.
    WITHDRAWALS_PENDING = "withdrawals_pending", _("Withdrawals pending")
    WITHDRAWALS_PAID = "withdrawals_paid", _("Withdrawals paid out")


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
    # transaction as the entries (payments.ledger.services.posting.ledger_post).
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
    CRYPTO_RECEIPT = "crypto_receipt", _("Crypto receipt")
    TOP_UP = "top_up", _("Top-up")
    ORDER_PAYMENT = "order_payment", _("Order payment")
    OVERPAYMENT_CREDIT = "overpayment_credit", _("Overpayment credit")
    # Money received on a payment whose order no longer needed it (closed, cancelled).
    PAYMENT_CREDIT = "payment_credit", _("Payment credited to the balance")
    ADJUSTMENT = "adjustment", _("Adjustment")
    REFUND = "refund", _("Refund")
    REVERSAL = "reversal", _("Reversal")
    EXTENSION_PAYMENT = "extension_payment", _("Extension payment")
    WITHDRAWAL_REQUEST = "withdrawal_request", _("Withdrawal requested")
    WITHDRAWAL_RETURN = "withdrawal_return", _("Withdrawal returned")
    WITHDRAWAL_PAID = "withdrawal_paid", _("Withdrawal paid")


# The ledger transactions that issue a receipt to the customer (payments.ledger.services.receipts),
# numbered without gaps in the transaction that posts them.
RECEIPT_KINDS = frozenset(
    {
        TransactionKind.ORDER_PAYMENT,
        TransactionKind.EXTENSION_PAYMENT,
        TransactionKind.TOP_UP,
        TransactionKind.REFUND,
        TransactionKind.WITHDRAWAL_PAID,
    }
)


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
    payment = models.ForeignKey(
        "payments.CryptoPayment",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    extension = models.ForeignKey(
        "rental.OrderExtension",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
    )
    withdrawal = models.ForeignKey(
        "payments.Withdrawal",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="ledger_transactions",
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
            # One payment transaction per extension, one refund of an order ended early.
            models.UniqueConstraint(
                fields=("extension",),
                condition=Q(kind="extension_payment"),
                name="ledgertransaction_one_payment_per_extension",
            ),
            models.CheckConstraint(
                condition=~Q(kind="extension_payment") | Q(extension__isnull=False),
                name="ledgertransaction_extension_payment_has_extension",
            ),
            models.UniqueConstraint(
                fields=("order",),
                condition=Q(kind="refund", order__isnull=False),
                name="ledgertransaction_one_refund_per_order",
            ),
            models.CheckConstraint(
                condition=~Q(
                    kind__in=("withdrawal_request", "withdrawal_return", "withdrawal_paid")
                )
                | Q(withdrawal__isnull=False),
                name="ledgertransaction_withdrawal_kinds_have_withdrawal",
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


# ---------------------------------------------------------------------------------------------
# Crypto payments
# ---------------------------------------------------------------------------------------------

TOKEN_UNITS = {"max_digits": 78, "decimal_places": 0}  # uint256 fits in NUMERIC(78, 0)


class AddressIndexCounter(models.Model):
    """One row: the next BIP-44 index to derive. Taken under its row lock, never reused."""

    next_index = models.PositiveBigIntegerField(default=0)

    class Meta:
        verbose_name = _("address index counter")

    def __str__(self) -> str:
        return f"next index {self.next_index}"


class DepositAddress(models.Model):
    """A deposit address derived from PAYMENT_XPUB; one per payment, never reused."""

    derivation_index = models.PositiveBigIntegerField(_("derivation index"), unique=True)
    address = models.CharField(_("address"), max_length=42, unique=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("deposit address")
        verbose_name_plural = _("deposit addresses")
        # The watcher matches the lower-case addresses of Transfer logs against this.
        indexes = [models.Index(Lower("address"), name="depositaddress_lower")]

    def __str__(self) -> str:
        return self.address


class PaymentPurpose(models.TextChoices):
    ORDER = "order", _("Order")
    TOP_UP = "top_up", _("Top-up")
    # Pays an order extension: settled like a top-up whose credit then pays the extension
    # from the balance (payments.crypto.services.extensions); money stays on the balance if the
    # extension can no longer be paid.
    EXTENSION = "extension", _("Extension")


class PaymentStatus(models.TextChoices):
    AWAITING = "awaiting", _("Waiting for the transfer")
    DETECTED = "detected", _("Transfer seen, confirming")
    CONFIRMED = "confirmed", _("Confirmed")
    EXPIRED = "expired", _("Expired")
    # The order was paid another way, cancelled or settled by another payment: the payment asks
    # for nothing more, and money that arrives on it goes to the customer's balance.
    CLOSED = "closed", _("Closed")
    NEEDS_REVIEW = "needs_review", _("Under review")
    RESOLVED = "resolved", _("Resolved")
    INVALID = "invalid", _("Invalid")


class ReviewReason(models.TextChoices):
    UNDERPAID = "underpaid", _("Underpaid")
    PAID_LATE = "paid_late", _("Paid after expiry")
    OVERPAID = "overpaid", _("Overpaid")
    UNMATCHED = "unmatched", _("Unmatched transfer")
    REVERSED = "reversed", _("Reversed after confirmation")


# Which status may follow which. Every change goes through
# payments.crypto.services.status.payment_set_status, which checks this map.
PAYMENT_TRANSITIONS: dict[str, frozenset[str]] = {
    # Seen and confirmed in one look (a declaration, a scan after a pause) skips "detected".
    PaymentStatus.AWAITING: frozenset(
        {
            PaymentStatus.DETECTED,
            PaymentStatus.CONFIRMED,
            PaymentStatus.NEEDS_REVIEW,
            PaymentStatus.EXPIRED,
            PaymentStatus.CLOSED,
        }
    ),
    PaymentStatus.DETECTED: frozenset(
        {
            PaymentStatus.AWAITING,  # the only transfer seen was dropped by a reorganisation
            PaymentStatus.CONFIRMED,
            PaymentStatus.NEEDS_REVIEW,
            PaymentStatus.CLOSED,
        }
    ),
    PaymentStatus.CONFIRMED: frozenset({PaymentStatus.NEEDS_REVIEW}),  # reversed
    PaymentStatus.EXPIRED: frozenset({PaymentStatus.NEEDS_REVIEW}),  # paid late, reversed
    PaymentStatus.CLOSED: frozenset({PaymentStatus.NEEDS_REVIEW}),  # reversed
    PaymentStatus.NEEDS_REVIEW: frozenset({PaymentStatus.RESOLVED, PaymentStatus.INVALID}),
    PaymentStatus.RESOLVED: frozenset({PaymentStatus.NEEDS_REVIEW}),  # reversed, paid again
    PaymentStatus.INVALID: frozenset({PaymentStatus.NEEDS_REVIEW}),  # paid again
}

# The money states in which the watcher still looks at the address.
WATCHED_STATUSES = (
    PaymentStatus.AWAITING,
    PaymentStatus.DETECTED,
    PaymentStatus.EXPIRED,
    PaymentStatus.CLOSED,
)
# Open payments: before expiry, nothing or not yet enough confirmed.
LIVE_STATUSES = (PaymentStatus.AWAITING, PaymentStatus.DETECTED)
# Nothing more is expected on these: the page stops asking for its status.
FINAL_STATUSES = (PaymentStatus.CONFIRMED, PaymentStatus.RESOLVED, PaymentStatus.INVALID)
# The customer may still say "I have paid" while money is still due on the payment.
DECLARABLE_STATUSES = LIVE_STATUSES + (PaymentStatus.EXPIRED,)


class PaymentEventKind(models.TextChoices):
    """What a payment's history row records (PaymentEvent.kind)."""

    CREATED = "created", _("Payment opened")
    SEEN = "seen", _("Transfer seen on chain")
    REORGED = "reorged", _("Transfer dropped by a reorganisation")
    CONFIRMED_TRANSFER = "confirmed_transfer", _("Transfer confirmed")
    REVERSED_TRANSFER = "reversed_transfer", _("Transfer reversed after confirmation")
    DECLARED = "declared", _("Customer declared the payment")
    STATUS = "status", _("Status changed")
    CREDITED = "credited_to_balance", _("Credited to the USD balance")
    OPERATOR_NOTE = "operator_note", _("Operator note")


class CryptoPayment(models.Model):
    """One request to pay in a stablecoin: asset, network, address, exact amount, expiry."""

    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="crypto_payments"
    )
    purpose = models.CharField(_("purpose"), max_length=10, choices=PaymentPurpose.choices)
    order = models.ForeignKey(
        "rental.Order",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="crypto_payments",
    )
    extension = models.ForeignKey(
        "rental.OrderExtension",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="crypto_payments",
    )
    network = models.CharField(_("network"), max_length=16)
    chain_id = models.PositiveBigIntegerField(_("chain id"))
    asset = models.CharField(_("asset"), max_length=16)
    token_address = models.CharField(_("token contract"), max_length=42)
    decimals = models.PositiveSmallIntegerField(_("decimals"))
    deposit_address = models.OneToOneField(
        DepositAddress, on_delete=models.PROTECT, related_name="payment"
    )
    amount_due_usd = models.DecimalField(_("amount due (USD)"), **AMOUNT)
    amount_due_units = models.DecimalField(_("amount due (token units)"), **TOKEN_UNITS)
    received_units = models.DecimalField(_("confirmed received (units)"), default=0, **TOKEN_UNITS)
    seen_units = models.DecimalField(_("seen, not yet confirmed (units)"), default=0, **TOKEN_UNITS)
    # The ledger side of the money, kept under the payment's row lock: the confirmed units
    # whose value is in the receipts, that value (rounded down once, on the cumulative amount,
    # so splitting a payment below the cent never loses a cent), the value of reversed
    # transfers written off since, and how much of all that has left the receipts awaiting
    # allocation (revenue, the customer's balance, refunds).
    receipted_units = models.DecimalField(_("units in the ledger"), default=0, **TOKEN_UNITS)
    receipted_usd = models.DecimalField(_("receipts in the ledger (USD)"), default=0, **AMOUNT)
    written_off_usd = models.DecimalField(_("reversed, written off (USD)"), default=0, **AMOUNT)
    allocated_usd = models.DecimalField(_("allocated (USD)"), default=0, **AMOUNT)
    # The head block when the payment was opened: no scan starts after it while it is watched.
    created_block = models.PositiveBigIntegerField(_("head block at creation"), null=True)
    confirmations_required = models.PositiveIntegerField(_("confirmations required"))
    status = models.CharField(
        _("status"), max_length=16, choices=PaymentStatus.choices, default=PaymentStatus.AWAITING
    )
    review_reason = models.CharField(
        _("review reason"), max_length=16, choices=ReviewReason.choices, blank=True
    )
    expires_at = models.DateTimeField(_("expires"))
    monitor_until = models.DateTimeField(_("watched until"))
    declared_at = models.DateTimeField(_("declared paid"), null=True, blank=True)
    declared_tx_hash = models.CharField(_("declared transaction"), max_length=66, blank=True)
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("crypto payment")
        verbose_name_plural = _("crypto payments")
        ordering = ("-created_at", "-pk")
        indexes = [
            models.Index(fields=("status", "expires_at"), name="payment_status_expiry"),
            models.Index(fields=("network", "status"), name="payment_network_status"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(purpose="order", order__isnull=False, extension__isnull=True)
                | Q(purpose="top_up", order__isnull=True, extension__isnull=True)
                | Q(purpose="extension", order__isnull=True, extension__isnull=False),
                name="payment_target_matches_purpose",
            ),
            models.CheckConstraint(
                condition=Q(amount_due_units__gt=0), name="payment_due_positive"
            ),
            models.CheckConstraint(
                condition=Q(received_units__gte=0) & Q(seen_units__gte=0),
                name="payment_received_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(monitor_until__gte=models.F("expires_at")),
                name="payment_monitored_past_expiry",
            ),
            models.CheckConstraint(
                condition=~Q(status="needs_review") | ~Q(review_reason=""),
                name="payment_review_has_reason",
            ),
            models.CheckConstraint(
                condition=Q(allocated_usd__gte=0)
                & Q(allocated_usd__lte=models.F("receipted_usd") + models.F("written_off_usd")),
                name="payment_allocates_what_it_received",
            ),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.asset} on {self.network} → {self.deposit_address_id}"

    @property
    def reference(self) -> str:
        return f"PAY-{self.pk:06d}"

    @staticmethod
    def pk_from_reference(text: str) -> int | None:
        """The id in a reference as pages show it ("PAY-000001", any case) or a bare number
        ("1", "000001"); None when the text is neither."""
        match = re.fullmatch(r"(?:PAY-)?(\d+)", text.strip(), re.IGNORECASE)
        return int(match.group(1)) if match else None

    @property
    def unallocated_usd(self):
        """What the payment brought into the receipts awaiting allocation and is still there."""
        return self.receipted_usd + self.written_off_usd - self.allocated_usd


class TransferStatus(models.TextChoices):
    SEEN = "seen", _("Seen")
    CONFIRMED = "confirmed", _("Confirmed")
    REORGED = "reorged", _("Dropped by a reorganisation")
    # Its block vanished after it was confirmed: its value stays in the ledger until an
    # operator decides (the payment goes to review, reconciliation shows the difference).
    REVERSED = "reversed", _("Reversed after confirmation")


# Which status may follow which; every change goes through
# payments.chain.transfer_status.transfers_set_status (in batches: storing, confirming), which
# checks this map.
CHAIN_TRANSFER_TRANSITIONS: dict[str, frozenset[str]] = {
    # Confirmed at N blocks with its block hash unchanged; reorged when the hash changed first;
    # seen again when its log turns up in another block (a scan after a reorganisation).
    TransferStatus.SEEN: frozenset(
        {TransferStatus.CONFIRMED, TransferStatus.REORGED, TransferStatus.SEEN}
    ),
    TransferStatus.REORGED: frozenset({TransferStatus.SEEN}),
    # Reversed when its block vanished after the confirmation (the payment goes to review);
    # seen again when the transaction is mined anew in another block.
    TransferStatus.CONFIRMED: frozenset({TransferStatus.REVERSED, TransferStatus.SEEN}),
    TransferStatus.REVERSED: frozenset({TransferStatus.SEEN}),
}


class ChainTransfer(models.Model):
    """One Transfer log of a configured token to one of our deposit addresses."""

    network = models.CharField(_("network"), max_length=16)
    chain_id = models.PositiveBigIntegerField(_("chain id"))
    tx_hash = models.CharField(_("transaction hash"), max_length=66)
    log_index = models.PositiveIntegerField(_("log index"))
    block_number = models.PositiveBigIntegerField(_("block"))
    block_hash = models.CharField(_("block hash"), max_length=66)
    block_timestamp = models.DateTimeField(_("block time"))
    token_address = models.CharField(_("token contract"), max_length=42)
    from_address = models.CharField(_("from"), max_length=42)
    # Not indexed: transfers are found by payment, block and hash, never by address (a scan
    # wrote two index entries a transfer for it: the column and its LIKE twin).
    to_address = models.CharField(_("to"), max_length=42)
    amount_units = models.DecimalField(_("amount (units)"), **TOKEN_UNITS)
    payment = models.ForeignKey(
        CryptoPayment,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfers",
    )
    status = models.CharField(
        _("status"), max_length=10, choices=TransferStatus.choices, default=TransferStatus.SEEN
    )
    late = models.BooleanField(_("after expiry"), default=False)
    # Its units are counted in its payment's receipted_units (once, even if it is reorganised
    # and confirmed again).
    receipted = models.BooleanField(_("in the ledger"), default=False)
    seen_at = models.DateTimeField(_("seen"), auto_now_add=True)
    confirmed_at = models.DateTimeField(_("confirmed"), null=True, blank=True)

    class Meta:
        verbose_name = _("chain transfer")
        verbose_name_plural = _("chain transfers")
        ordering = ("block_number", "log_index")
        constraints = [
            models.UniqueConstraint(
                fields=("chain_id", "tx_hash", "log_index"), name="chaintransfer_unique_log"
            ),
            models.CheckConstraint(condition=Q(amount_units__gte=0), name="chaintransfer_amount"),
        ]

    def __str__(self) -> str:
        return f"{self.tx_hash}#{self.log_index} → {self.to_address}"


class ChainCursor(models.Model):
    """Where the watcher of one network has read up to; claimed by one scan at a time."""

    network = models.CharField(_("network"), max_length=16, unique=True)
    next_block = models.PositiveBigIntegerField(_("next block to read"))
    last_block_hash = models.CharField(_("hash of the last block read"), max_length=66, blank=True)
    lease_token = models.CharField(max_length=36, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    # The database session (PostgreSQL's backend pid) of the scan holding the lease: once that
    # session is gone (its worker killed), the lease is over before lease_until.
    lease_session = models.PositiveIntegerField(null=True, blank=True)
    last_scan_at = models.DateTimeField(null=True, blank=True)
    # The chain's head at the last successful scan (lag = last_head - (next_block - 1)), and
    # when the last error was recorded (cleared by the next successful scan): for /ops/health/.
    last_head = models.PositiveBigIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("chain cursor")
        verbose_name_plural = _("chain cursors")

    def __str__(self) -> str:
        return f"{self.network} @ {self.next_block}"


class ChainBlock(models.Model):
    """A block hash the watcher read (each scan's last block, every block holding one of our
    transfers): after a reorganisation the scan walks back through these to the fork point."""

    network = models.CharField(_("network"), max_length=16)
    number = models.PositiveBigIntegerField(_("block"))
    hash = models.CharField(_("block hash"), max_length=66)

    class Meta:
        verbose_name = _("chain block")
        verbose_name_plural = _("chain blocks")
        constraints = [
            models.UniqueConstraint(fields=("network", "number"), name="chainblock_unique")
        ]

    def __str__(self) -> str:
        return f"{self.network} #{self.number} {self.hash}"


class PaymentEvent(StatusChange):
    """The payment's history: every state change, declaration and operator action (an event
    that is no state change leaves from/to empty)."""

    payment = models.ForeignKey(CryptoPayment, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(_("event"), max_length=32, choices=PaymentEventKind.choices)
    from_status, to_status = status_pair(max_length=16, to_blank=True)
    data = models.JSONField(default=dict, blank=True)
    # The customer's email about this event (payments.crypto.services.emails), sent once.
    emailed_at = models.DateTimeField(_("emailed"), null=True, blank=True)

    subject_field = "payment"

    class Meta(StatusChange.Meta):
        verbose_name = _("payment event")
        verbose_name_plural = _("payment events")

    def __str__(self) -> str:
        return f"{self.payment_id}: {self.kind}"


class WithdrawalStatus(models.TextChoices):
    REQUESTED = "requested", _("Requested")
    APPROVED = "approved", _("Approved, waiting for the transfer")
    # Finance entered the hash of its transfer; the worker checks it on chain.
    SENT = "sent", _("Sent, checking on chain")
    PAID = "paid", _("Paid")
    REJECTED = "rejected", _("Rejected")


# Which status may follow which; every change goes through
# payments.withdrawals.services.withdrawal_set_status, which checks this map.
WITHDRAWAL_TRANSITIONS: dict[str, frozenset[str]] = {
    WithdrawalStatus.REQUESTED: frozenset({WithdrawalStatus.APPROVED, WithdrawalStatus.REJECTED}),
    WithdrawalStatus.APPROVED: frozenset({WithdrawalStatus.SENT, WithdrawalStatus.REJECTED}),
    # Back to approved when finance takes a wrong hash back; rejected only before any money
    # left (finance's decision, with a reason).
    WithdrawalStatus.SENT: frozenset(
        {WithdrawalStatus.PAID, WithdrawalStatus.APPROVED, WithdrawalStatus.REJECTED}
    ),
    WithdrawalStatus.PAID: frozenset(),
    WithdrawalStatus.REJECTED: frozenset(),
}
# The amount is held in "withdrawals pending" in these.
WITHDRAWAL_PENDING_STATUSES = (
    WithdrawalStatus.REQUESTED,
    WithdrawalStatus.APPROVED,
    WithdrawalStatus.SENT,
)


class Withdrawal(models.Model):
    """A customer's request to take balance home in a stablecoin. The server holds no key:
    finance sends from its own wallet and enters the hash; the worker checks the transfer."""

    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="withdrawals"
    )
    amount_usd = models.DecimalField(_("amount (USD)"), **AMOUNT)
    network = models.CharField(_("network"), max_length=16)
    chain_id = models.PositiveBigIntegerField(_("chain id"))
    asset = models.CharField(_("asset"), max_length=16)
    token_address = models.CharField(_("token contract"), max_length=42)
    decimals = models.PositiveSmallIntegerField(_("decimals"))
    amount_units = models.DecimalField(_("amount (token units)"), **TOKEN_UNITS)
    to_address = models.CharField(_("to address"), max_length=42)
    status = models.CharField(
        _("status"),
        max_length=12,
        choices=WithdrawalStatus.choices,
        default=WithdrawalStatus.REQUESTED,
    )
    tx_hash = models.CharField(_("transaction hash"), max_length=66, blank=True)
    confirmations_required = models.PositiveIntegerField(_("confirmations required"))
    # What the last on-chain check found (shown to finance and the customer while pending).
    check_detail = models.CharField(_("last check"), max_length=500, blank=True)
    checked_at = models.DateTimeField(_("checked"), null=True, blank=True)
    block_number = models.PositiveBigIntegerField(_("block"), null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("approved or rejected by"),
    )
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)
    reject_reason = models.CharField(_("rejection reason"), max_length=500, blank=True)
    paid_at = models.DateTimeField(_("paid"), null=True, blank=True)
    created_at = models.DateTimeField(_("requested"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("withdrawal")
        verbose_name_plural = _("withdrawals")
        ordering = ("-created_at", "-pk")
        indexes = [models.Index(fields=("status", "created_at"), name="withdrawal_status")]
        constraints = [
            models.CheckConstraint(condition=Q(amount_usd__gt=0), name="withdrawal_positive"),
            models.CheckConstraint(
                condition=Q(amount_units__gt=0), name="withdrawal_units_positive"
            ),
            models.CheckConstraint(
                condition=Q(status__in=WithdrawalStatus.values), name="withdrawal_known_status"
            ),
            models.CheckConstraint(
                condition=~Q(status__in=("sent", "paid")) | ~Q(tx_hash=""),
                name="withdrawal_sent_has_hash",
            ),
            models.CheckConstraint(
                condition=~Q(status="rejected") | ~Q(reject_reason=""),
                name="withdrawal_rejection_has_reason",
            ),
            # A transaction pays one withdrawal: a hash used for another is refused.
            models.UniqueConstraint(
                Lower("tx_hash"),
                "chain_id",
                condition=~Q(tx_hash=""),
                name="withdrawal_hash_used_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reference}: {self.amount_usd} USD → {self.to_address}"

    @property
    def reference(self) -> str:
        return f"WDR-{self.pk:06d}"


class WithdrawalEvent(StatusChange):
    """A withdrawal's history: every status change and every on-chain check, with who."""

    withdrawal = models.ForeignKey(Withdrawal, on_delete=models.CASCADE, related_name="events")
    from_status, to_status = status_pair(max_length=12, to_blank=True)
    data = models.JSONField(default=dict, blank=True)
    # The customer's email about this event (paid, rejected), sent once
    # (payments.withdrawals.services.emails).
    emailed_at = models.DateTimeField(_("emailed"), null=True, blank=True)

    subject_field = "withdrawal"

    class Meta(StatusChange.Meta):
        verbose_name = _("withdrawal event")
        verbose_name_plural = _("withdrawal events")


class ReceiptCounter(models.Model):
    """The last receipt number issued: one row, locked by the transaction that issues the
    next receipt, so numbers are consecutive without gaps (a rolled-back issue rolls back its
    number too)."""

    last_number = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = _("receipt counter")
        verbose_name_plural = _("receipt counters")

    def __str__(self) -> str:
        return str(self.last_number)


class Receipt(models.Model):
    """The customer's receipt for one ledger transaction of RECEIPT_KINDS, issued in the
    transaction that posts it, with the billing details the customer had then."""

    number = models.PositiveIntegerField(_("number"), unique=True)
    transaction = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="receipt"
    )
    customer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="receipts"
    )
    kind = models.CharField(_("kind"), max_length=20, choices=TransactionKind.choices)
    amount_usd = models.DecimalField(_("amount (USD)"), **AMOUNT)
    description = models.CharField(_("description"), max_length=300)
    # The customer's language and optional billing details when it was issued.
    language = models.CharField(_("language"), max_length=8)
    billing = models.JSONField(_("billing details"), default=dict, blank=True)
    issued_at = models.DateTimeField(_("issued"), auto_now_add=True)

    class Meta:
        verbose_name = _("receipt")
        verbose_name_plural = _("receipts")
        ordering = ("-number",)
        indexes = [models.Index(fields=("customer", "-number"), name="receipt_customer_recent")]
        constraints = [
            models.CheckConstraint(condition=Q(amount_usd__gt=0), name="receipt_positive"),
            models.CheckConstraint(condition=Q(number__gt=0), name="receipt_number_positive"),
        ]

    def __str__(self) -> str:
        return self.reference

    @property
    def reference(self) -> str:
        return f"R-{self.number:06d}"
