"""A web worker does not load the chain libraries: web3, eth-* and bip_utils are for the Celery
worker (scanning, confirming) and for opening a payment, not for showing pages. Nor Celery and
kombu: its tasks leave through the outbox and the relay (tests/outbox/test_relay.py). Nor, for
the pages, the chain's HTTP client (requests), the API's libraries (Django REST framework's
views, drf-spectacular, PyYAML, Pygments: the API's URLconf is imported by the first request
under /api/, config/deferred.py), allauth's WebAuthn (fido2: config/lazy_modules.py) or
redis-py's asyncio, cluster and sentinel clients; the API and its schema load them when
asked. Nor the staff's views (operators, finance, withdrawals): a view's module is imported by
its first request (config/lazy_views.py); nor the ModelAdmins (config/admin_site.py). The
payment page's QR code library (segno) is loaded by the first payment page that draws one.

A fresh interpreter imports the WSGI application as a gunicorn worker does, then loads the pages
through it and reports after each which of those libraries it holds.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.urls import reverse

from payments.crypto.services.payments import payment_create_for_order

ROOT = Path(__file__).resolve().parent.parent
CHAIN_LIBRARIES = ("web3", "bip_utils", "eth_abi", "eth_account", "eth_utils", "eth_keys")
CELERY_LIBRARIES = ("celery", "kombu", "redbeat", "billiard")
# rest_framework and drf_spectacular themselves are installed apps (their packages are
# imported at startup): what the API loads is their views and the schema generator.
API_LIBRARIES = (
    "rest_framework.views",
    "rest_framework.fields",
    "drf_spectacular.openapi",
    "yaml",
    "pygments",
    "api.urls",
)
MFA_LIBRARIES = ("fido2",)
# The chain's JSON-RPC client (payments/chain/rpc.py): for the watcher and the checks.
HTTP_CLIENT_LIBRARIES = ("requests", "urllib3")
# redis-py's asyncio, cluster and sentinel clients (its packages' __init__ are deferred:
# config/lazy_modules.py; the cache takes its classes from their modules) and Django's humanize
# (no template loads it; not an installed app).
UNUSED_LIBRARIES = (
    "redis.asyncio.client",
    "redis.asyncio.cluster",
    "redis.cluster",
    "redis.sentinel",
    "django.contrib.humanize",
)
# The staff's views: the URLconfs name views that their first request imports
# (config/lazy_views.py).
STAFF_VIEWS = (
    "rental.views.ops",
    "payments.crypto.views.ops",
    "payments.finance.views",
    "payments.withdrawals.views",
    # The ModelAdmins: registered by the admin's first use (config/admin_site.py).
    "rental.admin",
    "payments.admin",
)
PAGE_FREE_LIBRARIES = (
    CHAIN_LIBRARIES
    + CELERY_LIBRARIES
    + API_LIBRARIES
    + MFA_LIBRARIES
    + HTTP_CLIENT_LIBRARIES
    + UNUSED_LIBRARIES
    + STAFF_VIEWS
)
# The payment page's QR code (segno, which brings xml.sax): drawn only there.
QR_LIBRARIES = ("segno", "xml.sax")

# Runs in the fresh interpreter: the WSGI application as gunicorn imports it, then the pages
# through it, each with the status it answered and the chain libraries it left loaded.
SCRIPT = r"""
import json, sys
from config.wsgi import application
from django.conf import settings
from django.test import Client

from accounts.models import User

spec = json.loads(sys.argv[1])
settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": spec["rpc_url"]}
settings.LOCAL_TOKEN_ADDRESS = spec["token"]
settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
libraries = tuple(spec["libraries"])

def loaded():
    return sorted(name for name in libraries if name in sys.modules)

report = {"after import": {"loaded": loaded()}}
client = Client()
client.force_login(User.objects.get(pk=spec["customer"]))
for path, headers in spec["pages"]:
    response = client.get(path, headers=headers)
    report[path] = {"status": response.status_code, "loaded": loaded()}
anonymous = Client()
for path, headers in spec.get("anonymous_pages", []):
    response = anonymous.get(path, headers=headers)
    report["anonymous " + path] = {"status": response.status_code, "loaded": loaded()}
print(json.dumps(report))
"""


def run_fresh_worker(spec: dict, prelude: str = "") -> dict:
    """SCRIPT in a new interpreter on the test's database (after `prelude`)."""
    database = connection.settings_dict
    url = (
        f"postgres://{database['USER']}:{database['PASSWORD'] or ''}@"
        f"{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}/{database['NAME']}"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test", "DATABASE_URL": url}
    result = subprocess.run(
        [sys.executable, "-c", prelude + SCRIPT, json.dumps(spec)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.django_db(transaction=True)
def test_pages_load_no_chain_library(customer, place_order, catalogue, settings, dead_rpc_url):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    settings.LOCAL_TOKEN_ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    order = place_order(customer, catalogue["h100"], lots=1)
    unpaid = place_order(customer, catalogue["b200"], lots=1)
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    htmx = {"HX-Request": "true"}
    pages = [
        (reverse("rental:catalogue"), {}),
        (reverse("rental:configure"), {}),
        (reverse("rental:configure") + "?gpu_model=b200-180gb&lots=3&duration_days=7", htmx),
        (reverse("rental:order_list"), {}),
        (reverse("rental:order_detail", kwargs={"order_id": order.pk}), {}),
        (reverse("rental:order_detail", kwargs={"order_id": unpaid.pk}), {}),
        (reverse("rental:order_status", kwargs={"order_id": order.pk}), htmx),
        (reverse("payments:payment_detail", kwargs={"payment_id": payment.pk}), {}),
        (reverse("payments:payment_status", kwargs={"payment_id": payment.pk}), htmx),
        (reverse("payments:statement"), {}),
        (reverse("payments:top_up"), {}),
        (reverse("accounts:overview"), {}),
    ]
    report = run_fresh_worker(
        {
            "customer": customer.pk,
            "rpc_url": dead_rpc_url,
            "token": settings.LOCAL_TOKEN_ADDRESS,
            "libraries": PAGE_FREE_LIBRARIES,
            "pages": pages,
            # A page nobody has: the site's 404 page (the API's problem+json only under /api/).
            "anonymous_pages": [
                (reverse("rental:catalogue"), {}),
                (reverse("account_login"), {}),
                ("/no-such-page/", {}),
            ],
        }
    )

    assert report.pop("after import") == {"loaded": []}
    expected = {path: 200 for path, _ in pages} | {
        "anonymous " + reverse("rental:catalogue"): 200,
        "anonymous " + reverse("account_login"): 200,
        "anonymous /no-such-page/": 404,
    }
    assert {path: answer["status"] for path, answer in report.items()} == expected
    assert {path: answer["loaded"] for path, answer in report.items()} == {
        path: [] for path in expected
    }


@pytest.mark.django_db(transaction=True)
def test_only_the_payment_page_loads_the_qr_code_library(
    customer, place_order, catalogue, settings, dead_rpc_url
):
    """segno (with xml.sax) is loaded by the first payment page, which draws the code, not by
    the import or the other pages, the order page with its payment options among them."""
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    settings.LOCAL_TOKEN_ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    order = place_order(customer, catalogue["h100"], lots=1)
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    others = [
        reverse("rental:catalogue"),
        reverse("rental:order_detail", kwargs={"order_id": order.pk}),
        reverse("payments:payment_status", kwargs={"payment_id": payment.pk}),
    ]
    payment_page = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    report = run_fresh_worker(
        {
            "customer": customer.pk,
            "rpc_url": dead_rpc_url,
            "token": settings.LOCAL_TOKEN_ADDRESS,
            "libraries": QR_LIBRARIES,
            "pages": [(path, {}) for path in [*others, payment_page]],
        }
    )

    assert report["after import"] == {"loaded": []}
    assert {path: report[path] for path in others} == {
        path: {"status": 200, "loaded": []} for path in others
    }
    assert report[payment_page] == {"status": 200, "loaded": sorted(QR_LIBRARIES)}


@pytest.mark.django_db(transaction=True)
def test_the_check_sees_a_chain_library_once_one_is_loaded(customer, catalogue):
    """The same fresh worker reports web3 and eth-account once something on its path imports
    them (the check above is not blind): here the module that deploys the local token."""
    spec = {
        "customer": customer.pk,
        "rpc_url": "",
        "token": "",
        "libraries": CHAIN_LIBRARIES,
        "pages": [(reverse("rental:catalogue"), {})],
    }
    report = run_fresh_worker(spec, prelude="import payments.chain.local\n")

    assert {"web3", "eth_account"} <= set(report["after import"]["loaded"])
    assert report[reverse("rental:catalogue")]["status"] == 200


@pytest.mark.django_db(transaction=True)
def test_the_api_loads_its_libraries_when_asked(customer, catalogue):
    """The same fresh worker, after a page, serves the API's catalogue and its schema: the
    first request under /api/ imports the API's URLconf, DRF and the schema generator (the check
    above is not blind, and the deferred URLconf answers)."""
    catalogue_path = reverse("api:catalogue")
    schema_path = reverse("api:schema")
    spec = {
        "customer": customer.pk,
        "rpc_url": "",
        "token": "",
        "libraries": API_LIBRARIES,
        "pages": [
            (reverse("rental:catalogue"), {}),
            (catalogue_path, {}),
            (schema_path, {"Accept": "application/vnd.oai.openapi+json"}),
        ],
    }
    report = run_fresh_worker(spec)

    assert report[reverse("rental:catalogue")] == {"status": 200, "loaded": []}
    assert report[catalogue_path]["status"] == 401  # DRF asked for a Bearer token
    assert {"api.urls", "rest_framework.views"} <= set(report[catalogue_path]["loaded"])
    assert report[schema_path] == {"status": 200, "loaded": sorted(API_LIBRARIES)}
