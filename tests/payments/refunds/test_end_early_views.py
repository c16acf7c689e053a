"""The operator's "End early and refund" form on the order page, its page of its own, and
what the customer then sees on the order page, the statement and the help page."""

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.ledger.services.posting import customer_account
from payments.models import LedgerTransaction, TransactionKind
from rental.models import CardAllocation, Host, HostState, Order, OrderStatus
from rental.money import usd
from rental.services.provisioning import order_host_not_ready
from tests.conftest import confirm_teardown

from .conftest import CREDIT, paid_hours_ago

REASON = "The H200 host was not delivered by the datacentre."


def end_url(order) -> str:
    return reverse("payments:ops_order_end_early", kwargs={"order_id": order.pk})


def ops_url(order) -> str:
    return reverse("rental:ops_order", kwargs={"order_id": order.pk})


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def amount_shown(page: str) -> Decimal:
    return Decimal(re.search(r'name="expected_amount" value="([0-9.]+)"', page).group(1))


def assert_unchanged(order: Order) -> None:
    current = Order.objects.get(pk=order.pk)
    assert current.status == order.status and current.ended_early_at is None
    assert not LedgerTransaction.objects.filter(order=order, kind=TransactionKind.REFUND).exists()


def test_the_ops_page_shows_the_case_and_the_refund_then_ending_it_shows_what_was_done(
    operator_client, waiting_order, django_capture_on_commit_callbacks
):
    paid_hours_ago(waiting_order, 25)
    page = text(operator_client.get(ops_url(waiting_order)))
    assert 'data-section="end-early"' in page
    assert "Paid, and no cards in time" in page
    total = f"{waiting_order.total_usd:,.2f}"
    assert f"Refund if ended now: 168 hours not delivered, {total} USD credited" in page
    assert amount_shown(page) == waiting_order.total_usd
    assert 'name="host_failed"' not in page  # the waiting case needs no statement

    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(
            end_url(waiting_order),
            {"reason": REASON, "expected_amount": str(waiting_order.total_usd)},
            follow=True,
        )

    assert response.redirect_chain[-1][0] == ops_url(waiting_order)
    page = text(response)
    assert "are credited to the customer&#x27;s balance" in page
    assert re.search(
        rf"Ended early on <time [^>]+>[^<]+</time>: 168 hours refunded \({total} USD\)", page
    )
    assert f'<q data-field="ended-early-reason">{REASON}</q>' in page
    assert 'data-action="end-early"' not in page
    assert customer_account(waiting_order.customer).balance == Decimal(CREDIT)


def test_the_customer_sees_the_refund_on_the_order_page_and_the_statement(
    operator_client, make_active, customer
):
    order = make_active(hours=20)
    form = text(operator_client.get(ops_url(order)))
    assert "The host failed" in form
    assert "No host failure is recorded for this order" in form
    response = operator_client.post(
        end_url(order),
        {
            "reason": "Power supply failed",
            "host_failed": "on",
            "expected_amount": amount_shown(form),
        },
    )
    assert response.status_code == 302
    refund = LedgerTransaction.objects.get(order=order, kind=TransactionKind.REFUND)
    amount = refund.entries.get(amount__gt=0).amount
    assert amount == usd(order.lot_price_usd * 148 * order.lots / 168)

    client = Client()
    client.force_login(customer)
    page = text(client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk})))
    assert re.search(
        rf"Ended early on <time [^>]+>[^<]+</time>: 148 hours refunded \({amount:,.2f} USD\)", page
    )
    assert "Power supply failed" in page
    assert 'data-field="rental-period"' in page  # the period delivered
    statement = text(client.get(reverse("payments:statement")))
    assert "Refund" in statement
    assert "Order ended early: the hours not delivered, credited back" in statement
    assert f"{amount:,.2f} USD" in statement


def test_the_rule_is_on_the_order_page_and_the_help_page(customer_client, waiting_order):
    page = text(customer_client.get(reverse("rental:order_detail", args=[waiting_order.pk])))
    rule = re.search(r'data-field="refund-rule">(.*?)</p>', page).group(1)
    assert "lot price ÷ hours of the duration × hours not delivered × lots" in rule
    assert f'href="{reverse("rental:help")}#refunds"' in rule
    help_page = text(customer_client.get(reverse("rental:help")))
    assert 'id="refunds"' in help_page
    assert "24 hours after payment" in help_page
    assert "A started hour counts as not delivered" in help_page


def test_a_paid_order_not_yet_past_the_threshold_is_refused_with_the_reason(
    operator_client, waiting_order
):
    paid_hours_ago(waiting_order, 2)
    page = text(operator_client.get(ops_url(waiting_order)))
    assert "can be ended early 24 hours after it was paid" in page
    assert 'data-action="end-early"' not in page
    response = operator_client.post(
        end_url(waiting_order),
        {"reason": REASON, "expected_amount": str(waiting_order.total_usd)},
    )
    assert response.status_code == 400
    assert "can be ended early 24 hours after it was paid" in text(response)
    assert_unchanged(waiting_order)


def test_an_active_order_without_the_host_statement_is_refused(operator_client, make_active):
    order = make_active(hours=5)
    form = text(operator_client.get(ops_url(order)))
    response = operator_client.post(
        end_url(order), {"reason": "asked by the customer", "expected_amount": amount_shown(form)}
    )
    assert response.status_code == 400
    assert "can be ended early only if its host failed: confirm it here" in text(response)
    assert_unchanged(order)
    assert CardAllocation.objects.filter(order=order, released_at=None).count() == 2


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reason": "   "}, "Give the reason for ending this order early"),
        ({"reason": "x" * 501}, "Keep the reason to 500 characters (it has 501)"),
        ({"expected_amount": "abc"}, "This form is incomplete or was altered"),
        ({"expected_amount": "١٢٣"}, "This form is incomplete or was altered"),
        ({"expected_amount": "-5.00"}, "This form is incomplete or was altered"),
        ({"expected_amount": ""}, "This form is incomplete or was altered"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(operator_client, waiting_order, data, message):
    paid_hours_ago(waiting_order, 25)
    response = operator_client.post(
        end_url(waiting_order),
        {"reason": REASON, "expected_amount": str(waiting_order.total_usd), **data},
    )
    assert response.status_code == 400
    assert message in text(response).replace("&#x27;", "'")
    assert_unchanged(waiting_order)


def test_an_amount_that_changed_since_the_page_was_shown_is_confirmed_again(
    operator_client, make_active
):
    order = make_active(hours=5)
    response = operator_client.post(
        end_url(order),
        {"reason": "Host down", "host_failed": "on", "expected_amount": "1.00"},
    )
    assert response.status_code == 409
    page = text(response)
    assert "The refund changed since the page was shown" in page
    assert_unchanged(order)
    # The form now carries the new amount: sending it again ends the order.
    response = operator_client.post(
        end_url(order),
        {"reason": "Host down", "host_failed": "on", "expected_amount": amount_shown(page)},
    )
    assert response.status_code == 302
    assert Order.objects.get(pk=order.pk).status == OrderStatus.ENDED


def test_an_unknown_order_is_404(operator_client, db):
    assert (
        operator_client.get(reverse("payments:ops_order_end_early", args=[999999])).status_code
        == 404
    )
    response = operator_client.post(
        reverse("payments:ops_order_end_early", args=[999999]),
        {"reason": REASON, "expected_amount": "10.00"},
    )
    assert response.status_code == 404


def test_a_customer_gets_403_and_a_visitor_the_login_page(customer_client, waiting_order):
    paid_hours_ago(waiting_order, 25)
    data = {"reason": REASON, "expected_amount": str(waiting_order.total_usd)}
    assert customer_client.get(end_url(waiting_order)).status_code == 403
    assert customer_client.post(end_url(waiting_order), data).status_code == 403
    visitor = Client()
    response = visitor.post(end_url(waiting_order), data)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    assert_unchanged(waiting_order)
    # The customer's own order page has no such form either.
    page = text(customer_client.get(reverse("rental:order_detail", args=[waiting_order.pk])))
    assert 'data-action="end-early"' not in page


def test_a_post_without_the_csrf_token_is_refused(operator, waiting_order):
    paid_hours_ago(waiting_order, 25)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)
    response = browser.post(
        end_url(waiting_order), {"reason": REASON, "expected_amount": str(waiting_order.total_usd)}
    )
    assert response.status_code == 403
    assert_unchanged(waiting_order)


def test_an_order_that_can_never_be_ended_early_shows_no_section(
    operator_client, catalogue, customer, place_order
):
    order = place_order(customer, catalogue["h100"])
    assert 'data-section="end-early"' not in text(operator_client.get(ops_url(order)))


def test_the_page_of_its_own_shows_the_form(operator_client, waiting_order):
    paid_hours_ago(waiting_order, 25)
    page = text(operator_client.get(end_url(waiting_order)))
    assert 'data-action="end-early"' in page
    assert amount_shown(page) == waiting_order.total_usd


def test_a_provisioning_order_whose_ssh_never_answered_ends_with_its_whole_price(
    operator_client, operator, provisioning_order
):
    order_host_not_ready(
        order_id=provisioning_order.pk,
        detail="No SSH banner after 8 checks: connection refused",
    )
    page = text(operator_client.get(ops_url(provisioning_order)))
    assert "The host failed" in page
    assert "SSH did not answer: No SSH banner after 8 checks: connection refused" in page
    assert amount_shown(page) == provisioning_order.total_usd
    response = operator_client.post(
        end_url(provisioning_order),
        {
            "reason": "Hosts unreachable",
            "host_failed": "on",
            "expected_amount": str(provisioning_order.total_usd),
        },
    )
    assert response.status_code == 302
    refund = LedgerTransaction.objects.get(order=provisioning_order, kind=TransactionKind.REFUND)
    assert refund.entries.get(amount__gt=0).amount == provisioning_order.total_usd
    # The host failed: out of service; the cards come back only after a verified teardown.
    assert {host.state for host in Host.objects.filter(allocations__order=provisioning_order)} == {
        HostState.OUT_OF_SERVICE
    }
    assert CardAllocation.objects.filter(order=provisioning_order, released_at=None).count() == 2
    confirm_teardown(provisioning_order, operator)
    assert not CardAllocation.objects.filter(order=provisioning_order, released_at=None).exists()


def test_the_success_message_writes_the_amount_in_the_operators_language(
    operator_client, waiting_order, django_capture_on_commit_callbacks, settings
):
    paid_hours_ago(waiting_order, 25)
    operator_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    total = waiting_order.total_usd
    italian = f"{total:,.2f}".replace(",", "#").replace(".", ",").replace("#", ".")
    assert total >= 1000  # a thousands separator to show

    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(
            end_url(waiting_order), {"reason": REASON, "expected_amount": str(total)}, follow=True
        )

    messages = [str(message) for message in response.context["messages"]]
    assert any(f"168 ore ({italian} USD)" in message for message in messages), messages
    assert f"({total} USD)" not in text(response)
