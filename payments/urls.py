from django.urls import path

from .views import customer, finance

app_name = "payments"

urlpatterns = [
    # Customer
    path("account/balance/", customer.statement, name="statement"),
    path("account/balance/statement.csv", customer.statement_csv, name="statement_csv"),
    path(
        "account/orders/<int:order_id>/pay/balance/",
        customer.pay_with_balance,
        name="pay_with_balance",
    ),
    # Finance console (group "finance")
    path("finance/", finance.dashboard, name="finance_dashboard"),
    path("finance/balances/", finance.balances, name="finance_balances"),
    path("finance/journal/", finance.journal, name="finance_journal"),
    path("finance/journal.csv", finance.journal_csv, name="finance_journal_csv"),
    path("finance/adjustments/new/", finance.adjustment_create, name="finance_adjustment"),
    path("finance/reconciliation/", finance.reconciliation, name="finance_reconciliation"),
]
