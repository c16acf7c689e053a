"""An operator may accept less than the total on an underpaid payment: ending that order early
never refunds more than the revenue the ledger booked for it."""

from decimal import Decimal

from django.urls import reverse

from payments.crypto.services.review import payment_mark_settled
from payments.ledger.services.posting import customer_account, system_account
from payments.ledger.services.refunds import order_end_early_with_refund
from payments.models import LedgerTransaction, TransactionKind
from rental.models import OrderStatus


def test_an_order_settled_for_less_is_refunded_at_most_what_was_booked(
    in_review, operator, operator_client
):
    payment_mark_settled(payment_id=in_review.pk, actor=operator, reason="Customer asked, OK")
    order = in_review.order
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    assert order.total_usd == Decimal("893.76")
    assert system_account("revenue").balance == Decimal("800.00")
    before = customer_account(order.customer).balance

    # The operators' page offers the capped amount, and the service posts that one.
    html = operator_client.get(
        reverse("rental:ops_order", kwargs={"order_id": order.pk})
    ).content.decode()
    assert 'value="800.00"' in html
    outcome = order_end_early_with_refund(
        order_id=order.pk,
        actor=operator,
        reason="The host failed",
        host_failed=True,
        expected_amount=Decimal("800.00"),
    )

    assert outcome.amount == Decimal("800.00")
    assert customer_account(order.customer).balance == before + Decimal("800.00")
    assert system_account("revenue").balance == Decimal("0.00")
    (refund,) = LedgerTransaction.objects.filter(order=order, kind=TransactionKind.REFUND)
    assert refund.entries.get(amount__gt=0).amount == Decimal("800.00")


def test_the_end_early_page_offers_and_posts_the_capped_amount(
    in_review, operator, operator_client
):
    """The form's own page (where the ops page's form posts, and where a refused form comes
    back) shows the same capped amount: the operator's first confirmation is accepted."""
    payment_mark_settled(payment_id=in_review.pk, actor=operator, reason="Customer asked, OK")
    order = in_review.order
    url = reverse("payments:ops_order_end_early", kwargs={"order_id": order.pk})
    page = operator_client.get(url).content.decode()
    assert 'value="800.00"' in page and 'value="893.76"' not in page

    response = operator_client.post(
        url, {"reason": "The host failed", "host_failed": "on", "expected_amount": "800.00"}
    )

    assert response.status_code == 302, response.content.decode()
    (refund,) = LedgerTransaction.objects.filter(order=order, kind=TransactionKind.REFUND)
    assert refund.entries.get(amount__gt=0).amount == Decimal("800.00")
