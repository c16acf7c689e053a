import csv
import io

from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order


def test_statement_lists_every_entry_with_running_balance_and_order_link(
    customer_client, customer, catalogue, place_order, credit
):
    credit(customer, "500.00", reason="Bank transfer received")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)  # 201.60
    balance_pay_order(order_id=order.pk, customer=customer)
    credit(customer, "10.00", reason="Goodwill")

    html = customer_client.get(reverse("payments:statement")).content.decode()

    assert "Balance: 308.40 USD" in html
    rows = html[html.index("<tbody>") : html.index("</tbody>")].split("<tr")[1:]
    assert len(rows) == 3
    assert "Bank transfer received" in rows[0] and "500.00 USD" in rows[0]
    assert "-201.60 USD" in rows[1] and "298.40 USD" in rows[1]
    assert reverse("rental:order_detail", kwargs={"order_id": order.pk}) in rows[1]
    assert order.reference in rows[1]
    assert "Goodwill" in rows[2] and "308.40 USD" in rows[2]
    # The system's own memos are English bookkeeping: the customer sees the translated kind.
    assert "Order payment" in rows[1]
    assert "paid from the USD balance" not in html


def test_an_italian_statement_has_no_english_system_memo(
    client, make_customer, catalogue, place_order, credit
):
    customer = make_customer(language="it")
    client.force_login(customer)
    credit(customer, "500.00", reason="Bonifico ricevuto")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    balance_pay_order(order_id=order.pk, customer=customer)

    html = client.get(reverse("payments:statement"), HTTP_ACCEPT_LANGUAGE="it").content.decode()

    assert "Pagamento dell&#x27;ordine" in html
    assert "Bonifico ricevuto" in html  # finance's reason, written for the customer
    assert "paid from the USD balance" not in html


def test_statement_shows_only_the_customers_own_entries(
    customer_client, customer, make_customer, credit
):
    credit(make_customer(), "999.00", reason="Someone else")
    html = customer_client.get(reverse("payments:statement")).content.decode()
    assert "Someone else" not in html
    assert "No movement yet." in html


def test_statement_csv(customer_client, customer, catalogue, place_order, credit):
    credit(customer, "500.00", reason="Bank transfer received")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    balance_pay_order(order_id=order.pk, customer=customer)

    response = customer_client.get(reverse("payments:statement_csv"))

    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["date", "kind", "memo", "order", "amount_usd", "running_balance_usd"]
    assert [row[1:] for row in rows[1:]] == [
        ["adjustment", "Bank transfer received", "", "500.00", "500.00"],
        [
            "order_payment",
            f"Order {order.reference} paid from the USD balance",
            order.reference,
            "-201.60",
            "298.40",
        ],
    ]


def test_running_balances_stay_true_across_pages(customer_client, customer, credit):
    for _ in range(60):
        credit(customer, "1.00")
    first_page = customer_client.get(reverse("payments:statement"), {"page": 1}).content.decode()
    last_page = customer_client.get(reverse("payments:statement")).content.decode()
    assert "Page 2 of 2" in last_page
    assert last_page.count("<tr data-entry") == 10
    assert "60.00 USD</td>" in last_page
    assert "50.00 USD</td>" in first_page and "51.00 USD</td>" not in first_page


def test_statement_needs_a_login(client):
    response = client.get(reverse("payments:statement"))
    assert response.status_code == 302
    assert client.get(reverse("payments:statement_csv")).status_code == 302


def test_account_page_shows_the_balance(customer_client, customer, credit):
    credit(customer, "1234.50")
    html = customer_client.get(reverse("accounts:overview")).content.decode()
    assert "USD balance: 1,234.50 USD" in html
