"""The pilot's two kits from a script: the order page's zips (the diagnostics kit with a new
upload token each time, as on the page), owner only, from payment on."""

import io
import json
import zipfile

import pytest
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from pilot.models import KitToken
from rental.models import OrderStatus
from tests.api.contract import assert_matches_schema, response_schema

from .conftest import problem_of

DIAGNOSTICS = "/api/v1/orders/{order_id}/kit/diagnostics.zip"
PILOT = "/api/v1/orders/{order_id}/kit/pilot.zip"


@pytest.fixture
def paid_order(customer, credit, order, django_capture_on_commit_callbacks):
    credit(customer, "1000.00")
    with django_capture_on_commit_callbacks(execute=True):
        balance_pay_order(order_id=order.pk, customer=customer)
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    return order


def files_of(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as kit:
        return {name: kit.read(name) for name in kit.namelist() if not name.endswith("/")}


def _upload_token(files: dict[str, bytes]) -> str:
    [order_json] = [body for name, body in files.items() if name.endswith("/order.json")]
    return json.loads(order_json)["upload"]["token"]


def test_the_pilot_folder_is_the_pages_zip(api, customer_client, paid_order):
    response = api.get(PILOT.format(order_id=paid_order.pk))
    page = customer_client.get(reverse("pilot:kit_pilot", kwargs={"order_id": paid_order.pk}))

    assert response.status_code == page.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == page["Content-Disposition"]
    assert response_schema("get", PILOT, 200, "application/zip") is not None
    assert files_of(response.content) == files_of(page.content)
    assert f"{paid_order.reference.lower()}-pilot/check_pilot.py" in files_of(response.content)


def test_the_diagnostics_kit_is_the_pages_with_a_new_token(api, customer_client, paid_order):
    page = customer_client.get(reverse("pilot:kit_diagnostics", kwargs={"order_id": paid_order.pk}))
    page_token = _upload_token(files_of(page.content))

    response = api.get(DIAGNOSTICS.format(order_id=paid_order.pk))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == page["Content-Disposition"]
    ours, theirs = files_of(response.content), files_of(page.content)
    api_token = _upload_token(ours)
    assert api_token != page_token
    assert set(ours) == set(theirs)
    for name in ours:
        assert ours[name].replace(api_token.encode(), b"T") == theirs[name].replace(
            page_token.encode(), b"T"
        ), name
    # The page's kit's token is replaced by the API's, as a second page download would.
    tokens = list(KitToken.objects.filter(order=paid_order).order_by("pk"))
    assert [token.replaced_at is None for token in tokens] == [False, True]


def test_a_kit_before_payment_is_a_409_problem(api, order):
    for template in (DIAGNOSTICS, PILOT):
        response = api.get(template.format(order_id=order.pk))
        assert response.status_code == 409
        assert_matches_schema(response, "get", template)
        assert "paid" in problem_of(response)["detail"]
    assert not KitToken.objects.exists()


def test_another_customers_kit_is_404_and_issues_no_token(client_for, other_customer, paid_order):
    for template in (DIAGNOSTICS, PILOT):
        response = client_for(other_customer).get(template.format(order_id=paid_order.pk))
        assert response.status_code == 404
        assert problem_of(response)["detail"] == "No such order in your account."
    assert not KitToken.objects.exists()


@pytest.mark.parametrize("path", ["abc", "%D9%A5", "99999999999999999999999", "0"])
def test_tampered_order_ids_are_404(api, path):
    for template in (DIAGNOSTICS, PILOT):
        response = api.get(template.replace("{order_id}", path))
        assert response.status_code == 404
        assert problem_of(response)["status"] == 404


def test_the_diagnostics_kit_needs_order_and_the_pilot_folder_read(
    client_for, customer, paid_order
):
    reader = client_for(customer, ["read"])
    refused = reader.get(DIAGNOSTICS.format(order_id=paid_order.pk))
    assert refused.status_code == 403
    assert "“order” scope" in problem_of(refused)["detail"]
    assert not KitToken.objects.exists()
    assert reader.get(PILOT.format(order_id=paid_order.pk)).status_code == 200
    assert (
        client_for(customer, ["pay"]).get(PILOT.format(order_id=paid_order.pk)).status_code == 403
    )


def test_a_kit_refuses_json_with_a_406_problem(api, paid_order):
    response = api.get(
        PILOT.format(order_id=paid_order.pk), headers={"HTTP_ACCEPT": "application/json"}
    )
    assert response.status_code == 406
    assert_matches_schema(response, "get", PILOT)
