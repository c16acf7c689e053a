"""The pilot through the API: the order's reports and its append-only decision log."""

import pytest

from payments.crypto.services.balance_payment import balance_pay_order
from pilot.models import DiagnosticsReport, PilotDecision
from pilot.services.reports import report_upload_by_customer
from rental.models import OrderStatus
from tests.api.contract import assert_matches_schema
from tests.pilot.web.conftest import build_report, encode

from .conftest import field_errors, problem_of


@pytest.fixture
def paid_order(customer, credit, order, django_capture_on_commit_callbacks):
    """Paid from the balance: its cards are allocated after the commit (provisioning)."""
    credit(customer, "1000.00")
    with django_capture_on_commit_callbacks(execute=True):
        balance_pay_order(order_id=order.pk, customer=customer)
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    return order


@pytest.fixture
def report(paid_order, customer):
    return report_upload_by_customer(
        order_id=paid_order.pk,
        customer=customer,
        raw=encode(build_report(paid_order, failed="torch")),
    )


def test_reports_of_the_order(api, paid_order, report):
    response = api.get(f"/api/v1/orders/{paid_order.pk}/pilot/reports/")

    assert response.status_code == 200
    assert_matches_schema(response, "get", "/api/v1/orders/{order_id}/pilot/reports/")
    [row] = response.json()["results"]
    assert row["id"] == report.pk
    assert row["first_error_step"] == "torch" and row["first_error_message"] == "torch failed"
    assert [step["status"] for step in row["steps"]][:3] == ["ok", "ok", "failed"]


def test_record_a_decision_on_a_report_then_read_the_log(api, customer, paid_order, report):
    response = api.post(
        f"/api/v1/orders/{paid_order.pk}/pilot/decisions/",
        {"kind": "fix_environment", "motivation": "PyTorch lacks sm_90.", "report": report.pk},
    )

    assert response.status_code == 201, response.content
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/pilot/decisions/")
    decision = PilotDecision.objects.get(order=paid_order)
    assert (decision.kind, decision.report_id, decision.actor) == (
        "fix_environment",
        report.pk,
        customer,
    )
    log = api.get(f"/api/v1/orders/{paid_order.pk}/pilot/decisions/")
    assert_matches_schema(log, "get", "/api/v1/orders/{order_id}/pilot/decisions/")
    assert [row["id"] for row in log.json()["results"]] == [decision.pk]
    detail = api.get(f"/api/v1/orders/{paid_order.pk}/").json()
    assert "decision" in [entry["kind"] for entry in detail["timeline"]]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "launch", "motivation": "  "}, "motivation"),
        ({"kind": "give_up", "motivation": "Too slow."}, "kind"),
        ({"kind": "launch", "motivation": "Fine.", "report": 10**9}, "report"),
        ({"kind": "launch", "motivation": "Fine.", "report": "٥"}, "report"),
        ({"kind": "launch", "motivation": "Fine.", "report": [1]}, "report"),
        ({"kind": "launch", "motivation": 42}, "motivation"),
    ],
)
def test_a_bad_decision_is_a_400_and_records_nothing(api, paid_order, report, data, field):
    response = api.post(f"/api/v1/orders/{paid_order.pk}/pilot/decisions/", data)

    assert response.status_code == 400
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/pilot/decisions/")
    assert field in field_errors(response)
    assert not PilotDecision.objects.exists()


def test_a_report_of_another_order_is_refused(
    api, customer, catalogue, place_order, paid_order, report
):
    other = place_order(customer, catalogue["h100"])

    response = api.post(
        f"/api/v1/orders/{other.pk}/pilot/decisions/",
        {"kind": "launch", "motivation": "Fine.", "report": report.pk},
    )

    assert response.status_code == 400
    assert "report" in field_errors(response)
    assert not PilotDecision.objects.exists()


def test_decisions_on_an_unpaid_order_are_a_409(api, order):
    response = api.post(
        f"/api/v1/orders/{order.pk}/pilot/decisions/", {"kind": "launch", "motivation": "Go."}
    )

    assert response.status_code == 409
    assert_matches_schema(response, "post", "/api/v1/orders/{order_id}/pilot/decisions/")
    assert problem_of(response)["detail"] == (
        "Decisions are recorded for an order that was paid; this one was not."
    )
    assert not PilotDecision.objects.exists()


def test_another_customers_pilot_is_404(client_for, other_customer, paid_order, report):
    other = client_for(other_customer)

    reports = other.get(f"/api/v1/orders/{paid_order.pk}/pilot/reports/")
    decisions = other.get(f"/api/v1/orders/{paid_order.pk}/pilot/decisions/")
    recorded = other.post(
        f"/api/v1/orders/{paid_order.pk}/pilot/decisions/",
        {"kind": "launch", "motivation": "Mine now."},
    )

    assert reports.status_code == decisions.status_code == recorded.status_code == 404
    assert_matches_schema(reports, "get", "/api/v1/orders/{order_id}/pilot/reports/")
    assert not PilotDecision.objects.exists()


# ------------------------------------------------------------------------ a report from a script

REPORTS = "/api/v1/orders/{order_id}/pilot/reports/"


def test_a_report_is_stored_as_the_order_pages_upload_stores_it(api, customer, paid_order):
    raw = encode(build_report(paid_order, failed="torch"))

    response = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw.decode())

    assert response.status_code == 201, response.content
    body = assert_matches_schema(response, "post", REPORTS)
    stored = DiagnosticsReport.objects.get(order=paid_order)
    assert body["id"] == stored.pk and stored.uploaded_by == customer
    assert body["first_error_step"] == "torch"
    listed = api.get(REPORTS.format(order_id=paid_order.pk)).json()["results"]
    assert [row["id"] for row in listed] == [stored.pk]


@pytest.mark.parametrize(
    "raw", ['{"not": "a report"}', "[1, 2]", '{"schema_version": "٣"}', "not json"]
)
def test_a_body_that_is_no_report_is_a_400_and_stores_nothing(api, paid_order, raw):
    response = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw)

    assert response.status_code == 400
    assert problem_of(response)["status"] == 400
    assert not DiagnosticsReport.objects.exists()


def test_a_report_too_large_is_a_413_problem(api, paid_order):
    raw = '{"padding": "' + "x" * (300 * 1024) + '"}'

    response = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw)

    assert response.status_code == 413
    assert_matches_schema(response, "post", REPORTS)
    assert "larger than 256 KiB" in problem_of(response)["detail"]
    assert not DiagnosticsReport.objects.exists()


@pytest.mark.parametrize("size", [300 * 1024, 3 * 1024 * 1024], ids=["over-256-KiB", "over-2.5-MB"])
def test_a_report_too_large_is_the_same_413_with_an_idempotency_key(api, paid_order, size):
    """The key once had the body read first: past Django's 2.5 MB it answered the site-wide 400."""
    raw = '{"padding": "' + "x" * size + '"}'
    headers = {"HTTP_IDEMPOTENCY_KEY": f"large-{size}"}

    response = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw, headers=headers)

    assert response.status_code == 413, response.content[:300]
    assert "larger than 256 KiB" in problem_of(response)["detail"]
    assert not DiagnosticsReport.objects.exists()


@pytest.mark.parametrize("key", [None, "deep-report"], ids=["no-key", "idempotency-key"])
@pytest.mark.parametrize("raw", ["[" * 2000 + "]" * 2000, "not json"], ids=["deep", "not-json"])
def test_a_body_that_is_no_json_is_the_malformed_problem_with_or_without_a_key(
    api, paid_order, raw, key
):
    """Without a key the report's own reader read the body, and answered "validation"; with
    one the API's parser did, and answered "malformed": one body, one answer."""
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}

    response = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw, headers=headers)

    problem = problem_of(response)
    assert response.status_code == 400 == problem["status"]
    assert problem["type"].endswith("/malformed"), problem
    assert not DiagnosticsReport.objects.exists()


def test_a_report_on_another_order_or_another_customers_is_refused(
    api, client_for, customer, other_customer, catalogue, place_order, paid_order
):
    raw = encode(build_report(paid_order)).decode()
    theirs = client_for(other_customer).post(REPORTS.format(order_id=paid_order.pk), raw=raw)
    assert theirs.status_code == 404
    # The paid order's report sent to another order of the customer's: refused, as on the page.
    another = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    tampered = api.post(REPORTS.format(order_id=another.pk), raw=raw)
    assert tampered.status_code == 400
    assert f"not for order {another.reference}" in problem_of(tampered)["detail"]
    reader = client_for(paid_order.customer, ["read"]).post(
        REPORTS.format(order_id=paid_order.pk), raw=raw
    )
    assert reader.status_code == 403
    assert not DiagnosticsReport.objects.exists()


def test_a_replayed_report_upload_stores_one_report(api, paid_order):
    raw = encode(build_report(paid_order)).decode()
    headers = {"HTTP_IDEMPOTENCY_KEY": "report-1"}

    first = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw, headers=headers)
    again = api.post(REPORTS.format(order_id=paid_order.pk), raw=raw, headers=headers)

    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.json() == first.json()
    assert DiagnosticsReport.objects.count() == 1


def test_a_report_sent_as_another_media_type_is_a_415(api, paid_order):
    raw = encode(build_report(paid_order))

    response = api.client.post(
        REPORTS.format(order_id=paid_order.pk),
        data=raw,
        content_type="text/plain",
        **api.headers,
    )

    assert response.status_code == 415
    assert problem_of(response)["status"] == 415
    assert not DiagnosticsReport.objects.exists()
