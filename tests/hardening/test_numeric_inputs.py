"""Every number a person types is read with ASCII digits only: other scripts' digits ("٥"),
"_" between digits, "+", spaces, exponents and the like get the field's clear message and
change nothing, where Python's int() and Decimal() would have read them as numbers."""

from datetime import date
from decimal import Decimal
from html import unescape

import pytest
from django.urls import reverse

from payments.finance.services import reconciliation_run
from payments.ledger.selectors.statement import customer_balance_account
from payments.models import CryptoPayment, LedgerTransaction
from rental.models import Host, Order

from .page_text import visible_text

LOTS_MESSAGE = "Enter a whole number of lots from 1 to 10."
CARDS_MESSAGE = "Enter a whole number of cards from 1 to 64."
PORT_MESSAGE = "Enter a port number from 1 to 65535."
AMOUNT_MESSAGE = "Enter the amount as a number, such as 25.00."
CENTS_MESSAGE = "Enter at most two decimal places (cents)."
POSITIVE_ADJUSTMENT = (
    "Enter an amount greater than zero; the direction says whether it is added or taken."
)
MINIMUM_TOP_UP = "The minimum top-up is 10.00 USD."

# Each of these is a number to int() (or to Django's IntegerField), and none is typed digits.
NOT_WHOLE_NUMBERS = [
    "٥",  # Arabic-Indic five
    "۵",  # Persian five
    "५",  # Devanagari five
    "５",  # fullwidth five
    "1_0",
    "+5",
    " 5 ",
    "5 ",
    "5.0",
    "5.",
    "1e1",
    "0x5",
    "²",
    "5 lots",
    "9" * 40,
]
# Each of these is a number to Decimal() (or refused by it), and none is an amount as typed.
NOT_AMOUNTS = [
    ("1e3", AMOUNT_MESSAGE),
    ("1E1", AMOUNT_MESSAGE),
    ("١٠", AMOUNT_MESSAGE),
    ("١٠.٥٠", AMOUNT_MESSAGE),
    ("１０", AMOUNT_MESSAGE),
    ("10,00", AMOUNT_MESSAGE),
    ("1,000.00", AMOUNT_MESSAGE),
    ("1_000", AMOUNT_MESSAGE),
    ("+10", AMOUNT_MESSAGE),
    (" 10 ", AMOUNT_MESSAGE),
    ("NaN", AMOUNT_MESSAGE),
    ("sNaN", AMOUNT_MESSAGE),
    ("Infinity", AMOUNT_MESSAGE),
    ("-Infinity", AMOUNT_MESSAGE),
    ("inf", AMOUNT_MESSAGE),
    ("0x10", AMOUNT_MESSAGE),
    ("10.00.00", AMOUNT_MESSAGE),
    ("10.001", CENTS_MESSAGE),
    ("-0", None),  # the form's own message for a negative amount
    ("-10", None),
]


def page_says(response, message: str) -> bool:
    return message in visible_text(unescape(response.content.decode()))


# ----------------------------------------------------------------------- the configurator


def configuration(lots: str) -> dict:
    return {"gpu_model": "h100-80gb", "duration_days": "7", "lots": lots, "preparation": "ubuntu"}


@pytest.mark.parametrize("lots", NOT_WHOLE_NUMBERS + ["-0", "-5"])
def test_confirming_an_order_with_such_lots_creates_nothing(customer_client, catalogue, lots):
    response = customer_client.post(reverse("rental:confirm"), configuration(lots))
    assert response.status_code == 400
    assert page_says(response, LOTS_MESSAGE)
    assert not Order.objects.exists()


@pytest.mark.parametrize("lots", NOT_WHOLE_NUMBERS)
def test_the_review_and_the_live_summary_show_no_price_for_such_lots(client, catalogue, lots):
    review = client.get(reverse("rental:review"), configuration(lots))
    assert review.status_code == 400
    assert page_says(review, LOTS_MESSAGE)
    assert "Confirm order" not in review.content.decode()

    summary = client.get(
        reverse("rental:configure"), configuration(lots), headers={"HX-Request": "true"}
    )
    assert page_says(summary, LOTS_MESSAGE)
    assert "USD for" not in visible_text(summary.content.decode())


def test_typed_digits_still_order_those_lots(customer_client, catalogue):
    response = customer_client.post(reverse("rental:confirm"), configuration("5"))
    assert response.status_code == 302
    assert Order.objects.get().lots == 5


@pytest.mark.parametrize("days", ["٣", " 7", "7.0", "+7", "07"])
def test_a_duration_is_one_of_the_offered_choices_only(customer_client, catalogue, days):
    response = customer_client.post(
        reverse("rental:confirm"), {**configuration("1"), "duration_days": days}
    )
    assert response.status_code == 400
    assert page_says(response, "Choose a duration of 3, 7 or 30 days.")
    assert not Order.objects.exists()


# ------------------------------------------------------------------------- operators' hosts


def host_data(catalogue, **changes) -> dict:
    return {
        "name": "gpu-h100-09",
        "gpu_model": str(catalogue["h100"].pk),
        "cards": "8",
        "ssh_host": "gpu-09.example.net",
        "ssh_port": "2201",
        "ssh_user": "ubuntu",
        "management": "manual",  # prepared by hand: available once added
        "notes": "",
        **changes,
    }


@pytest.mark.parametrize("value", NOT_WHOLE_NUMBERS + ["-0", "-8"])
@pytest.mark.parametrize(
    ("field", "message"), [("cards", CARDS_MESSAGE), ("ssh_port", PORT_MESSAGE)]
)
def test_a_host_with_such_a_number_is_not_added(operator_client, catalogue, field, message, value):
    hosts = Host.objects.count()
    response = operator_client.post(
        reverse("rental:ops_host_create"), host_data(catalogue, **{field: value})
    )
    assert response.status_code == 400
    assert page_says(response, message)
    assert Host.objects.count() == hosts


def test_a_host_with_typed_digits_is_added(operator_client, catalogue):
    response = operator_client.post(reverse("rental:ops_host_create"), host_data(catalogue))
    assert response.status_code == 302
    host = Host.objects.get(name="gpu-h100-09")
    assert (host.cards, host.ssh_port) == (8, 2201)


# ------------------------------------------------------------------ finance: adjustments


def adjustment(customer, amount: str) -> dict:
    return {
        "customer_email": customer.email,
        "direction": "credit",
        "amount": amount,
        "reason": "Bank transfer received",
        "request_key": "6f1c1d0e-8a54-4a55-9a53-0c1e4bdf7b1e",
    }


@pytest.mark.parametrize(("amount", "message"), NOT_AMOUNTS)
def test_an_adjustment_of_such_an_amount_posts_nothing(finance_client, customer, amount, message):
    before = LedgerTransaction.objects.count()
    response = finance_client.post(
        reverse("payments:finance_adjustment"), adjustment(customer, amount)
    )
    assert response.status_code == 400
    assert page_says(response, message or POSITIVE_ADJUSTMENT)
    assert LedgerTransaction.objects.count() == before
    account = customer_balance_account(customer=customer)
    assert account is None or account.balance == Decimal("0.00")


@pytest.mark.parametrize(
    ("amount", "posted"), [("10", "10.00"), ("10.5", "10.50"), ("0.01", "0.01")]
)
def test_an_adjustment_in_typed_digits_posts_that_amount(finance_client, customer, amount, posted):
    response = finance_client.post(
        reverse("payments:finance_adjustment"), adjustment(customer, amount)
    )
    assert response.status_code == 302
    assert customer_balance_account(customer=customer).balance == Decimal(posted)


# --------------------------------------------------------------------- customers: top-ups


@pytest.mark.parametrize(("amount", "message"), NOT_AMOUNTS)
def test_a_top_up_of_such_an_amount_creates_no_payment(
    customer_client, local_network, amount, message
):
    response = customer_client.post(
        reverse("payments:top_up"), {"amount": amount, "stablecoin": "local:tUSDC"}
    )
    assert response.status_code == 400
    assert page_says(response, message or MINIMUM_TOP_UP)
    assert not CryptoPayment.objects.exists()


# ------------------------------------------------- numbers read by hand: pages and run ids


def test_a_page_number_in_other_digits_is_not_that_page(
    customer_client, customer, catalogue, place_order, monkeypatch
):
    monkeypatch.setattr("rental.views.customer.ORDERS_PER_PAGE", 1)
    first, second = (
        place_order(customer, catalogue["h100"]),
        place_order(customer, catalogue["h200"]),
    )
    url = reverse("rental:order_list")
    page_two = visible_text(customer_client.get(url, {"page": "2"}).content.decode())
    default = visible_text(customer_client.get(url).content.decode())
    # Newest first: the second order on page 1, the first on page 2.
    assert second.reference in default and first.reference not in default
    assert first.reference in page_two
    for number in ("٢", "۲", "+2", " 2", "2.0", "1_1"):
        response = customer_client.get(url, {"page": number})
        assert response.status_code == 200
        assert visible_text(response.content.decode()) == default, number


def test_a_statement_page_number_in_other_digits_is_not_that_page(
    customer_client, customer, credit, monkeypatch
):
    monkeypatch.setattr("payments.ledger.views.statement.STATEMENT_PAGE_SIZE", 1)
    credit(customer, "10.00", reason="First credit")
    credit(customer, "20.00", reason="Second credit")
    url = reverse("payments:statement")
    page_one = visible_text(customer_client.get(url, {"page": "1"}).content.decode())
    default = visible_text(customer_client.get(url).content.decode())
    assert page_one != default
    for number in ("١", "+1", "1.0", " 1"):
        assert visible_text(customer_client.get(url, {"page": number}).content.decode()) == default


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("payments:finance_balances", "BALANCES_PER_PAGE"),
        ("payments:finance_journal", "JOURNAL_PER_PAGE"),
    ],
)
def test_a_finance_page_number_in_other_digits_is_not_that_page(
    finance_client, make_customer, credit, monkeypatch, name, size
):
    monkeypatch.setattr(f"payments.finance.views.{size}", 1)
    for number in range(2):
        credit(make_customer(), f"{number + 1}.00")
    url = reverse(name)
    page_two = visible_text(finance_client.get(url, {"page": "2"}).content.decode())
    default = visible_text(finance_client.get(url).content.decode())
    assert page_two != default
    for number in ("٢", "+2", "2.0"):
        assert visible_text(finance_client.get(url, {"page": number}).content.decode()) == default


def test_an_unallocated_page_number_in_other_digits_is_not_that_page(
    finance_client, holdings, monkeypatch
):
    monkeypatch.setattr("payments.finance.views.UNALLOCATED_PER_PAGE", 1)
    url = reverse("payments:finance_unallocated")
    page_two = visible_text(finance_client.get(url, {"page": "2"}).content.decode())
    default = visible_text(finance_client.get(url).content.decode())
    assert page_two != default
    for number in ("٢", "+2", "2.0"):
        assert visible_text(finance_client.get(url, {"page": number}).content.decode()) == default


def test_a_reconciliation_run_is_found_by_its_typed_number_only(finance_client, finance_user):
    run = reconciliation_run(period_start=date(2026, 1, 1), period_end=date(2026, 1, 2))
    url = reverse("payments:finance_reconciliation")
    assert finance_client.get(url, {"run": str(run.pk)}).status_code == 200
    arabic = str(run.pk).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))
    for number in (arabic, f"+{run.pk}", f" {run.pk}", f"{run.pk}.0"):
        assert finance_client.get(url, {"run": number}).status_code == 404, number


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("customer", "١٢", "Enter the customer's full email address or their numeric id."),
        ("customer", "+12", "Enter the customer's full email address or their numeric id."),
        ("order", "GR-٠٠٠٠١٢", "Enter the order's number, such as 12 or GR-000012."),
        ("order", "1_2", "Enter the order's number, such as 12 or GR-000012."),
    ],
)
def test_journal_filters_take_typed_digits_only(finance_client, field, value, message):
    response = finance_client.get(reverse("payments:finance_journal"), {field: value})
    assert response.status_code == 400
    assert page_says(response, message)
