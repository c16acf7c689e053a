from django.urls import path

from .views import crypto, customer, finance, ops

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
    path("account/orders/<int:order_id>/pay/crypto/", crypto.pay_crypto, name="pay_crypto"),
    # Cancelling an order closes its payments (money on them goes to the balance).
    path("account/orders/<int:order_id>/cancel/", customer.order_cancel, name="order_cancel"),
    path("account/balance/top-up/", crypto.top_up, name="top_up"),
    path("account/payments/<int:payment_id>/", crypto.payment_detail, name="payment_detail"),
    path("account/payments/<int:payment_id>/status/", crypto.payment_status, name="payment_status"),
    path(
        "account/payments/<int:payment_id>/declare/",
        crypto.declare,
        name="payment_declare",
    ),
    # Operators' queue (group "operators")
    path("ops/", ops.queue, name="ops_queue"),
    path("ops/payments/<int:payment_id>/", ops.payment_detail, name="ops_payment"),
    path(
        "ops/payments/<int:payment_id>/<slug:action>/",
        ops.payment_action,
        name="ops_payment_action",
    ),
    # Finance console (group "finance")
    path("finance/", finance.dashboard, name="finance_dashboard"),
    path("finance/balances/", finance.balances, name="finance_balances"),
    path("finance/journal/", finance.journal, name="finance_journal"),
    path("finance/journal.csv", finance.journal_csv, name="finance_journal_csv"),
    path("finance/unallocated/", finance.unallocated, name="finance_unallocated"),
    path("finance/adjustments/new/", finance.adjustment_create, name="finance_adjustment"),
    path("finance/reconciliation/", finance.reconciliation, name="finance_reconciliation"),
]
