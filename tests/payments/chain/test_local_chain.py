"""The local chain tooling: the test fixtures on a real anvil, local_chain_setup and pay_local."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from web3 import HTTPProvider, Web3
from web3.exceptions import TransactionNotFound

from payments.chain import local
from payments.chain.networks import TRANSFER_TOPIC, get_network
from tests.chain_fixtures import CHAIN_ID, ChainRpcError

SOMEONE = "0x000000000000000000000000000000000000dEaD"


def fresh_address(n: int) -> str:
    return Web3.to_checksum_address(f"0x{n:040x}")


def transfer_logs(chain, block: int) -> list[dict]:
    logs = chain.w3.eth.get_logs(
        {
            "fromBlock": block,
            "toBlock": block,
            "address": chain.token_address,
            "topics": [TRANSFER_TOPIC],
        }
    )
    return [
        {
            "tx_hash": log["transactionHash"].to_0x_hex(),
            "from": Web3.to_checksum_address(log["topics"][1][-20:]),
            "to": Web3.to_checksum_address(log["topics"][2][-20:]),
            "units": int.from_bytes(log["data"], "big"),
        }
        for log in logs
    ]


# The fixtures -------------------------------------------------------------------------------


def test_the_session_chain_has_the_test_stablecoin(chain):
    assert chain.chain_id == CHAIN_ID == chain.w3.eth.chain_id
    assert chain.rpc_url.startswith("http://127.0.0.1:")
    assert local.has_code(chain.w3, chain.token_address)
    assert chain.token.functions.symbol().call() == "tUSDC"
    assert chain.token.functions.decimals().call() == 6
    assert chain.token_address == Web3.to_checksum_address(chain.token_address)


def test_the_chain_fixture_points_the_site_at_the_chain(chain, settings):
    assert settings.PAYMENT_RPC_URLS["local"] == chain.rpc_url
    assert chain.token_address == settings.LOCAL_TOKEN_ADDRESS
    network = get_network("local")
    assert network.enabled
    assert network.chain_id == chain.chain_id
    assert network.asset("tUSDC").token_address == chain.token_address


def test_mint_and_transfer_move_balances_and_emit_transfer_logs(chain):
    receiver = fresh_address(0xA11CE)
    sender_before = chain.balance_of(chain.payer)

    tx_hash = chain.transfer(receiver, 1_250_000)

    assert chain.balance_of(receiver) == 1_250_000
    assert chain.balance_of(chain.payer) == sender_before - 1_250_000
    receipt = chain.receipt(tx_hash)
    assert receipt["status"] == 1
    assert receipt["blockNumber"] == chain.head()  # automine: one block per transaction
    assert transfer_logs(chain, receipt["blockNumber"]) == [
        {"tx_hash": tx_hash, "from": chain.payer, "to": receiver, "units": 1_250_000}
    ]

    mint_hash = chain.mint(receiver, 7)
    assert chain.balance_of(receiver) == 1_250_007
    zero = "0x0000000000000000000000000000000000000000"
    assert transfer_logs(chain, chain.head()) == [
        {"tx_hash": mint_hash, "from": zero, "to": receiver, "units": 7}
    ]


def test_a_transfer_mints_what_the_sender_lacks(chain):
    broke_key = "0x" + "11" * 32  # not an anvil account: give it gas money first
    broke = local.address_of(broke_key)
    chain.rpc("anvil_setBalance", [broke, hex(10**18)])
    chain.transfer(SOMEONE, 30, from_key=broke_key)
    assert chain.balance_of(broke) == 0


def test_a_failed_transaction_raises(chain):
    broke_key = "0x" + "22" * 32
    chain.rpc("anvil_setBalance", [local.address_of(broke_key), hex(10**18)])
    with pytest.raises(Exception, match="balance"):
        local.transfer(chain.w3, chain.token_address, broke_key, SOMEONE, 1)


def test_mine_advances_the_head(chain):
    head = chain.head()
    assert chain.mine() == head + 1
    assert chain.mine(5) == head + 6 == chain.head()
    assert chain.block_timestamp(head + 6) >= chain.block_timestamp(head)
    assert chain.block_hash(head + 6).startswith("0x")
    assert len(chain.block_hash(head + 6)) == 66


def test_block_time_can_be_set_and_moved(chain):
    now = chain.block_timestamp(chain.head())
    chain.set_next_block_timestamp(now + 1000)
    chain.mine()
    assert chain.block_timestamp(chain.head()) == now + 1000
    chain.increase_time(3600)
    chain.mine()
    assert chain.block_timestamp(chain.head()) >= now + 1000 + 3600


def test_snapshot_and_revert_restore_the_head_and_the_balances(chain):
    receiver = fresh_address(0xB0B)
    head = chain.head()
    head_hash = chain.block_hash(head)
    snapshot = chain.snapshot()

    chain.transfer(receiver, 500)
    chain.mine(3)
    assert chain.balance_of(receiver) == 500
    assert chain.head() == head + 4

    chain.revert(snapshot)
    assert chain.head() == head
    assert chain.block_hash(head) == head_hash
    assert chain.balance_of(receiver) == 0
    with pytest.raises(ChainRpcError):
        chain.revert(snapshot)  # evm_revert consumes the snapshot


def test_revert_also_undoes_moved_time(chain):
    start = chain.block_timestamp(chain.head())
    snapshot = chain.snapshot()
    chain.increase_time(10 * 86400)
    chain.mine()
    chain.revert(snapshot)
    chain.mine()
    assert chain.block_timestamp(chain.head()) < start + 86400


def test_a_reorg_replaces_the_last_blocks(chain):
    receiver = fresh_address(0xC0FFEE)
    tx_hash = chain.transfer(receiver, 900)
    transfer_block = chain.head()
    chain.mine()
    head = chain.head()
    old_hashes = {n: chain.block_hash(n) for n in range(head - 2, head + 1)}

    chain.reorg(depth=2)

    assert chain.head() == head  # as many new blocks as were dropped
    assert chain.block_hash(head - 2) == old_hashes[head - 2]  # below the reorg: untouched
    assert chain.block_hash(head - 1) != old_hashes[head - 1]
    assert chain.block_hash(head) != old_hashes[head]
    assert transfer_block == head - 1
    with pytest.raises(TransactionNotFound):
        chain.w3.eth.get_transaction_receipt(tx_hash)  # the transfer is gone
    assert chain.balance_of(receiver) == 0
    assert transfer_logs(chain, transfer_block) == []


def test_a_reorg_can_include_transactions_in_the_new_blocks(chain):
    receiver = fresh_address(0xD00D)
    chain.mine(3)
    head = chain.head()
    old_hash = chain.block_hash(head)

    # Offset 0 is the first replaced block (head - depth + 1); offset 2 is the head here.
    chain.reorg(3, [(chain.transfer_request(receiver, 42), 2)])

    assert chain.head() == head
    assert chain.block_hash(head) != old_hash
    logs = transfer_logs(chain, head)
    assert [(log["from"], log["to"], log["units"]) for log in logs] == [(chain.payer, receiver, 42)]
    assert chain.balance_of(receiver) == 42


def test_a_reorg_can_include_a_raw_signed_transaction(chain):
    receiver = fresh_address(0xFEED)
    chain.mine(2)
    head = chain.head()
    payer = chain.w3.eth.account.from_key(local.PAYER_KEY)
    tx = chain.token.functions.transfer(receiver, 9).build_transaction(
        {
            "from": payer.address,
            # The nonce as of the block below the reorg: the new branch is built on it.
            "nonce": chain.w3.eth.get_transaction_count(payer.address, head - 2),
            "gas": 100_000,
            "maxFeePerGas": 10**10,
            "maxPriorityFeePerGas": 10**9,
        }
    )
    raw = payer.sign_transaction(tx).raw_transaction

    chain.reorg(2, [(raw, 0)])

    assert [log["units"] for log in transfer_logs(chain, head - 1)] == [9]
    assert chain.balance_of(receiver) == 9


def test_a_reorg_deeper_than_the_chain_is_refused(chain):
    with pytest.raises(ChainRpcError, match="depth"):
        chain.reorg(chain.head() + 10)


def test_the_dead_rpc_url_answers_nothing(dead_rpc_url):
    assert dead_rpc_url.startswith("http://127.0.0.1:")
    assert not Web3(HTTPProvider(dead_rpc_url, request_kwargs={"timeout": 2})).is_connected()


# local_chain_setup ------------------------------------------------------------------------


@pytest.fixture
def chain_file(chain, settings, tmp_path):
    settings.LOCAL_CHAIN_FILE = tmp_path / "var" / "local-chain.json"
    return settings.LOCAL_CHAIN_FILE


def setup(*args) -> str:
    out = StringIO()
    call_command("local_chain_setup", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_local_chain_setup_deploys_once_then_reuses_the_token(chain, chain_file):
    first = setup()
    data = json.loads(chain_file.read_text())
    assert "Deployed the test stablecoin" in first
    assert data["chain_id"] == CHAIN_ID
    assert data["rpc_url"] == chain.rpc_url
    assert data["deployed_at_block"] == chain.head()
    token = data["token_address"]
    assert token == Web3.to_checksum_address(token)
    assert token != chain.token_address  # a token of its own
    assert local.has_code(chain.w3, token)
    assert f"Token address: {token}" in first
    assert f"Chain id: {CHAIN_ID}" in first
    assert local.read_local_chain_file() == data

    head = chain.head()
    second = setup()
    assert "Reusing" in second
    assert f"Token address: {token}" in second
    assert chain.head() == head  # nothing deployed
    assert json.loads(chain_file.read_text()) == data


def test_local_chain_setup_deploys_again_when_the_recorded_token_is_gone(chain, chain_file):
    local.write_local_chain_file(
        {"rpc_url": chain.rpc_url, "chain_id": CHAIN_ID, "token_address": SOMEONE}
    )
    out = setup()
    assert "No contract at the recorded address" in out
    token = json.loads(chain_file.read_text())["token_address"]
    assert token != SOMEONE
    assert local.has_code(chain.w3, token)


def test_local_chain_setup_deploys_again_on_another_chain_id(chain, chain_file):
    local.write_local_chain_file(
        {"rpc_url": chain.rpc_url, "chain_id": 1, "token_address": chain.token_address}
    )
    out = setup()
    assert "on chain 1, not 31337" in out
    assert json.loads(chain_file.read_text())["token_address"] != chain.token_address


def test_local_chain_setup_needs_the_rpc_url(settings):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": None}
    with pytest.raises(CommandError, match="RPC_URL_LOCAL is not set"):
        setup()


def test_local_chain_setup_gives_up_on_a_dead_rpc(settings, dead_rpc_url, tmp_path):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    settings.LOCAL_CHAIN_FILE = tmp_path / "local-chain.json"
    with pytest.raises(CommandError, match="did not answer within 1 s"):
        setup("--wait", "1")
    assert not settings.LOCAL_CHAIN_FILE.exists()


# pay_local ----------------------------------------------------------------------------------


@pytest.fixture
def top_up(chain, customer):
    from payments.crypto.services.payments import payment_create_top_up

    return payment_create_top_up(
        customer=customer, amount_usd=Decimal("25.00"), network_key="local", asset_symbol="tUSDC"
    )


def pay(*args) -> str:
    out = StringIO()
    call_command("pay_local", *[str(arg) for arg in args], stdout=out, stderr=StringIO())
    return out.getvalue()


def test_pay_local_sends_the_amount_due_to_the_deposit_address(chain, top_up):
    address = top_up.deposit_address.address
    out = pay(top_up.pk)
    assert chain.balance_of(address) == 25_000_000
    tx_hash = out.split("Transaction: ")[1].split()[0]
    receipt = chain.receipt(tx_hash)
    assert f"Block: {receipt['blockNumber']}" in out
    assert f"after {top_up.confirmations_required} blocks" in out
    assert transfer_logs(chain, receipt["blockNumber"])[-1]["to"] == address


def test_pay_local_sends_what_is_left_or_what_is_asked(chain, top_up):
    address = top_up.deposit_address.address
    top_up.received_units = 20_000_000
    top_up.save(update_fields=["received_units"])
    pay(top_up.pk)
    assert chain.balance_of(address) == 5_000_000
    pay(top_up.pk, "--units", 7)
    assert chain.balance_of(address) == 5_000_007
    pay(top_up.pk, "--usd", "1.5")
    assert chain.balance_of(address) == 6_500_007


def test_pay_local_from_another_key_funds_it(chain, top_up):
    key = "0x" + "33" * 32  # no ether, no tokens: pay_local gives it both
    pay(top_up.pk, "--units", 10, "--from-key", key)
    assert chain.balance_of(top_up.deposit_address.address) == 10
    assert chain.balance_of(local.address_of(key)) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--units", "0"], "must be positive"),
        (["--units", "1.5"], "whole number"),
        (["--usd", "0.0000001"], "at most 6 decimal places"),
        (["--usd", "lots"], "an amount like"),
        (["--from-key", "0x1234"], "not a valid private key"),
    ],
)
def test_pay_local_refuses_bad_input(chain, top_up, args, message):
    with pytest.raises(CommandError, match=message):
        pay(top_up.pk, *args)
    assert chain.balance_of(top_up.deposit_address.address) == 0


def test_pay_local_refuses_what_it_cannot_pay(chain, top_up):
    with pytest.raises(CommandError, match="no crypto payment PAY-999999"):
        pay(999999)
    top_up.received_units = top_up.amount_due_units
    top_up.save(update_fields=["received_units"])
    with pytest.raises(CommandError, match="already received"):
        pay(top_up.pk)
    top_up.network = "base"
    top_up.save(update_fields=["network"])
    with pytest.raises(CommandError, match="only pays on the local chain"):
        pay(top_up.pk)


@pytest.mark.parametrize("written", ["PAY-{pk:06d}", "pay-{pk:06d}", "{pk}", " PAY-{pk:06d} "])
def test_pay_local_takes_the_reference_as_the_payment_page_shows_it(chain, top_up, written):
    assert f"Reference {top_up.reference}" in top_up_page(top_up)
    pay(written.format(pk=top_up.pk))
    assert chain.balance_of(top_up.deposit_address.address) == 25_000_000


def top_up_page(payment) -> str:
    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(payment.customer)
    url = reverse("payments:payment_detail", kwargs={"payment_id": payment.pk})
    return client.get(url).content.decode()


@pytest.mark.parametrize(
    ("written", "message"),
    [
        ("PAY-999999", "There is no crypto payment PAY-999999"),
        ("99999999999999999999999", "There is no crypto payment PAY-99999999999999999999999"),
        ("PAY-", "'PAY-' is not a payment reference: give it as the payment page shows it"),
        ("ORD-000001", "'ORD-000001' is not a payment reference"),
        ("-1", "'-1' is not a payment reference"),
    ],
)
def test_pay_local_says_which_reference_it_cannot_find(chain, top_up, written, message):
    with pytest.raises(CommandError, match=message):
        pay(written)
    assert chain.balance_of(top_up.deposit_address.address) == 0


def test_pay_local_finds_the_chain_make_run_started(chain, chain_file, top_up, settings):
    """make run's chain records its address (local_chain_setup); make pay, started without
    RPC_URL_LOCAL or ANVIL_PORT, pays there. Before, it tried 127.0.0.1:8545 and failed with
    "connection refused" unless ANVIL_PORT was repeated."""
    setup()
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": None}
    pay(top_up.reference)
    assert chain.balance_of(top_up.deposit_address.address) == 25_000_000


def test_pay_local_says_when_no_chain_runs(chain, chain_file, top_up, settings, dead_rpc_url):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": None}
    with pytest.raises(CommandError, match="No local chain is known: .* Start `make run`"):
        pay(top_up.reference)
    local.write_local_chain_file({"rpc_url": dead_rpc_url, "chain_id": CHAIN_ID})
    with pytest.raises(
        CommandError, match=f"No local chain answers at {dead_rpc_url} .*is `make run` running?"
    ):
        pay(top_up.reference)
    assert chain.balance_of(top_up.deposit_address.address) == 0
