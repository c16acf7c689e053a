"""The report file uploaded on the order page (session and CSRF): the same rules as the kit's
upload; a refusal is shown on the page with HTTP 400 and stores nothing."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from pilot.models import DiagnosticsReport
from pilot.report import MAX_REPORT_BYTES
from rental.models import OrderStatus

from .conftest import build_report, encode

pytestmark = pytest.mark.django_db


def upload_url(order) -> str:
    return reverse("pilot:report_upload_page", kwargs={"order_id": order.pk})


def send(client, order, content: bytes, name: str = "report.json"):
    file = SimpleUploadedFile(name, content, content_type="application/json")
    return client.post(upload_url(order), {"report": file})


def test_a_report_file_is_stored_and_its_steps_shown(customer_client, customer, active_order):
    response = send(customer_client, active_order, encode(build_report(active_order)))

    assert response.status_code == 302
    assert response["Location"].endswith(f"/account/orders/{active_order.pk}/#pilot")
    stored = DiagnosticsReport.objects.get()
    assert (stored.order, stored.source, stored.uploaded_by) == (active_order, "page", customer)
    assert stored.token is None
    html = customer_client.get(response["Location"]).content.decode()
    assert "The report is stored on the order." in html
    for name in ("interpreter", "driver", "torch", "compute", "extensions"):
        assert f'data-step="{name}" data-status="ok"' in html
    assert 'data-step="peak_memory" data-status="skipped"' in html
    assert "No step failed." in html
    assert "This machine matches the order." in html


def assert_refused_on_page(response, *words, where="report-error"):
    assert response.status_code == 400
    html = response.content.decode()
    assert f'data-field="{where}"' in html
    for word in words:
        assert word in html, word
    assert DiagnosticsReport.objects.count() == 0


def test_a_malformed_file_is_refused_on_the_page(customer_client, active_order):
    response = send(customer_client, active_order, b"not json at all")
    assert_refused_on_page(response, "not valid JSON")


def test_an_oversized_file_is_refused_on_the_page(customer_client, active_order):
    response = send(customer_client, active_order, b" " * (MAX_REPORT_BYTES + 1))
    assert_refused_on_page(response, "256 KiB")


def test_another_order_s_report_is_refused_on_the_page(
    customer_client, active_order, make_order, funded
):
    second = make_order(funded)
    response = send(customer_client, active_order, encode(build_report(second)))
    assert_refused_on_page(response, second.reference)


def test_no_file_is_a_field_error(customer_client, active_order):
    response = customer_client.post(upload_url(active_order), {})
    assert response.status_code == 400
    assert "Choose the report.json file to upload." in response.content.decode()
    assert DiagnosticsReport.objects.count() == 0


def test_an_order_not_yet_paid_accepts_no_report(customer_client, funded, make_order):
    unpaid = make_order(funded, status=OrderStatus.AWAITING_PAYMENT)
    report = {**build_report(unpaid, host=None)}
    response = send(customer_client, unpaid, encode(report))
    # The order has no pilot section yet: the refusal is above everything.
    assert_refused_on_page(response, "does not accept reports", where="error")


def test_another_customer_s_order_is_404_and_stores_nothing(client, other_customer, active_order):
    client.force_login(other_customer)
    response = send(client, active_order, encode(build_report(active_order)))
    assert response.status_code == 404
    assert DiagnosticsReport.objects.count() == 0


def test_a_logged_out_visitor_goes_to_the_login_page(client, active_order):
    response = send(client, active_order, encode(build_report(active_order)))
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]
    assert DiagnosticsReport.objects.count() == 0


def test_without_the_csrf_token_the_upload_is_refused(customer, active_order):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    response = send(browser, active_order, encode(build_report(active_order)))
    assert response.status_code == 403
    assert DiagnosticsReport.objects.count() == 0
