"""What the order page shows of an order's payments and balance (`order_payments_view`)."""

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import FilteredRelation, OuterRef, Q, Subquery
from django.utils import timezone

from accounts.models import User
from rental.models import Order, OrderStatus

from ..models import (
    LIVE_STATUSES,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    PaymentStatus,
)
from ..networks import (
    units_to_usd,
)
from .crypto import (
    ZERO_USD,
    PaymentState,
    _money_annotations,
    network_name,
    payment_state,
    still_due_units,
)

# ---------------------------------------------------------------------- the order page


@dataclass(frozen=True, slots=True)
class OrderPaymentRow:
    """One of the order's payments, as the order page lists it."""

    pk: int
    asset: str
    network_name: str
    decimals: int
    status: str
    state: str
    received_units: int
    confirming_units: int
    amount_still_due_units: int
    credited_usd: Decimal
    refunded_usd: Decimal
    live: bool

    @property
    def reference(self) -> str:
        return CryptoPayment(pk=self.pk).reference

    @property
    def state_label(self) -> str:
        return PaymentState(self.state).label

    @property
    def arrived_units(self) -> int:
        return self.received_units + self.confirming_units


@dataclass(frozen=True, slots=True)
class OrderPayments:
    """The order's stablecoin payments (newest first) and the customer's balance."""

    order: Order
    balance: Decimal
    payments: list[OrderPaymentRow]

    @property
    def live_payment(self) -> OrderPaymentRow | None:
        return next((row for row in self.payments if row.live), None)

    @property
    def received_usd(self) -> Decimal:
        """Confirmed on the open payment (money on closed ones went to the balance)."""
        live = self.live_payment
        return units_to_usd(live.received_units, live.decimals) if live else ZERO_USD

    @property
    def confirming_usd(self) -> Decimal:
        live = self.live_payment
        return units_to_usd(live.confirming_units, live.decimals) if live else ZERO_USD

    @property
    def arrived_usd(self) -> Decimal:
        live = self.live_payment
        return units_to_usd(live.arrived_units, live.decimals) if live else ZERO_USD

    @property
    def amount_due_usd(self) -> Decimal:
        """The order's total less what arrived on its open payment."""
        return max(self.order.total_usd - self.arrived_usd, ZERO_USD)

    @property
    def covers(self) -> bool:
        return self.balance >= self.order.total_usd

    @property
    def shortfall(self) -> Decimal:
        return max(self.order.total_usd - self.balance, ZERO_USD)

    @property
    def can_choose_stablecoin(self) -> bool:
        """Another asset or network only while nothing arrived on the open payment (as
        payment_create_for_order allows)."""
        live = self.live_payment
        return live is None or (live.status == PaymentStatus.AWAITING and not live.arrived_units)

    @property
    def credited_usd(self) -> Decimal:
        return sum((row.credited_usd for row in self.payments), ZERO_USD)

    @property
    def refunded_usd(self) -> Decimal:
        return sum((row.refunded_usd for row in self.payments), ZERO_USD)

    @property
    def still_confirming(self) -> list[OrderPaymentRow]:
        """Payments no longer live with money still confirming (credited once confirmed)."""
        return [row for row in self.payments if not row.live and row.confirming_units]

    @property
    def cancelled(self) -> bool:
        return self.order.status == OrderStatus.CANCELLED

    @property
    def nothing_arrived(self) -> bool:
        return not any(
            row.arrived_units or row.credited_usd or row.refunded_usd for row in self.payments
        )


_ROW_FIELDS = (
    "pk",
    "asset",
    "network",
    "decimals",
    "status",
    "amount_due_units",
    "received_units",
    "seen_units",
    "expires_at",
)


def order_payments_view(*, order: Order, now=None) -> OrderPayments:
    """The customer's balance and every payment of the order with its money, in one query:
    the customer's row, joined to the order's payments (none: one row of NULLs)."""
    now = now or timezone.now()
    balance = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=OuterRef("pk")
    ).values("balance")[:1]
    money = _money_annotations(outer="order_payment__pk")
    rows = (
        User.objects.filter(pk=order.customer_id)
        .annotate(
            order_payment=FilteredRelation(
                "crypto_payments", condition=Q(crypto_payments__order=order)
            ),
            balance=Subquery(balance),
        )
        .annotate(**{f"money_{name}": value for name, value in money.items()})
        .values(
            "balance",
            *(f"order_payment__{name}" for name in _ROW_FIELDS),
            *(f"money_{name}" for name in money),
        )
        .order_by("-order_payment__created_at", "-order_payment__pk")
    )
    balance_usd, payments = ZERO_USD, []
    for row in rows:
        if row["balance"] is not None:
            balance_usd = row["balance"]
        values = {name: row[f"order_payment__{name}"] for name in _ROW_FIELDS}
        if values["pk"] is None:
            continue
        amounts = {
            "status": values["status"],
            "due": values["amount_due_units"],
            "received": values["received_units"],
            "seen": values["seen_units"],
        }
        payments.append(
            OrderPaymentRow(
                pk=values["pk"],
                asset=values["asset"],
                network_name=network_name(values["network"]),
                decimals=values["decimals"],
                status=values["status"],
                state=payment_state(**amounts, expires_at=values["expires_at"], now=now),
                received_units=int(values["received_units"]),
                confirming_units=int(values["seen_units"]),
                amount_still_due_units=still_due_units(**amounts),
                credited_usd=row["money_credited_usd"],
                refunded_usd=row["money_refunded_usd"],
                live=values["status"] in LIVE_STATUSES,
            )
        )
    return OrderPayments(order=order, balance=balance_usd, payments=payments)
