"""The billing details from a script (the billing page's form and service), and deleting the
account's SSH key."""

import pytest
from django.urls import reverse

from accounts.models import BillingDetails, User
from tests.api.contract import assert_matches_schema

from .conftest import SSH_KEY, field_errors, problem_of

BILLING = "/api/v1/account/billing/"
SSH = "/api/v1/account/ssh-key/"
DETAILS = {"company_name": "Hopper Labs", "vat_number": "IT01234567890", "address": "Via Roma 1"}


def test_no_billing_details_read_as_empty(api):
    response = api.get(BILLING)

    assert response.status_code == 200
    assert assert_matches_schema(response, "get", BILLING) == {
        "company_name": "",
        "vat_number": "",
        "address": "",
        "updated_at": None,
    }


def test_put_saves_the_details_trimmed_and_get_reads_them(api, customer):
    response = api.put(BILLING, {**DETAILS, "address": "  Via Roma 1\n00100 Roma  "})

    assert response.status_code == 200, response.content
    body = assert_matches_schema(response, "put", BILLING)
    assert body["address"] == "Via Roma 1\n00100 Roma"
    assert body["updated_at"] is not None
    details = BillingDetails.objects.get(user=customer)
    assert (details.company_name, details.vat_number) == ("Hopper Labs", "IT01234567890")
    assert api.get(BILLING).json() == body


def test_put_empties_what_it_leaves_out_and_patch_keeps_it(api, customer):
    api.put(BILLING, DETAILS)

    patched = api.patch(BILLING, {"vat_number": "IT999"})

    assert patched.status_code == 200, patched.content
    assert_matches_schema(patched, "patch", BILLING)
    assert {k: patched.json()[k] for k in DETAILS} == {**DETAILS, "vat_number": "IT999"}

    replaced = api.put(BILLING, {"company_name": "Only this"})
    assert {k: replaced.json()[k] for k in DETAILS} == {
        "company_name": "Only this",
        "vat_number": "",
        "address": "",
    }
    assert BillingDetails.objects.get(user=customer).vat_number == ""


@pytest.mark.parametrize("method", ["put", "patch"])
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"company_name": "x" * 201}, "company_name", "at most 200 characters"),
        ({"vat_number": "x" * 41}, "vat_number", "at most 40 characters"),
        ({"address": "x" * 501}, "address", "at most 500 characters"),
        ({"vat_number": 1234}, "vat_number", "Send this field as a JSON string."),
        ({"address": ["Via Roma"]}, "address", "Send this field as a JSON string."),
        # Not nullable in the schema: PATCH once read a null as "left out" and emptied it.
        ({"address": None}, "address", "Send this field as a JSON string."),
        ({"company_name": None, "vat_number": "IT1"}, "company_name", "as a JSON string."),
        ({"company_name": "Nul\x00Co"}, "company_name", "Null characters are not allowed."),
        ({"updated_at": "2030-01-01T00:00:00Z"}, "updated_at", "not part of this request"),
        ({"user": 1}, "user", "not part of this request"),
    ],
)
def test_bad_billing_details_are_a_400_and_change_nothing(
    api, customer, method, body, field, message
):
    api.put(BILLING, DETAILS)
    saved = BillingDetails.objects.get(user=customer)

    response = getattr(api, method)(BILLING, body)

    assert response.status_code == 400
    assert_matches_schema(response, method, BILLING)
    assert message in field_errors(response)[field][0]
    after = BillingDetails.objects.get(user=customer)
    assert (after.company_name, after.vat_number, after.address, after.updated_at) == (
        saved.company_name,
        saved.vat_number,
        saved.address,
        saved.updated_at,
    )


def test_a_body_that_is_not_an_object_is_a_400(api, customer):
    response = api.put(BILLING, ["Hopper Labs"])

    assert response.status_code == 400
    assert "Send a JSON object" in field_errors(response)[""][0]
    assert not BillingDetails.objects.filter(user=customer).exists()


def test_billing_needs_read_to_read_and_order_to_write(client_for, customer):
    reader = client_for(customer, ["read"])
    assert reader.get(BILLING).status_code == 200
    for response in (reader.put(BILLING, DETAILS), reader.patch(BILLING, DETAILS)):
        assert response.status_code == 403
        assert "“order” scope" in problem_of(response)["detail"]
    assert not BillingDetails.objects.filter(user=customer).exists()
    assert client_for(customer, ["pay"]).get(BILLING).status_code == 403


def test_a_replayed_put_answers_the_first_response(api, customer):
    headers = {"HTTP_IDEMPOTENCY_KEY": "billing-1"}
    first = api.put(BILLING, DETAILS, headers=headers)
    api.put(BILLING, {"company_name": "Changed since"})

    again = api.put(BILLING, DETAILS, headers=headers)

    assert again["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert BillingDetails.objects.get(user=customer).company_name == "Changed since"
    other_body = api.put(BILLING, {"company_name": "Another"}, headers=headers)
    assert other_body.status_code == 422


def test_the_page_and_the_api_read_and_write_the_same_details(
    api, customer, other_customer, customer_client
):
    page = customer_client.post(reverse("accounts:billing"), DETAILS)
    assert page.status_code == 302
    assert {k: api.get(BILLING).json()[k] for k in DETAILS} == DETAILS

    api.put(BILLING, {**DETAILS, "company_name": "From the API"})
    form = customer_client.get(reverse("accounts:billing")).context["form"]
    assert form.initial["company_name"] == "From the API"
    # Another customer's details are theirs alone.
    assert not BillingDetails.objects.filter(user=other_customer).exists()


# ------------------------------------------------------------------------ the SSH key


def test_delete_removes_the_saved_key_and_is_idempotent(api, customer):
    api.put(SSH, {"ssh_public_key": SSH_KEY})

    response = api.delete(SSH)

    assert response.status_code == 204 and response.content == b""
    assert User.objects.get(pk=customer.pk).ssh_public_key == ""
    assert api.get(SSH).json() == {"ssh_public_key": "", "fingerprint": None, "key_type": None}
    assert api.delete(SSH).status_code == 204


def test_delete_keeps_the_key_an_order_was_given(api, customer, order):
    api.put(
        f"/api/v1/orders/{order.pk}/ssh-key/", {"ssh_public_key": SSH_KEY, "save_on_account": True}
    )

    assert api.delete(SSH).status_code == 204

    order.refresh_from_db()
    assert order.ssh_public_key == SSH_KEY
    assert User.objects.get(pk=customer.pk).ssh_public_key == ""


def test_delete_needs_the_order_scope_and_touches_only_the_callers_key(
    client_for, customer, other_customer
):
    for user in (customer, other_customer):
        user.ssh_public_key = SSH_KEY
        user.save(update_fields=["ssh_public_key"])

    refused = client_for(customer, ["read"]).delete(SSH)
    assert refused.status_code == 403
    assert User.objects.get(pk=customer.pk).ssh_public_key == SSH_KEY

    assert client_for(customer, ["order"]).delete(SSH).status_code == 204
    assert User.objects.get(pk=customer.pk).ssh_public_key == ""
    assert User.objects.get(pk=other_customer.pk).ssh_public_key == SSH_KEY


def test_the_page_removes_the_key_as_the_api_does(api, customer, customer_client):
    api.put(SSH, {"ssh_public_key": SSH_KEY})
    customer_client.post(reverse("accounts:ssh_key"), {"ssh_public_key": ""})
    assert api.get(SSH).json()["fingerprint"] is None
