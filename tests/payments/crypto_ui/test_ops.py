"""The operators' queue: access, what it lists, and the review actions with their reason."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from payments.chain.confirming import transfers_reversed
from payments.ledger.services.posting import customer_account, system_account
from payments.models import (
    CryptoPayment,
    PaymentEvent,
    PaymentStatus,
    ReviewReason,
    TransferStatus,
)
from rental.models import OrderStatus
from tests.mfa_fixtures import enrol_totp
from tests.states import payment_walk

QUEUE = reverse("payments:ops_queue")
REASON = "Customer sent the rest by bank transfer, ticket 4711"


def ops_payment_url(payment):
    return reverse("payments:ops_payment", kwargs={"payment_id": payment.pk})


def action_url(payment, action):
    return reverse(
        "payments:ops_payment_action", kwargs={"payment_id": payment.pk, "action": action}
    )


@pytest.fixture
def reversed_payment(top_up, transfer, make_customer):
    """A top-up confirmed and credited, whose transfer the chain then dropped."""
    payment = top_up("20.00", who=make_customer(email="late@example.com"))
    row = transfer(payment, status=TransferStatus.CONFIRMED)
    transfers_reversed(transfer_ids=[row.pk])
    payment.refresh_from_db()
    payment.reversed_transfer = row
    return payment


# ------------------------------------------------------------------------------ access


def test_operators_and_superusers_see_the_queue(operator_client, make_customer):
    assert operator_client.get(QUEUE).status_code == 200
    admin = Client()
    superuser = make_customer(is_superuser=True, is_staff=True)
    enrol_totp(superuser)
    admin.force_login(superuser)
    assert admin.get(QUEUE).status_code == 200


def test_customers_are_refused(customer_client, in_review):
    assert customer_client.get(QUEUE).status_code == 403
    assert customer_client.get(ops_payment_url(in_review)).status_code == 403


def test_finance_is_not_operations(finance_user):
    browser = Client()
    browser.force_login(finance_user)
    assert browser.get(QUEUE).status_code == 403


def test_anonymous_visitors_go_to_the_login_page_and_come_back():
    response = Client().get(QUEUE)
    assert response.status_code == 302
    assert response["Location"] == reverse("account_login") + "?next=" + QUEUE


def test_a_customer_cannot_act_on_a_payment(customer_client, in_review):
    response = customer_client.post(action_url(in_review, "credit"), {"reason": REASON})
    assert response.status_code == 403
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.NEEDS_REVIEW


def test_the_navigation_shows_operations_to_operators_only(operator_client, customer_client):
    link = f'href="{QUEUE}"'
    assert link in operator_client.get(reverse("rental:catalogue")).content.decode()
    assert link not in customer_client.get(reverse("rental:catalogue")).content.decode()


# ------------------------------------------------------------------------------- queue


def test_the_queue_lists_payments_in_review_and_reversed_transfers(
    operator_client, in_review, reversed_payment
):
    html = operator_client.get(QUEUE).content.decode()
    assert f'data-payment="{in_review.pk}"' in html
    assert 'data-field="review-reason">Underpaid<' in html
    assert in_review.customer.email in html
    assert f'data-transfer="{reversed_payment.reversed_transfer.pk}"' in html
    assert reversed_payment.reversed_transfer.tx_hash in html
    assert "20.000000 tUSDC" in html
    assert ops_payment_url(reversed_payment) in html


def test_the_queue_lists_stale_declarations_only(operator_client, payment, top_up, settings):
    settings.PAYMENT_DECLARED_STALE_MINUTES = 60
    fresh = top_up("30.00")
    old = timezone.now() - timedelta(minutes=61)
    CryptoPayment.objects.filter(pk=payment.pk).update(declared_at=old)
    CryptoPayment.objects.filter(pk=fresh.pk).update(declared_at=timezone.now())
    html = operator_client.get(QUEUE).content.decode()
    stale = html.split('data-section="declared-stale"')[1].split("</section>")[0]
    assert payment.reference in stale
    assert fresh.reference not in stale
    assert "nothing seen after 60 minutes" in html


def test_the_queue_lists_the_newest_confirmed_payments(operator_client, top_up):
    payments = [top_up("10.00") for _ in range(21)]
    for number, payment in enumerate(payments):
        payment_walk(
            payment,
            PaymentStatus.CONFIRMED,
            confirmed_at=timezone.now() - timedelta(minutes=100 - number),
        )
    html = operator_client.get(QUEUE).content.decode()
    confirmed = html.split('data-section="recently-confirmed"')[1]
    assert payments[-1].reference in confirmed
    assert payments[1].reference in confirmed
    assert payments[0].reference not in confirmed  # the 21st newest


def test_the_queue_runs_a_fixed_number_of_queries(operator_client, top_up, transfer):
    def add_rows():
        review = top_up("10.00")
        payment_walk(review, PaymentStatus.NEEDS_REVIEW, review_reason=ReviewReason.OVERPAID)
        settled = top_up("11.00")
        payment_walk(settled, PaymentStatus.CONFIRMED, confirmed_at=timezone.now())
        transfer(settled, status=TransferStatus.REVERSED)

    add_rows()
    with CaptureQueriesContext(connection) as one:
        operator_client.get(QUEUE)
    for _ in range(4):
        add_rows()
    with CaptureQueriesContext(connection) as five:
        operator_client.get(QUEUE)
    # The session comes from the cache (Redis): user with groups (the guard and the navigation
    # share it), one query per list, the health banner (failing tasks and networks, one query).
    assert len(one) == len(five) == 6


# --------------------------------------------------------------------- payment detail


def test_the_payment_page_shows_everything(operator_client, in_review):
    html = operator_client.get(ops_payment_url(in_review)).content.decode()
    assert in_review.customer.email in html
    assert in_review.order.reference in html
    assert 'data-field="amount-due">893.760000 tUSDC · 893.76 USD' in html
    assert 'data-field="received">800.000000 tUSDC' in html
    assert in_review.received_transfer.tx_hash in html
    assert "<td>50<br>" in html  # the block
    assert 'data-event="created"' in html
    for action in ("settle", "credit", "invalid"):
        assert f'action="{action_url(in_review, action)}"' in html


def test_an_unknown_payment_is_not_found(operator_client):
    assert operator_client.get(reverse("payments:ops_payment", args=[999999])).status_code == 404


def test_a_payment_not_in_review_offers_no_action(operator_client, payment):
    html = operator_client.get(ops_payment_url(payment)).content.decode()
    assert "Actions apply to a payment under review only." in html
    assert action_url(payment, "settle") not in html


# ---------------------------------------------------------------------- payment actions


def test_mark_settled_pays_the_order_and_records_who_and_why(
    operator_client, operator, in_review, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(in_review, "settle"), {"reason": REASON})
    assert response.status_code == 302
    assert response["Location"] == ops_payment_url(in_review)
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.RESOLVED
    assert in_review.order.status == OrderStatus.PROVISIONING  # paid, cards allocated
    event = PaymentEvent.objects.get(payment=in_review, kind="status", to_status="resolved")
    assert event.actor == operator and REASON in event.reason
    # What arrived (800.00) is the revenue; nothing is left unallocated.
    assert system_account("revenue").balance == Decimal("800.00")
    assert in_review.unallocated_usd == 0

    html = operator_client.get(ops_payment_url(in_review)).content.decode()
    assert f"Payment {in_review.reference} is marked settled." in html
    assert "Resolved" in html
    assert REASON in html
    assert operator.email in html


def test_credit_moves_what_was_received_to_the_balance(operator_client, operator, in_review):
    response = operator_client.post(action_url(in_review, "credit"), {"reason": REASON})
    assert response.status_code == 302
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.RESOLVED
    assert in_review.order.status == OrderStatus.AWAITING_PAYMENT
    assert customer_account(in_review.customer).balance == Decimal("800.00")
    event = PaymentEvent.objects.get(payment=in_review, kind="credited_to_balance")
    assert event.actor == operator and REASON in event.reason


def test_mark_invalid_cancels_the_order(operator_client, in_review):
    response = operator_client.post(action_url(in_review, "invalid"), {"reason": REASON})
    assert response.status_code == 302
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.INVALID
    assert in_review.order.status == OrderStatus.CANCELLED
    # The money was sent back outside the site: booked as refunded, nothing left unallocated.
    assert system_account("refunds").balance == Decimal("800.00")
    assert system_account("unallocated").balance == 0


@pytest.mark.parametrize("action", ["settle", "credit", "invalid"])
@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("", "Give the reason for this action: it is kept in the payment&#x27;s history."),
        ("   ", "Give the reason for this action: it is kept in the payment&#x27;s history."),
        ("x" * 501, "Keep the reason to 500 characters (it has 501)."),
    ],
)
def test_an_action_without_a_valid_reason_changes_nothing(
    operator_client, in_review, action, reason, message
):
    events = PaymentEvent.objects.count()
    response = operator_client.post(action_url(in_review, action), {"reason": reason})
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert f'id="id_{action}_reason"' in html
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.NEEDS_REVIEW
    assert in_review.order.status == OrderStatus.PAYMENT_REVIEW
    assert PaymentEvent.objects.count() == events
    assert customer_account(in_review.customer).balance == 0
    assert system_account("unallocated").balance == Decimal("800.00")


def test_a_refused_action_is_shown_on_its_form(operator_client, payment):
    response = operator_client.post(action_url(payment, "settle"), {"reason": REASON})
    assert response.status_code == 400
    assert "Only a payment under review can be resolved this way." in response.content.decode()
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.AWAITING


def test_an_unknown_action_or_payment_is_not_found(operator_client, in_review):
    assert (
        operator_client.post(action_url(in_review, "refund"), {"reason": REASON}).status_code == 404
    )
    missing = reverse("payments:ops_payment_action", args=[999999, "settle"])
    assert operator_client.post(missing, {"reason": REASON}).status_code == 404


def test_actions_need_a_post(operator_client, in_review):
    assert operator_client.get(action_url(in_review, "settle")).status_code == 405


# ------------------------------------------------------------------ reversed transfers


def test_a_reversed_payment_offers_the_write_off_only(operator_client, reversed_payment):
    assert (reversed_payment.status, reversed_payment.review_reason) == (
        PaymentStatus.NEEDS_REVIEW,
        ReviewReason.REVERSED,
    )
    html = operator_client.get(ops_payment_url(reversed_payment)).content.decode()
    assert f'action="{action_url(reversed_payment, "write-off")}"' in html
    assert action_url(reversed_payment, "settle") not in html


def test_writing_off_a_reversal_makes_the_ledger_match_the_chain(
    operator_client, operator, reversed_payment
):
    receipts = system_account("crypto_receipts", asset="tUSDC", network="local")
    assert receipts.balance == Decimal("-20.00")  # the ledger still has what the chain lost
    response = operator_client.post(action_url(reversed_payment, "write-off"), {"reason": REASON})
    assert response.status_code == 302
    reversed_payment.refresh_from_db()
    assert reversed_payment.status == PaymentStatus.RESOLVED
    receipts.refresh_from_db()
    assert receipts.balance == Decimal("0.00")
    assert system_account("adjustments").balance == Decimal("-20.00")
    # The customer keeps what was credited; the loss is the business's, on record.
    assert customer_account(reversed_payment.customer).balance == Decimal("20.00")
    assert html_has_no_reversed(operator_client, reversed_payment)


def html_has_no_reversed(client, payment) -> bool:
    return payment.reversed_transfer.tx_hash not in client.get(QUEUE).content.decode()


def test_the_write_off_is_refused_on_a_payment_that_was_not_reversed(operator_client, in_review):
    response = operator_client.post(action_url(in_review, "write-off"), {"reason": REASON})
    assert response.status_code == 400
    assert "No transfer of this payment was reversed" in response.content.decode()
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.NEEDS_REVIEW


def test_the_group_name_is_operators(make_customer):
    user = make_customer()
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    browser = Client()
    browser.force_login(user)
    assert browser.get(QUEUE).status_code == 403


def test_a_reversal_of_money_never_allocated_leaves_the_receipts_awaiting_allocation(
    operator_client, in_review
):
    """Underpaid and under review, then the chain drops the transfer: the write-off takes the
    money out of the receipts awaiting allocation (it never existed), not out of adjustments."""
    transfers_reversed(transfer_ids=[in_review.received_transfer.pk])
    in_review.refresh_from_db()
    assert in_review.review_reason == ReviewReason.REVERSED

    response = operator_client.post(action_url(in_review, "write-off"), {"reason": REASON})

    assert response.status_code == 302
    in_review.refresh_from_db()
    assert (in_review.status, in_review.unallocated_usd) == (PaymentStatus.RESOLVED, 0)
    assert system_account("unallocated").balance == Decimal("0.00")
    assert system_account("adjustments").balance == Decimal("0.00")
    receipts = system_account("crypto_receipts", asset="tUSDC", network="local")
    assert receipts.balance == Decimal("0.00")
    assert in_review.order.status == OrderStatus.AWAITING_PAYMENT  # payable again


def test_money_arriving_after_a_write_off_is_posted_again(
    operator_client, reversed_payment, transfer
):
    """Found by the stateful test: the units after a write-off equal those before it, and the
    receipt's key repeated — the new money was counted on the payment but never posted."""
    operator_client.post(action_url(reversed_payment, "write-off"), {"reason": REASON})
    transfer(reversed_payment, status=TransferStatus.CONFIRMED)  # the same 20.00 again

    receipts = system_account("crypto_receipts", asset="tUSDC", network="local")
    assert receipts.balance == Decimal("-20.00")  # the chain holds 20.00 for it: so does the ledger
    reversed_payment.refresh_from_db()
    assert reversed_payment.receipted_usd == Decimal("20.00")
    assert customer_account(reversed_payment.customer).balance == Decimal("40.00")
    assert system_account("unallocated").balance == Decimal("0.00")
