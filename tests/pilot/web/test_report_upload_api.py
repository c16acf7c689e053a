"""diagnose.py --upload: POST /account/orders/<id>/kit/reports/ with the kit's token.

A valid report is stored and shown on the order page; anything wrong is refused with a clear
JSON message and stores nothing (not even the token's last use)."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from pilot.models import DiagnosticsReport, KitToken
from pilot.report import MAX_REPORT_BYTES
from rental.models import Order, OrderStatus
from rental.services import order_set_status

from .conftest import build_report, encode, issue_token, upload, with_changes

pytestmark = pytest.mark.django_db


def assert_refused(response, status: int, *words: str) -> None:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    message = response.json()["error"]
    for word in words:
        assert word in message, message
    assert DiagnosticsReport.objects.count() == 0


def test_a_valid_report_is_stored_and_shown_on_the_order_page(customer_client, active_order):
    token = issue_token(active_order)
    report = build_report(active_order, failed="torch")

    response = upload(Client(), active_order, encode(report), token)  # no session, no cookie

    assert response.status_code == 201, response.content
    body = response.json()
    stored = DiagnosticsReport.objects.get()
    assert body["id"] == stored.pk
    assert body["order"] == active_order.reference
    assert body["first_error"] == "torch"
    assert body["page"].endswith(f"/account/orders/{active_order.pk}/")
    assert stored.order == active_order
    assert stored.source == "token"
    assert stored.step_reached == "torch"
    assert stored.first_error_step == "torch"
    assert stored.document == report
    assert [s["status"] for s in stored.steps] == [
        "ok",
        "ok",
        "failed",
        "skipped",
        "skipped",
        "skipped",
    ]
    assert stored.handover["problems"] == []
    assert stored.handover["expected"]["cards"] == active_order.total_cards
    token_row = KitToken.objects.get()
    assert token_row.last_used_at is not None
    assert token not in token_row.token_hash  # only the hash is stored

    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": active_order.pk})
    ).content.decode()
    assert 'data-step="torch" data-status="failed"' in html
    assert 'data-step="interpreter" data-status="ok"' in html
    assert "First error at “PyTorch import”" in html
    assert "This machine matches the order." in html


def test_malformed_json_is_refused(customer_client, active_order):
    token = issue_token(active_order)
    assert_refused(upload(Client(), active_order, b'{"schema": "gpu-rental/diag', token), 400)
    assert KitToken.objects.get().last_used_at is None


def test_a_report_off_the_schema_is_refused_with_the_reason(customer_client, active_order):
    token = issue_token(active_order)
    report = build_report(active_order)
    for bad in (
        with_changes(report, schema="something-else"),
        with_changes(report, schema_version=2),
        with_changes(report, steps="all fine"),
        with_changes(report, order={"id": str(active_order.pk), "reference": "x"}),
    ):
        response = upload(Client(), active_order, encode(bad), token)
        assert_refused(response, 400)
        assert response.json()["error"].strip()


def test_an_oversized_report_is_refused_before_and_after_reading(customer_client, active_order):
    token = issue_token(active_order)
    # Declared too large: refused without reading a byte.
    huge = b"x" * (MAX_REPORT_BYTES + 1)
    assert_refused(upload(Client(), active_order, huge, token), 413, "KiB")
    # A valid report one byte past the limit.
    assert_refused(
        upload(Client(), active_order, padded_to(active_order, MAX_REPORT_BYTES + 1), token), 413
    )
    assert KitToken.objects.get().last_used_at is None
    # Exactly at the limit: accepted.
    response = upload(Client(), active_order, padded_to(active_order, MAX_REPORT_BYTES), token)
    assert response.status_code == 201, response.content


def padded_to(order, size: int) -> bytes:
    """A valid report of exactly `size` bytes: its step data padded with strings within the
    schema's limits (1000 characters each, 256 per list, 64 keys)."""
    report = build_report(order)
    data = report["steps"][0]["data"]
    chunk = "x" * 1000
    key = 0
    while len(encode(report)) + 1100 < size:
        data.setdefault(f"k{key}", [])
        if len(data[f"k{key}"]) == 256:
            key += 1
            continue
        data[f"k{key}"].append(chunk)
    data["last"] = ""
    data["last"] = "x" * (size - len(encode(report)))
    body = encode(report)
    assert len(body) == size
    return body


def test_the_token_of_another_order_is_refused(customer_client, active_order, make_order, funded):
    second = make_order(funded)
    token_of_second = issue_token(second)
    report = build_report(active_order)
    response = upload(Client(), active_order, encode(report), token_of_second)
    assert_refused(response, 403, "another order")


def test_a_report_naming_another_order_is_refused(
    customer_client, active_order, make_order, funded
):
    second = make_order(funded)
    token = issue_token(active_order)
    report = build_report(second)
    response = upload(Client(), active_order, encode(report), token)
    assert_refused(response, 400, second.reference, active_order.reference)


def test_a_replaced_token_stops_working_and_the_new_one_works(customer_client, active_order):
    old = issue_token(active_order)
    new = issue_token(active_order)
    assert old != new
    assert KitToken.objects.filter(order=active_order, replaced_at__isnull=True).count() == 1
    report = encode(build_report(active_order))

    assert_refused(upload(Client(), active_order, report, old), 401, "newer diagnostics kit")
    assert upload(Client(), active_order, report, new).status_code == 201


def test_the_token_expires_with_the_rental(customer_client, active_order):
    token = issue_token(active_order)
    report = encode(build_report(active_order))
    # Past the rental's end, before the tick ends it: refused.
    now = timezone.now()
    Order.objects.filter(pk=active_order.pk).update(
        starts_at=now - timedelta(days=7), ends_at=now - timedelta(seconds=1)
    )
    assert_refused(upload(Client(), active_order, report, token), 401, "expired")
    # Ended: refused too.
    order_set_status(
        order_id=active_order.pk, to_status=OrderStatus.ENDED, actor=None, reason="Rental ended"
    )
    assert_refused(upload(Client(), active_order, report, token), 401, "expired")


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic Z3JhY2U6cGFzcw==", "Bearer grk_not-a-real-token"],
)
def test_no_token_or_an_unknown_one_is_refused(customer_client, active_order, authorization):
    issue_token(active_order)
    headers = {} if authorization is None else {"HTTP_AUTHORIZATION": authorization}
    response = upload(Client(), active_order, encode(build_report(active_order)), None, **headers)
    assert_refused(response, 401, "token")


def test_the_session_alone_does_not_upload(customer_client, active_order):
    """The customer's session is no credential here: only the kit's token is."""
    response = upload(customer_client, active_order, encode(build_report(active_order)), None)
    assert_refused(response, 401)


def test_only_post_is_answered(active_order):
    response = Client().get(
        reverse("pilot:report_upload_api", kwargs={"order_id": active_order.pk})
    )
    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_messages_speak_the_customer_s_language(customer_client, customer, active_order):
    customer.language = "it"
    customer.save(update_fields=["language"])
    old = issue_token(active_order)
    issue_token(active_order)
    response = upload(Client(), active_order, encode(build_report(active_order)), old)
    assert response.status_code == 401
    assert "sostituito" in response.json()["error"]
