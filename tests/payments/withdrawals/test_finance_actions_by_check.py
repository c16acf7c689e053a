"""Finance's page of a sent withdrawal says what its last check means and offers only the
actions that can work: a short transfer never pays (take the hash back and send the whole
amount anew; no rejection, money has left), a transfer on its way can be neither rejected nor
taken back, a transaction that paid someone else can be both."""

from html import unescape

from django.urls import reverse

from . import test_chain_check
from .conftest import OTHER_WALLET
from .test_chain_check import check

sent = test_chain_check.sent  # the fixture: an approved withdrawal and its transfer sent


def page(finance_client, withdrawal) -> str:
    url = reverse("payments:finance_withdrawal", kwargs={"withdrawal_id": withdrawal.pk})
    return finance_client.get(url).content.decode()


def guidance(html: str) -> str:
    return unescape(html.split('data-field="sent-guidance">')[1].split("</p>")[0])


def test_a_short_transfer_says_it_never_pays_and_offers_only_the_take_back(
    chain, sent, finance_client
):
    withdrawal = sent(units=1_000_000)
    chain.mine(5)
    assert check(withdrawal) == "short_amount"

    html = page(finance_client, withdrawal)

    assert "amount 1.00 is less than 15.00" in html
    said = guidance(html)
    assert "sent less than the amount: it will never pay the withdrawal" in said
    assert "send the whole amount in one new transaction and enter its hash" in said
    assert "the short transfer already reached the customer (settle it with them)" in said
    assert "until it pays the withdrawal" not in html
    assert 'data-action="take-back"' in html and "Take the hash back (it sent too little)" in html
    assert 'data-action="reject"' not in html and "only if no money left" not in html


def test_a_transfer_on_its_way_offers_neither_rejection_nor_take_back(chain, sent, finance_client):
    withdrawal = sent()
    assert check(withdrawal) == "confirming"

    html = page(finance_client, withdrawal)

    assert "1 of 3 confirmations" in html
    assert "on its way to the customer's address" in guidance(html)
    assert 'data-action="check"' in html
    assert 'data-action="reject"' not in html and 'data-action="take-back"' not in html


def test_a_transaction_to_another_address_may_be_taken_back_or_rejected(
    chain, sent, finance_client
):
    withdrawal = sent(to=OTHER_WALLET)
    chain.mine(5)
    assert check(withdrawal) == "other_address"

    html = page(finance_client, withdrawal)

    assert "until it pays the withdrawal" in guidance(html)
    assert 'data-action="take-back"' in html and "Take the hash back (it was wrong)" in html
    assert 'data-action="reject"' in html and "only if no money left" in html


def test_a_paid_withdrawal_offers_nothing(chain, sent, finance_client):
    withdrawal = sent()
    chain.mine(2)
    assert check(withdrawal) == "paid"

    html = page(finance_client, withdrawal)

    assert "paid with 3 confirmations (3 required)" in html
    assert "This withdrawal is final." in html
    for name in ("reject", "take-back", "check", "hash", "approve"):
        assert f'data-action="{name}"' not in html
