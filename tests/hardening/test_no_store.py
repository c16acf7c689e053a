"""Pages of a logged-in person and CSV downloads are never kept by a browser or a proxy:
`Cache-Control: no-store`. Anonymous catalogue pages stay cacheable."""

import pytest
from django.urls import reverse


def directives(response) -> set[str]:
    return {
        part.strip().split("=")[0]
        for part in response.get("Cache-Control", "").split(",")
        if part.strip()
    }


def test_a_customer_page_is_not_stored(customer_client, catalogue):
    for url in (
        reverse("rental:order_list"),
        reverse("accounts:overview"),
        reverse("payments:statement"),
    ):
        response = customer_client.get(url)
        assert response.status_code == 200
        assert "no-store" in directives(response), url
        assert "public" not in directives(response)


def test_even_the_catalogue_and_its_live_summary_are_not_stored_for_a_logged_in_customer(
    customer_client, catalogue
):
    # They show the customer's name in the header.
    assert "no-store" in directives(customer_client.get(reverse("rental:catalogue")))
    summary = customer_client.get(reverse("rental:configure"), headers={"HX-Request": "true"})
    assert "no-store" in directives(summary)


def test_an_ops_page_is_not_stored(operator_client, catalogue):
    response = operator_client.get(reverse("rental:ops_hosts"))
    assert response.status_code == 200
    assert "no-store" in directives(response)


def test_a_finance_csv_is_not_stored(finance_client, customer, credit):
    credit(customer, "25.00")
    response = finance_client.get(reverse("payments:finance_journal_csv"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert b"".join(response.streaming_content).count(b"\n") >= 2
    assert "no-store" in directives(response)


def test_the_customer_statement_csv_is_not_stored(customer_client, customer, credit):
    credit(customer, "25.00")
    response = customer_client.get(reverse("payments:statement_csv"))
    assert response["Content-Type"].startswith("text/csv")
    assert "no-store" in directives(response)


@pytest.mark.parametrize("name", ["rental:catalogue", "rental:configure"])
def test_anonymous_catalogue_pages_stay_cacheable(client, catalogue, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    assert "no-store" not in directives(response)
    assert "private" not in directives(response)


def test_the_login_redirect_of_an_anonymous_visitor_is_not_marked_either(client, db):
    # Only what a logged-in person sees is marked; a redirect to the login page says nothing.
    response = client.get(reverse("rental:order_list"))
    assert response.status_code == 302
    assert "no-store" not in directives(response)


def test_static_files_keep_their_own_caching_even_for_a_logged_in_customer(
    settings, customer_client
):
    settings.WHITENOISE_USE_FINDERS = True
    settings.WHITENOISE_AUTOREFRESH = True
    response = customer_client.get("/" + settings.STATIC_URL.lstrip("/") + "css/app.css")
    assert response.status_code == 200
    assert "no-store" not in directives(response)


def test_a_request_with_credentials_in_a_header_is_not_stored_either(client, catalogue):
    response = client.get(reverse("rental:catalogue"), headers={"Authorization": "Bearer token"})
    assert "no-store" in directives(response)
