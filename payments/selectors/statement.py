"""The customer's side of the ledger: balance and statement."""

from django.db.models import F, QuerySet, Sum, Window

from accounts.models import User

from ..models import LedgerAccount, LedgerAccountKind, LedgerEntry


def customer_balance_account(*, customer: User) -> LedgerAccount | None:
    return LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=customer
    ).first()


def customer_statement(*, customer: User) -> QuerySet[LedgerEntry]:
    """Every entry of the customer's balance, oldest first, each with its running balance.

    The running balance is a window over all the customer's entries, computed before any
    pagination slices the result, so every page shows true running balances.
    """
    return (
        LedgerEntry.objects.filter(
            account__kind=LedgerAccountKind.CUSTOMER_BALANCE, account__customer=customer
        )
        .select_related(
            "transaction",
            "transaction__order",
            "transaction__receipt",
            "transaction__withdrawal",
        )
        .annotate(
            running_balance=Window(
                Sum("amount"), order_by=[F("transaction__created_at").asc(), F("pk").asc()]
            )
        )
        .order_by("transaction__created_at", "pk")
    )
