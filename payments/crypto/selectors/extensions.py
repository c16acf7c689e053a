"""What an extension's pay page shows: the extension, the balance against its total, its open
stablecoin payment."""

from dataclasses import dataclass
from decimal import Decimal

from accounts.models import User
from rental.models import ExtensionStatus, OrderExtension
from rental.selectors_extensions import customer_extension, order_extendable

from ...ledger.selectors.statement import customer_balance_account
from ...models import LIVE_STATUSES, CryptoPayment


@dataclass(frozen=True, slots=True)
class ExtensionPayView:
    extension: OrderExtension
    balance: Decimal
    live_payment: CryptoPayment | None
    order_extendable: bool

    @property
    def order(self):
        return self.extension.order

    @property
    def awaiting(self) -> bool:
        return self.extension.status == ExtensionStatus.AWAITING_PAYMENT

    @property
    def paid(self) -> bool:
        return self.extension.status == ExtensionStatus.PAID

    @property
    def payable(self) -> bool:
        """Money can still pay it: awaiting payment, its rental active before its end."""
        return self.awaiting and self.order_extendable

    @property
    def covers(self) -> bool:
        return self.balance >= self.extension.total_usd

    @property
    def shortfall(self) -> Decimal:
        return max(self.extension.total_usd - self.balance, Decimal("0.00"))


def extension_pay_view(*, customer: User, extension_id: int) -> ExtensionPayView:
    """The customer's extension as its pay page shows it (three queries); another customer's
    raises OrderExtension.DoesNotExist."""
    extension = customer_extension(customer=customer, extension_id=extension_id)
    awaiting = extension.status == ExtensionStatus.AWAITING_PAYMENT
    live = None
    if awaiting:
        live = (
            CryptoPayment.objects.filter(extension=extension, status__in=LIVE_STATUSES)
            .order_by("-pk")
            .first()
        )
    # Read only: a customer who never had a balance account has a balance of zero (the
    # account is created by the first posting, never by a page).
    account = customer_balance_account(customer=customer)
    return ExtensionPayView(
        extension=extension,
        balance=account.balance if account else Decimal("0.00"),
        live_payment=live,
        order_extendable=order_extendable(extension.order),
    )
