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

from payments.models import (
    CryptoPayment,
    PaymentEvent,
    PaymentStatus,
    ReviewReason,
    TransferReview,
    TransferStatus,
)
from payments.services.ledger import customer_account
from rental.models import OrderStatus
from rental.services import order_set_status

QUEUE = reverse("payments:ops_queue")
REASON = "Customer sent the rest by bank transfer, ticket 4711"


def ops_payment_url(payment):
    return reverse("payments:ops_payment", kwargs={"payment_id": payment.pk})


def action_url(payment, action):
    return reverse(
        "payments:ops_payment_action", kwargs={"payment_id": payment.pk, "action": action}
    )


def transfer_url(transfer, action=None):
    if action is None:
        return reverse("payments:ops_transfer", kwargs={"transfer_id": transfer.pk})
    return reverse(
        "payments:ops_transfer_action", kwargs={"transfer_id": transfer.pk, "action": action}
    )


@pytest.fixture
def in_review(payment, transfer):
    """The order's payment, underpaid at expiry: 800 of 893.76 tUSDC confirmed."""
    received = transfer(payment, units=800_000_000, block=50, status=TransferStatus.CONFIRMED)
    CryptoPayment.objects.filter(pk=payment.pk).update(
        status=PaymentStatus.NEEDS_REVIEW,
        review_reason=ReviewReason.UNDERPAID,
        received_units=800_000_000,
    )
    order_set_status(
        order_id=payment.order_id,
        to_status=OrderStatus.PAYMENT_REVIEW,
        actor=None,
        reason="underpaid at expiry",
    )
    payment.refresh_from_db()
    payment.received_transfer = received
    return payment


@pytest.fixture
def open_transfer(top_up, transfer, make_customer):
    """A transfer confirmed after its top-up was settled: left to an operator."""
    payment = top_up("20.00", who=make_customer(email="late@example.com"))
    CryptoPayment.objects.filter(pk=payment.pk).update(status=PaymentStatus.CONFIRMED)
    return transfer(
        payment,
        units=5_000_000,
        block=70,
        status=TransferStatus.CONFIRMED,
        review_state=TransferReview.OPEN,
    )


# ------------------------------------------------------------------------------ access


def test_operators_and_superusers_see_the_queue(operator_client, make_customer):
    assert operator_client.get(QUEUE).status_code == 200
    admin = Client()
    admin.force_login(make_customer(is_superuser=True, is_staff=True))
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


def test_the_queue_lists_payments_in_review_and_open_transfers(
    operator_client, in_review, open_transfer
):
    html = operator_client.get(QUEUE).content.decode()
    assert f'data-payment="{in_review.pk}"' in html
    assert 'data-field="review-reason">Underpaid<' in html
    assert in_review.customer.email in html
    assert f'data-transfer="{open_transfer.pk}"' in html
    assert open_transfer.tx_hash in html
    assert "5.000000 tUSDC" in html
    assert transfer_url(open_transfer) in html


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
        CryptoPayment.objects.filter(pk=payment.pk).update(
            status=PaymentStatus.CONFIRMED,
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
        CryptoPayment.objects.filter(pk=review.pk).update(
            status=PaymentStatus.NEEDS_REVIEW, review_reason=ReviewReason.OVERPAID
        )
        settled = top_up("11.00")
        CryptoPayment.objects.filter(pk=settled.pk).update(
            status=PaymentStatus.CONFIRMED, confirmed_at=timezone.now()
        )
        transfer(settled, status=TransferStatus.CONFIRMED, review_state=TransferReview.OPEN)

    add_rows()
    with CaptureQueriesContext(connection) as one:
        operator_client.get(QUEUE)
    for _ in range(4):
        add_rows()
    with CaptureQueriesContext(connection) as five:
        operator_client.get(QUEUE)
    # Session, user, groups (the guard and the navigation share it), one query per list.
    assert len(one) == len(five) == 7


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
    event = PaymentEvent.objects.get(payment=in_review, kind="marked_settled")
    assert (event.actor, event.reason) == (operator, REASON)

    html = operator_client.get(ops_payment_url(in_review)).content.decode()
    assert f"Payment {in_review.reference} is marked settled." in html
    assert "Marked settled" in html
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
    assert (event.actor, event.reason) == (operator, REASON)


def test_mark_invalid_cancels_the_order(operator_client, in_review):
    response = operator_client.post(action_url(in_review, "invalid"), {"reason": REASON})
    assert response.status_code == 302
    in_review.refresh_from_db()
    assert in_review.status == PaymentStatus.INVALID
    assert in_review.order.status == OrderStatus.CANCELLED


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


# -------------------------------------------------------------------- transfer actions


def test_the_transfer_page_shows_the_transfer_and_its_actions(operator_client, open_transfer):
    html = operator_client.get(transfer_url(open_transfer)).content.decode()
    assert open_transfer.tx_hash in html
    assert 'data-field="amount">5.000000 tUSDC' in html
    assert "late@example.com" in html
    assert f'action="{transfer_url(open_transfer, "credit")}"' in html
    assert f'action="{transfer_url(open_transfer, "invalid")}"' in html


def test_an_open_transfer_is_credited_to_the_customers_balance(
    operator_client, operator, open_transfer
):
    response = operator_client.post(transfer_url(open_transfer, "credit"), {"reason": REASON})
    assert response.status_code == 302
    open_transfer.refresh_from_db()
    assert open_transfer.review_state == TransferReview.CREDITED
    assert customer_account(open_transfer.payment.customer).balance == Decimal("5.00")
    event = PaymentEvent.objects.get(kind="transfer_credited")
    assert (event.actor, event.reason) == (operator, REASON)
    assert open_transfer.tx_hash not in operator_client.get(QUEUE).content.decode()


def test_an_open_transfer_is_marked_invalid(operator_client, open_transfer):
    response = operator_client.post(transfer_url(open_transfer, "invalid"), {"reason": REASON})
    assert response.status_code == 302
    open_transfer.refresh_from_db()
    assert open_transfer.review_state == TransferReview.INVALID
    assert customer_account(open_transfer.payment.customer).balance == 0


@pytest.mark.parametrize("action", ["credit", "invalid"])
def test_a_transfer_action_without_a_reason_changes_nothing(operator_client, open_transfer, action):
    response = operator_client.post(transfer_url(open_transfer, action), {"reason": ""})
    assert response.status_code == 400
    assert "Give the reason for this action" in response.content.decode()
    open_transfer.refresh_from_db()
    assert open_transfer.review_state == TransferReview.OPEN


def test_a_transfer_already_decided_is_refused(operator_client, open_transfer):
    operator_client.post(transfer_url(open_transfer, "invalid"), {"reason": REASON})
    response = operator_client.post(transfer_url(open_transfer, "credit"), {"reason": REASON})
    assert response.status_code == 400
    assert "This transfer is not waiting for an operator." in response.content.decode()
    open_transfer.refresh_from_db()
    assert open_transfer.review_state == TransferReview.INVALID
    assert customer_account(open_transfer.payment.customer).balance == 0


def test_a_customer_cannot_act_on_a_transfer(customer_client, open_transfer):
    response = customer_client.post(transfer_url(open_transfer, "credit"), {"reason": REASON})
    assert response.status_code == 403
    open_transfer.refresh_from_db()
    assert open_transfer.review_state == TransferReview.OPEN


def test_the_group_name_is_operators(make_customer):
    user = make_customer()
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    browser = Client()
    browser.force_login(user)
    assert browser.get(QUEUE).status_code == 403
