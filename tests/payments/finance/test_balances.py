"""Every customer's balance, searchable by email and paged by fifty."""

import re

from django.urls import reverse

URL = reverse("payments:finance_balances")


def rows(response) -> list[str]:
    return re.findall(r'<tr data-account="\d+">.*?</tr>', response.content.decode(), re.S)


def test_balances_show_name_email_and_amount(finance_client, customer, make_customer, credit):
    alan = make_customer(email="alan@example.com", first_name="Alan", last_name="Turing")
    credit(customer, "120.50")
    credit(alan, "1234.00")

    response = finance_client.get(URL)

    assert response.status_code == 200
    found = rows(response)
    assert len(found) == 2
    assert "Alan Turing" in found[0] and "1,234.00 USD" in found[0]
    assert "Grace Hopper" in found[1] and "120.50 USD" in found[1]
    assert "2 customer balances, 1,354.50 USD in all." in response.content.decode()


def test_the_search_narrows_by_email(finance_client, customer, make_customer, credit):
    credit(customer, "1.00")
    credit(make_customer(email="alan@example.com"), "2.00")

    response = finance_client.get(URL, {"email": "GRACE"})

    found = rows(response)
    assert len(found) == 1 and "grace@example.com" in found[0]
    assert "1 customer balance, 1.00 USD in all." in response.content.decode()
    assert rows(finance_client.get(URL, {"email": "nobody"})) == []


def test_each_row_links_to_the_journal_and_to_an_adjustment(finance_client, customer, credit):
    credit(customer, "1.00")
    row = rows(finance_client.get(URL))[0]
    assert f'href="{reverse("payments:finance_journal")}?customer={customer.pk}"' in row
    assert f'href="{reverse("payments:finance_adjustment")}?email=grace%40example.com"' in row


def test_fifty_balances_a_page(finance_client, make_customer, credit):
    for number in range(51):
        credit(make_customer(email=f"c{number:02d}@example.com"), "1.00")
    first = finance_client.get(URL)
    second = finance_client.get(URL, {"page": 2})
    assert len(rows(first)) == 50
    assert len(rows(second)) == 1 and "c50@example.com" in rows(second)[0]
    assert "Page 2 of 2" in second.content.decode()


def test_an_overlong_search_is_refused(finance_client):
    response = finance_client.get(URL, {"email": "x" * 255})
    assert response.status_code == 400
    assert "An email address has at most 254 characters." in response.content.decode()
