"""The payment page follows a transfer block by block on a real chain (anvil) and the real
watcher: waiting, then "seen in block B · confirmations n/N", then confirmed, its status
refreshing twice a block of the network (issue 23; seen failing: the status was polled every
5 s whatever the network, and on make run's chain, a block every 2 s and 3 confirmations, a
transfer is "seen" for one block: the page went from waiting to confirmed)."""

import pytest
from django.urls import reverse

from payments.models import ChainTransfer, PaymentStatus, TransferStatus


def status(customer_client, payment) -> str:
    url = reverse("payments:payment_status", kwargs={"payment_id": payment.pk})
    response = customer_client.get(url, headers={"HX-Request": "true"})
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_seen_and_confirmations_as_the_blocks_come(
    chain, order_payment, pay, scan, customer_client, settings
):
    settings.LOCAL_CHAIN_BLOCK_TIME_SECONDS = 2  # make run's anvil: --block-time 2
    settings.PAYMENT_SCAN_INTERVAL_SECONDS = 1  # make run's watcher
    payment = order_payment()
    html = status(customer_client, payment)
    assert "Waiting for the transfer" in html
    assert 'hx-trigger="every 1s"' in html

    pay(payment)
    block = chain.head()
    chain.mine(1)  # the watcher reads one block behind the head
    scan()
    transfer = ChainTransfer.objects.get(payment=payment)
    assert transfer.status == TransferStatus.SEEN  # recorded before its N confirmations
    html = status(customer_client, payment)
    assert "Transfer seen, confirming" in html
    assert f"201.600000 tUSDC seen in block {block} · confirmations 2/3" in html
    assert '<progress value="2" max="3"></progress>' in html
    assert 'hx-trigger="every 1s"' in html  # twice before the next block

    chain.mine(1)
    scan()
    payment.refresh_from_db()
    assert payment.status == PaymentStatus.CONFIRMED
    html = status(customer_client, payment)
    assert f"201.600000 tUSDC confirmed in block {block}." in html
    assert "hx-trigger" not in html  # nothing more to wait for


@pytest.mark.parametrize(
    ("block_time", "every"), [(0.25, 1), (1, 1), (2, 1), (4, 2), (5, 3), (12, 5)]
)
def test_the_status_refreshes_twice_a_block_between_1_and_5_seconds(
    chain, order_payment, customer_client, settings, block_time, every
):
    settings.LOCAL_CHAIN_BLOCK_TIME_SECONDS = block_time
    settings.PAYMENT_SCAN_INTERVAL_SECONDS = 1  # make run's watcher: the block time decides
    html = status(customer_client, order_payment())
    assert f'hx-trigger="every {every}s"' in html
