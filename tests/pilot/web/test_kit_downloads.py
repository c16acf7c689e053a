"""The two downloads of a paid order: the diagnostics kit (a fresh upload token each time, the
old one replaced) and the pilot folder; owner only, paid to active only, in the customer's
language."""

import hashlib
import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.urls import reverse

from pilot.models import KitToken
from pilot.services.reports import report_store
from rental.models import OrderStatus
from rental.services.lifecycle import rentals_tick

from .conftest import build_report, download_token, encode

pytestmark = pytest.mark.django_db

KITS = ("pilot:kit_diagnostics", "pilot:kit_pilot")


def url(name, order) -> str:
    return reverse(name, kwargs={"order_id": order.pk})


def files_of(response) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(response.content)) as kit:
        return {name: kit.read(name) for name in kit.namelist() if not name.endswith("/")}


def test_the_diagnostics_kit_carries_a_hashed_token_and_the_absolute_upload_url(
    customer_client, active_order, settings
):
    settings.SITE_URL = "https://gpu.example.com/"
    response = customer_client.get(url("pilot:kit_diagnostics", active_order))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    reference = active_order.reference
    assert response["Content-Disposition"] == f'attachment; filename="diagnostics-{reference}.zip"'
    files = files_of(response)
    folder = f"{reference.lower()}-diagnostics/"
    assert {f"{folder}diagnose.py", f"{folder}order.json", f"{folder}README.md"} <= set(files)
    order_json = json.loads(files[f"{folder}order.json"])
    upload = order_json["upload"]
    assert upload["url"] == (
        f"https://gpu.example.com/account/orders/{active_order.pk}/kit/reports/"
    )
    assert upload["expires_at"] == active_order.ends_at.isoformat()
    stored = KitToken.objects.get()
    assert stored.order == active_order
    assert stored.token_hash == hashlib.sha256(upload["token"].encode()).hexdigest()
    assert upload["token"] not in stored.token_hash
    assert order_json["order"] == {"id": active_order.pk, "reference": reference}


def test_a_new_kit_replaces_the_token(customer_client, active_order):
    first = download_token(customer_client, active_order)
    second = download_token(customer_client, active_order)
    assert first != second
    tokens = list(KitToken.objects.filter(order=active_order).order_by("pk"))
    assert len(tokens) == 2
    assert tokens[0].replaced_at is not None
    assert tokens[1].replaced_at is None


def test_the_pilot_folder_downloads(customer_client, active_order):
    response = customer_client.get(url("pilot:kit_pilot", active_order))
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="pilot-{active_order.reference}.zip"'
    )
    names = set(files_of(response))
    folder = f"{active_order.reference.lower()}-pilot/"
    assert f"{folder}check_pilot.py" in names
    assert f"{folder}config/pilot.json" in names
    assert sum(name.startswith(f"{folder}data/pilot/") for name in names) >= 12
    assert KitToken.objects.count() == 0  # the pilot folder carries no token


def test_the_kits_speak_the_customer_s_language(customer_client, customer, active_order):
    customer.language = "it"
    customer.save(update_fields=["language"])
    diagnostics = files_of(customer_client.get(url("pilot:kit_diagnostics", active_order)))
    order_json = next(v for k, v in diagnostics.items() if k.endswith("order.json"))
    assert json.loads(order_json)["language"] == "it"
    pilot = files_of(customer_client.get(url("pilot:kit_pilot", active_order)))
    check = next(v for k, v in pilot.items() if k.endswith("check_pilot.py")).decode()
    assert 'DEFAULT_LANGUAGE = "it"' in check


@pytest.mark.parametrize("kit", KITS)
def test_another_customer_s_order_is_404(client, other_customer, active_order, kit):
    client.force_login(other_customer)
    assert client.get(url(kit, active_order)).status_code == 404
    assert KitToken.objects.count() == 0


@pytest.mark.parametrize("kit", KITS)
def test_a_logged_out_visitor_goes_to_the_login_page(client, active_order, kit):
    response = client.get(url(kit, active_order))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


@pytest.mark.parametrize("kit", KITS)
def test_an_unpaid_order_gets_a_message_and_no_kit(customer_client, funded, make_order, kit):
    unpaid = make_order(funded, status=OrderStatus.AWAITING_PAYMENT)
    response = customer_client.get(url(kit, unpaid))
    assert response.status_code == 409
    assert response["Content-Type"].startswith("text/html")
    assert "The kits are available once the order is paid" in response.content.decode()
    assert KitToken.objects.count() == 0


def test_a_provisioning_order_gets_its_kits(customer_client, funded, make_order):
    order = make_order(funded, status=OrderStatus.PROVISIONING)
    for kit in KITS:
        assert customer_client.get(url(kit, order)).status_code == 200


def test_the_order_page_links_both_kits_while_they_are_open(customer_client, active_order):
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": active_order.pk})
    ).content.decode()
    for kit in KITS:
        assert f'href="{url(kit, active_order)}"' in html


def test_an_ended_order_keeps_its_pilot_without_kits_or_uploads(
    customer_client, active_order, django_capture_on_commit_callbacks
):
    token = download_token(customer_client, active_order)
    report = report_store(order=active_order, raw=encode(build_report(active_order)), token=token)
    with django_capture_on_commit_callbacks(execute=True):
        rentals_tick(now=active_order.ends_at + timedelta(minutes=1))
    active_order.refresh_from_db()
    assert active_order.status == OrderStatus.ENDED

    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": active_order.pk})
    ).content.decode()
    assert 'data-field="kits-closed"' in html
    for kit in KITS:
        assert url(kit, active_order) not in html
        assert customer_client.get(url(kit, active_order)).status_code == 409
    assert 'data-section="pilot-upload"' not in html
    assert f'id="report-{report.pk}"' in html  # the report stays
    assert 'data-section="pilot-decision"' in html  # and a decision can still be recorded
    response = customer_client.post(
        reverse("pilot:decision_record", kwargs={"order_id": active_order.pk}),
        {"kind": "launch", "motivation": "Twelve of twelve, re-read from my copy."},
    )
    assert response.status_code == 302
    assert KitToken.objects.filter(order=active_order).count() == 1
