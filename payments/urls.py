from config.lazy_views import path, views_in

# Each room's views: paths and names are the app's, whichever room serves them. Each module is
# imported by the first request one of its views answers (config/lazy_views.py).
extensions = views_in("payments.crypto.views.extensions")
history = views_in("payments.crypto.views.history")
ops = views_in("payments.crypto.views.ops")
orders = views_in("payments.crypto.views.orders")
crypto = views_in("payments.crypto.views.payments")
finance = views_in("payments.finance.views")
receipts = views_in("payments.ledger.views.receipts")
refunds = views_in("payments.ledger.views.refunds")
statement = views_in("payments.ledger.views.statement")
withdrawals = views_in("payments.withdrawals.views")

app_name = "payments"

urlpatterns = [
    # Customer
    path("account/balance/", statement.statement, name="statement"),
    path("account/balance/statement.csv", statement.statement_csv, name="statement_csv"),
    path(
        "account/orders/<int:order_id>/pay/balance/",
        orders.pay_with_balance,
        name="pay_with_balance",
    ),
    path("account/orders/<int:order_id>/pay/crypto/", crypto.pay_crypto, name="pay_crypto"),
    # Cancelling an order closes its payments (money on them goes to the balance).
    path("account/orders/<int:order_id>/cancel/", orders.order_cancel, name="order_cancel"),
    # Extending a rental (the extension is created on rental's page: rental:order_extend).
    path(
        "account/extensions/<int:extension_id>/pay/",
        extensions.extension_pay,
        name="extension_pay",
    ),
    path(
        "account/extensions/<int:extension_id>/pay/balance/",
        extensions.extension_pay_balance,
        name="extension_pay_balance",
    ),
    path(
        "account/extensions/<int:extension_id>/pay/crypto/",
        extensions.extension_pay_crypto,
        name="extension_pay_crypto",
    ),
    path(
        "account/extensions/<int:extension_id>/cancel/",
        extensions.extension_cancel,
        name="extension_cancel",
    ),
    path("account/balance/top-up/", crypto.top_up, name="top_up"),
    path("account/payments/", history.history, name="history"),
    path("account/receipts/", receipts.receipt_list, name="receipts"),
    path("account/receipts/<int:number>/", receipts.receipt_detail, name="receipt"),
    path("account/receipts/<int:number>.pdf", receipts.receipt_pdf, name="receipt_pdf"),
    path("account/orders/<int:order_id>/receipt/", receipts.order_receipt, name="order_receipt"),
    path(
        "account/extensions/<int:extension_id>/receipt/",
        receipts.extension_receipt,
        name="extension_receipt",
    ),
    path("account/balance/withdraw/", withdrawals.withdraw, name="withdraw"),
    path(
        "account/withdrawals/<int:withdrawal_id>/",
        withdrawals.withdrawal_detail,
        name="withdrawal_detail",
    ),
    path(
        "account/withdrawals/<int:withdrawal_id>/status/",
        withdrawals.withdrawal_status,
        name="withdrawal_status",
    ),
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
    # An order ended early by an operator, the hours not delivered refunded to the balance.
    path(
        "ops/early-end/<int:order_id>/",
        refunds.order_end_early,
        name="ops_order_end_early",
    ),
    # Finance console (group "finance")
    path("finance/", finance.dashboard, name="finance_dashboard"),
    path("finance/balances/", finance.balances, name="finance_balances"),
    path("finance/journal/", finance.journal, name="finance_journal"),
    path("finance/journal.csv", finance.journal_csv, name="finance_journal_csv"),
    path("finance/unallocated/", finance.unallocated, name="finance_unallocated"),
    path("finance/adjustments/new/", finance.adjustment_create, name="finance_adjustment"),
    path("finance/reconciliation/", finance.reconciliation, name="finance_reconciliation"),
    path("finance/withdrawals/", withdrawals.finance_queue, name="finance_withdrawals"),
    path(
        "finance/withdrawals/<int:withdrawal_id>/",
        withdrawals.finance_detail,
        name="finance_withdrawal",
    ),
    path(
        "finance/withdrawals/<int:withdrawal_id>/<slug:action>/",
        withdrawals.finance_action,
        name="finance_withdrawal_action",
    ),
]
