"""What the order page shows of an order's payments and balance (`order_payments_view`)."""

import weakref
from dataclasses import dataclass
from decimal import Decimal

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import Value
from django.utils import timezone

from rental.models import Order, OrderStatus

from ...chain.networks import units_to_usd
from ...chain.selectors import network_name, stablecoin_choices
from ...models import (
    LIVE_STATUSES,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    PaymentStatus,
    TransactionKind,
)
from .state import CREDIT_KINDS, USD_FIELD, ZERO_USD, PaymentState, payment_state, still_due_units

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


# The customer's balance and every payment of the order with where the ledger put its money, in
# one statement. Written out rather than composed with the ORM: that shape (the ledger summed
# under each payment) cost the order page 4 ms to compile, more than everything else it reads.
# Plain SQL that PostgreSQL and SQLite (the embedded default) both run; the values go through
# the backend's converters as the ORM's would (_COLUMNS).
_ORDER_PAYMENTS_SQL = """
SELECT
    (SELECT account.balance FROM payments_ledgeraccount account
      WHERE account.customer_id = %(customer)s AND account.kind = %(balance_kind)s
      LIMIT 1),
    payment.id, payment.asset, payment.network, payment.decimals, payment.status,
    payment.amount_due_units, payment.received_units, payment.seen_units, payment.expires_at,
    COALESCE(money.credited_usd, 0.00), COALESCE(money.refunded_usd, 0.00)
FROM (SELECT 1 AS one) AS one
LEFT JOIN payments_cryptopayment payment
    ON payment.order_id = %(order)s AND payment.customer_id = %(customer)s
LEFT JOIN (
    SELECT
        tx.payment_id AS payment_id,
        SUM(CASE WHEN account.kind = %(balance_kind)s
                  AND tx.kind IN (%(credit_kinds)s)
            THEN entry.amount ELSE 0.00 END) AS credited_usd,
        SUM(CASE WHEN account.kind = %(refunds_kind)s AND tx.kind = %(refund_kind)s
            THEN entry.amount ELSE 0.00 END) AS refunded_usd
    FROM payments_ledgertransaction tx
    INNER JOIN payments_ledgerentry entry ON entry.transaction_id = tx.id
    INNER JOIN payments_ledgeraccount account ON account.id = entry.account_id
    WHERE tx.payment_id IN (SELECT id FROM payments_cryptopayment WHERE order_id = %(order)s)
    GROUP BY tx.payment_id
) AS money ON money.payment_id = payment.id
ORDER BY payment.created_at DESC, payment.id DESC
""".replace(
    "%(credit_kinds)s", ", ".join(f"%(credit_{number})s" for number in range(len(CREDIT_KINDS)))
)
_PAYMENT_COLUMNS = (
    "id",
    "asset",
    "network",
    "decimals",
    "status",
    "amount_due_units",
    "received_units",
    "seen_units",
    "expires_at",
)
_COLUMNS = (
    ("balance", LedgerAccount._meta.get_field("balance")),
    *((name, CryptoPayment._meta.get_field(name)) for name in _PAYMENT_COLUMNS),
    ("credited_usd", USD_FIELD),
    ("refunded_usd", USD_FIELD),
)


def _converters() -> list[tuple]:
    """Per column of _ORDER_PAYMENTS_SQL, what the compiler would apply to it: worked out once
    per connection (the backend's converters are its own)."""
    key = connections[DEFAULT_DB_ALIAS]
    converters = _converters_of.get(key)
    if converters is None:
        converters = _converters_of[key] = _converters_for_connection()
    return converters


_converters_of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _converters_for_connection() -> list[tuple]:
    converters = []
    for _name, field in _COLUMNS:
        expression = Value(None, output_field=field)
        functions = connection.ops.get_db_converters(expression)
        functions += expression.get_db_converters(connection)
        converters.append((expression, functions))
    return converters


def _order_payment_rows(order: Order) -> list[dict]:
    params = {
        "customer": order.customer_id,
        "order": order.pk,
        "balance_kind": LedgerAccountKind.CUSTOMER_BALANCE,
        **{f"credit_{number}": kind for number, kind in enumerate(CREDIT_KINDS)},
        "refunds_kind": LedgerAccountKind.REFUNDS,
        "refund_kind": TransactionKind.REFUND,
    }
    converters = _converters()
    with connection.cursor() as cursor:
        cursor.execute(_ORDER_PAYMENTS_SQL, params)
        rows = cursor.fetchall()
    converted = []
    for row in rows:
        values = {}
        for (name, _field), value, (expression, functions) in zip(
            _COLUMNS, row, converters, strict=True
        ):
            for function in functions:
                value = function(value, expression, connection)
            values[name] = value
        converted.append(values)
    return converted


def order_payments_view(*, order: Order, now=None) -> OrderPayments:
    """The customer's balance and every payment of the order with its money, in one query
    (no payment: one row of NULLs beside the balance)."""
    now = now or timezone.now()
    rows = _order_payment_rows(order)
    balance_usd, payments = ZERO_USD, []
    for row in rows:
        if row["balance"] is not None:
            balance_usd = row["balance"]
        if row["id"] is None:
            continue
        amounts = {
            "status": row["status"],
            "due": row["amount_due_units"],
            "received": row["received_units"],
            "seen": row["seen_units"],
        }
        payments.append(
            OrderPaymentRow(
                pk=row["id"],
                asset=row["asset"],
                network_name=network_name(row["network"]),
                decimals=row["decimals"],
                status=row["status"],
                state=payment_state(**amounts, expires_at=row["expires_at"], now=now),
                received_units=int(row["received_units"]),
                confirming_units=int(row["seen_units"]),
                amount_still_due_units=still_due_units(**amounts),
                credited_usd=row["credited_usd"],
                refunded_usd=row["refunded_usd"],
                live=row["status"] in LIVE_STATUSES,
            )
        )
    return OrderPayments(order=order, balance=balance_usd, payments=payments)


# The view read for the order page's content key (rental.order_page), kept on the order so that
# the page's payment tags render from the same read instead of making it again.
_VIEW_ATTRIBUTE = "_order_payments_view"


def order_page_state(order: Order) -> tuple:
    """What the order page shows of the order's payments and the customer's balance (rental's
    order_page.state_parts): every value the payment tags render from, read now, and the
    stablecoins a payment can be opened in."""
    view = order_payments_view(order=order)
    setattr(order, _VIEW_ATTRIBUTE, view)
    return (view.balance, tuple(view.payments), tuple(stablecoin_choices()))


def order_payments_view_for_page(order: Order) -> OrderPayments:
    """The view order_page_state read in this request, or a new read."""
    return getattr(order, _VIEW_ATTRIBUTE, None) or order_payments_view(order=order)
