"""Everything a page can do, a script can do: every customer page has its API operations.

The table maps each customer page (URL name) to the operation ids of /api/v1/ that do what
it does, or to the reason it needs none (a page that only presents). The test walks the URL
resolver, so a new customer page without a row fails here, as does a row whose page is gone
or whose operation the served schema (GET /api/v1/schema/) does not have.

Customer pages: the names of the page namespaces below that a logged-in customer uses; not
the operators' (ops/) and finance's (finance/) pages of the same apps, not allauth's pages,
the admin, monitoring, the language switch or the diagnostics kit's own upload (diagnose.py
with the kit's token, not a customer's page).
"""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

CUSTOMER_NAMESPACES = {"rental", "payments", "pilot", "accounts", "api_tokens", "webhooks"}
STAFF_PREFIXES = ("ops/", "finance/")
NOT_PAGES = {
    # diagnose.py --upload authenticates with the kit's token: the kit's endpoint, no page.
    "pilot:report_upload_api",
}

# Why a page needs no operation of its own.
PRESENTATION = "presentation only"

PAGE_OPERATIONS: dict[str, tuple[str, ...] | str] = {
    # rental: the catalogue, the configurator and the orders
    "rental:catalogue": ("catalogue",),
    "rental:configure": ("catalogue", "quote"),
    "rental:help": PRESENTATION + ": the guide's answers (holds, expiry, confirmations, pilot)",
    "rental:review": ("quote",),
    "rental:confirm": ("orders_create",),
    "rental:order_list": ("orders_list",),
    "rental:order_detail": ("orders_retrieve", "orders_refund_retrieve", "orders_payments_list"),
    "rental:order_ssh_key": ("orders_ssh_key_update",),
    "rental:order_status": ("orders_retrieve",),
    "rental:order_extend": ("orders_extensions_list", "orders_extensions_create"),
    # payments: paying, the balance, receipts, withdrawals
    "payments:statement": ("balance_retrieve", "balance_statement_list"),
    "payments:statement_csv": ("balance_statement_csv",),
    "payments:pay_with_balance": ("orders_pay_balance",),
    "payments:pay_crypto": ("orders_payments_create",),
    "payments:order_cancel": ("orders_cancel",),
    "payments:extension_pay": ("extensions_retrieve",),
    "payments:extension_pay_balance": ("extensions_pay_balance",),
    "payments:extension_pay_crypto": ("extensions_payments_create",),
    "payments:extension_cancel": ("extensions_cancel",),
    "payments:top_up": ("top_ups_create",),
    "payments:history": ("payments_list",),
    "payments:receipts": ("receipts_list",),
    "payments:receipt": ("receipts_retrieve",),
    "payments:receipt_pdf": ("receipts_pdf",),
    "payments:order_receipt": ("receipts_list", "receipts_retrieve"),
    "payments:extension_receipt": ("receipts_list", "receipts_retrieve"),
    "payments:withdraw": ("withdrawals_list", "withdrawals_create"),
    "payments:withdrawal_detail": ("withdrawals_retrieve",),
    "payments:withdrawal_status": ("withdrawals_retrieve",),
    "payments:payment_detail": ("payments_retrieve",),
    "payments:payment_status": ("payments_retrieve",),
    "payments:payment_declare": ("payments_declare",),
    # pilot: the kits, reports and decisions of the order page
    "pilot:kit_diagnostics": ("orders_kit_diagnostics",),
    "pilot:kit_pilot": ("orders_kit_pilot",),
    "pilot:report_upload_page": ("orders_pilot_reports_create", "orders_pilot_reports_list"),
    "pilot:decision_record": ("orders_pilot_decisions_create", "orders_pilot_decisions_list"),
    "pilot:configure_from_order": (
        PRESENTATION + ": the configurator pre-filled from an order (orders_retrieve has it all)"
    ),
    # accounts: the account page, the SSH key, billing details
    "accounts:overview": ("account_ssh_key_retrieve", "balance_retrieve"),
    "accounts:ssh_key": ("account_ssh_key_update", "account_ssh_key_destroy"),
    "accounts:billing": (
        "account_billing_retrieve",
        "account_billing_update",
        "account_billing_partial_update",
    ),
    # api_tokens: the tokens page
    "api_tokens:list": ("tokens_list",),
    "api_tokens:create": ("tokens_create",),
    "api_tokens:revoke": ("tokens_revoke",),
    # webhooks: the endpoints, their deliveries and events
    "webhooks:endpoint_list": (
        "webhook_endpoints_list",
        "webhook_endpoints_create",
        "events_list",
    ),
    "webhooks:endpoint_detail": (
        "webhook_endpoints_retrieve",
        "webhook_endpoints_update",
        "webhook_deliveries_list",
        "webhook_endpoints_rotate_secret",
        "webhook_endpoints_ping",
        "webhook_endpoints_replay",
    ),
    "webhooks:endpoint_enabled": ("webhook_endpoints_update",),
    # The page's buttons of the webhooks branch (issue 23): fail here as gone pages until merged.
    "webhooks:endpoint_rotate_secret": ("webhook_endpoints_rotate_secret",),
    "webhooks:endpoint_ping": ("webhook_endpoints_ping",),
    "webhooks:endpoint_delete": ("webhook_endpoints_destroy",),
    "webhooks:delivery_redeliver": ("webhook_deliveries_redeliver",),
}


def _walk(resolver: URLResolver, namespace: str | None = None, prefix: str = ""):
    """(namespaced name, route) of every named URL under `resolver`."""
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            inner = entry.namespace or namespace
            if entry.namespace and namespace:
                inner = f"{namespace}:{entry.namespace}"
            yield from _walk(entry, inner, route)
        elif isinstance(entry, URLPattern) and entry.name:
            yield (f"{namespace}:{entry.name}" if namespace else entry.name), route


def customer_pages() -> dict[str, str]:
    pages = {}
    for name, route in _walk(get_resolver("config.urls")):
        namespace = name.partition(":")[0] if ":" in name else None
        if namespace not in CUSTOMER_NAMESPACES or name in NOT_PAGES:
            continue
        if route.lstrip("^").startswith(STAFF_PREFIXES):
            continue
        pages[name] = route
    return pages


@pytest.fixture(scope="module")
def served_operation_ids(django_db_blocker) -> set[str]:
    from django.test import Client

    with django_db_blocker.unblock():
        response = Client().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    document = response.json()
    return {
        operation["operationId"]
        for operations in document["paths"].values()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "operationId" in operation
    }


def test_the_walk_finds_the_customer_pages_and_no_staff_page():
    pages = customer_pages()
    assert pages["rental:order_detail"] == "account/orders/<int:order_id>/"
    assert pages["api_tokens:revoke"] == "account/api-tokens/<str:token_id>/revoke/"
    assert not any(route.startswith(STAFF_PREFIXES) for route in pages.values())
    assert "payments:ops_queue" not in pages and "rental:ops_hosts" not in pages
    assert "pilot:report_upload_api" not in pages and "account_login" not in pages


def test_every_customer_page_has_a_row():
    missing = sorted(set(customer_pages()) - set(PAGE_OPERATIONS))
    assert not missing, f"customer pages without a row in PAGE_OPERATIONS: {missing}"


def test_every_row_is_a_page_that_still_exists():
    gone = sorted(set(PAGE_OPERATIONS) - set(customer_pages()))
    assert not gone, f"rows of PAGE_OPERATIONS whose page is gone: {gone}"


def test_every_row_names_served_operations_or_says_why_it_needs_none(served_operation_ids):
    unknown = {
        page: sorted(set(operations) - served_operation_ids)
        for page, operations in PAGE_OPERATIONS.items()
        if not isinstance(operations, str) and set(operations) - served_operation_ids
    }
    assert not unknown, f"operation ids not in the served schema: {unknown}"
    reasons = [value for value in PAGE_OPERATIONS.values() if isinstance(value, str)]
    assert all(reason.startswith(PRESENTATION + ": ") for reason in reasons)
    assert all(value for value in PAGE_OPERATIONS.values())
