"""The withdrawal pages a customer opens load no chain library in a web worker (web3 and
eth-utils are the worker's; only a submitted address is checked with eth-utils)."""

import pytest
from django.urls import reverse

from tests.test_web_import_footprint import CHAIN_LIBRARIES, run_fresh_worker

from .conftest import CUSTOMER_WALLET


@pytest.mark.django_db(transaction=True)
def test_the_withdrawal_pages_load_no_chain_library(settings, dead_rpc_url, request_withdrawal):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    settings.LOCAL_TOKEN_ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    withdrawal = request_withdrawal("20.00", to=CUSTOMER_WALLET)
    pages = [
        (reverse("payments:statement"), {}),
        (reverse("payments:withdraw"), {}),
        (reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk}), {}),
        (
            reverse("payments:withdrawal_status", kwargs={"withdrawal_id": withdrawal.pk}),
            {"HX-Request": "true"},
        ),
    ]

    report = run_fresh_worker(
        {
            "customer": withdrawal.customer_id,
            "rpc_url": dead_rpc_url,
            "token": settings.LOCAL_TOKEN_ADDRESS,
            "libraries": CHAIN_LIBRARIES,
            "pages": pages,
        }
    )

    report.pop("after import")
    assert {path: answer["status"] for path, answer in report.items()} == {
        path: 200 for path, _ in pages
    }
    assert {path: answer["loaded"] for path, answer in report.items()} == {
        path: [] for path, _ in pages
    }
