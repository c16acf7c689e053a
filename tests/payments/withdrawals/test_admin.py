"""The admin shows withdrawals, their history and receipts as raw data and never changes them:
decisions go through the finance console (second factor, the one status setter)."""

from django.urls import reverse

from payments.models import Withdrawal, WithdrawalStatus
from tests.mfa_fixtures import enrol_totp


def test_the_admin_shows_a_withdrawal_but_cannot_change_it(
    client, make_customer, local_network, request_withdrawal
):
    withdrawal = request_withdrawal("20.00")
    admin = make_customer(is_staff=True, is_superuser=True)
    enrol_totp(admin)
    client.force_login(admin)

    listing = client.get(reverse("admin:payments_withdrawal_changelist"))
    assert listing.status_code == 200
    assert withdrawal.reference in listing.content.decode()
    url = reverse("admin:payments_withdrawal_change", args=[withdrawal.pk])
    page = client.get(url)
    assert page.status_code == 200 and 'name="status"' not in page.content.decode()

    assert client.post(url, {"status": "paid", "tx_hash": "0x" + "1" * 64}).status_code == 403
    delete = reverse("admin:payments_withdrawal_delete", args=[withdrawal.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REQUESTED and withdrawal.tx_hash == ""
    assert Withdrawal.objects.count() == 1
    assert client.get(reverse("admin:payments_receipt_changelist")).status_code == 200
    assert client.get(reverse("admin:rental_orderextension_changelist")).status_code == 200
