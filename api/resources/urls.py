"""The resources under /api/v1/, included by api.urls (namespace "api")."""

from django.urls import path

from . import (
    account,
    billing,
    downloads,
    extensions,
    history,
    orders,
    payments,
    pilot,
    receipts,
    tokens,
    withdrawals,
)

urlpatterns = [
    path("orders/", orders.OrderListCreate.as_view(), name="order_list"),
    path("orders/<int:order_id>/", orders.OrderDetail.as_view(), name="order_detail"),
    path("orders/<int:order_id>/cancel/", orders.OrderCancel.as_view(), name="order_cancel"),
    path("orders/<int:order_id>/ssh-key/", orders.OrderSshKey.as_view(), name="order_ssh_key"),
    path(
        "orders/<int:order_id>/pay/balance/",
        payments.PayFromBalance.as_view(),
        name="order_pay_balance",
    ),
    path(
        "orders/<int:order_id>/payments/",
        history.OrderPayments.as_view(),
        name="order_payment_create",
    ),
    path("orders/<int:order_id>/refund/", orders.OrderRefund.as_view(), name="order_refund"),
    path(
        "orders/<int:order_id>/extensions/",
        extensions.OrderExtensionListCreate.as_view(),
        name="order_extensions",
    ),
    path(
        "extensions/<int:extension_id>/",
        extensions.ExtensionDetail.as_view(),
        name="extension_detail",
    ),
    path(
        "extensions/<int:extension_id>/pay/balance/",
        extensions.ExtensionPayBalance.as_view(),
        name="extension_pay_balance",
    ),
    path(
        "extensions/<int:extension_id>/payments/",
        extensions.ExtensionPaymentCreate.as_view(),
        name="extension_payment_create",
    ),
    path(
        "extensions/<int:extension_id>/cancel/",
        extensions.ExtensionCancel.as_view(),
        name="extension_cancel",
    ),
    path(
        "orders/<int:order_id>/pilot/reports/",
        pilot.ReportListView.as_view(),
        name="order_pilot_reports",
    ),
    path(
        "orders/<int:order_id>/pilot/decisions/",
        pilot.DecisionListCreate.as_view(),
        name="order_pilot_decisions",
    ),
    path("payments/", history.PaymentList.as_view(), name="payment_list"),
    path("payments/<int:payment_id>/", payments.PaymentDetail.as_view(), name="payment_detail"),
    path(
        "payments/<int:payment_id>/declare/",
        payments.PaymentDeclare.as_view(),
        name="payment_declare",
    ),
    path("top-ups/", payments.TopUpCreate.as_view(), name="top_up_create"),
    path("withdrawals/", withdrawals.WithdrawalListCreate.as_view(), name="withdrawal_list"),
    path(
        "withdrawals/<int:withdrawal_id>/",
        withdrawals.WithdrawalDetail.as_view(),
        name="withdrawal_detail",
    ),
    path("receipts/", receipts.ReceiptList.as_view(), name="receipt_list"),
    path("receipts/<int:number>/", receipts.ReceiptDetail.as_view(), name="receipt_detail"),
    path("receipts/<int:number>/pdf/", receipts.ReceiptPdf.as_view(), name="receipt_pdf"),
    path("balance/", account.BalanceDetail.as_view(), name="balance"),
    path("balance/statement/", account.StatementList.as_view(), name="balance_statement"),
    path("account/ssh-key/", account.AccountSshKey.as_view(), name="account_ssh_key"),
    # Part B of issue 23: billing, tokens, the statement as CSV, the pilot's kits.
    path("account/billing/", billing.AccountBilling.as_view(), name="account_billing"),
    path("tokens/", tokens.TokenListCreate.as_view(), name="token_list"),
    path("tokens/<int:token_id>/", tokens.TokenDetail.as_view(), name="token_detail"),
    path("balance/statement.csv", downloads.StatementCsv.as_view(), name="balance_statement_csv"),
    path(
        "orders/<int:order_id>/kit/diagnostics.zip",
        downloads.KitDiagnostics.as_view(),
        name="order_kit_diagnostics",
    ),
    path(
        "orders/<int:order_id>/kit/pilot.zip", downloads.KitPilot.as_view(), name="order_kit_pilot"
    ),
]
