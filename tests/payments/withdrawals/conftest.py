"""Withdrawals: a funded customer, an address of their own wallet, and the steps finance takes.

Without a chain the local network is enabled by settings alone (`local_network`: its RPC URL
points nowhere); the on-chain checks use the test anvil (`chain`) and its stablecoin.
"""

from decimal import Decimal
from uuid import uuid4

import pytest

from payments.ledger.services.posting import customer_account, system_account
from payments.models import LedgerAccountKind, Withdrawal
from payments.withdrawals.services import withdrawal_approve, withdrawal_request
from tests.payments.crypto_ui.conftest import local_network, top_up  # noqa: F401

# anvil account 2: a wallet of the customer's own (never one of our deposit addresses)
CUSTOMER_WALLET = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
OTHER_WALLET = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"  # anvil account 3


@pytest.fixture
def funded(customer, credit):
    """The customer with 100.00 USD on their balance."""
    credit(customer, "100.00")
    return customer


@pytest.fixture
def request_withdrawal(funded):
    def ask(amount="25.00", *, who=None, to=CUSTOMER_WALLET, key=None, network="local"):
        return withdrawal_request(
            customer=who or funded,
            amount_usd=Decimal(amount),
            network=network,
            asset="tUSDC",
            to_address=to,
            request_key=key or str(uuid4()),
        )

    return ask


@pytest.fixture
def approved(request_withdrawal, finance_user):
    def make(amount="25.00", **kwargs) -> Withdrawal:
        withdrawal = request_withdrawal(amount, **kwargs)
        return withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)

    return make


def balance_of(customer) -> Decimal:
    return customer_account(customer).balance


def pending_total() -> Decimal:
    return system_account(LedgerAccountKind.WITHDRAWALS_PENDING).balance


def paid_total(asset="tUSDC", network="local") -> Decimal:
    return system_account(LedgerAccountKind.WITHDRAWALS_PAID, asset=asset, network=network).balance
