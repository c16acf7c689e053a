"""The watcher's JSON-RPC client: what it reads from a real node (anvil), and how it takes the
answers of public providers that anvil does not give (refused ranges, HTTP errors, batches
answered out of order) — those from a small HTTP server standing in for the provider."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from payments.chain.networks import TRANSFER_TOPIC, get_network
from payments.chain.rpc import ChainClient, RangeTooLarge, RpcError, parse_transfer
from payments.chain.scanning import _read_logs

TOKEN = "0x5fbdb2315678afecb367f032d93f642f64180aa3"


class Provider:
    """An HTTP JSON-RPC endpoint answering with `answer(payload) -> (status, body)`."""

    def __init__(self):
        self.answer = lambda payload: (200, {})
        self.payloads: list = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server name
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                provider.payloads.append(payload)
                status, body = provider.answer(payload)
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(
            target=self.server.serve_forever, args=(0.02,), daemon=True
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider(settings):
    settings.LOCAL_TOKEN_ADDRESS = TOKEN
    with Provider() as running:
        yield running


def client_for(url: str) -> ChainClient:
    return ChainClient(get_network("local"), rpc_url=url)


def raw_log(block: int, *, to: str = "0x" + "c" * 40, units: int = 7, **extra) -> dict:
    return {
        "address": TOKEN,
        "topics": [TRANSFER_TOPIC, "0x" + "0" * 24 + "b" * 40, "0x" + "0" * 24 + to[2:]],
        "data": f"0x{units:064x}",
        "blockNumber": hex(block),
        "blockHash": f"0x{block:064x}",
        "blockTimestamp": hex(1_700_000_000 + block),
        "transactionHash": f"0x{block + 1:064x}",
        "logIndex": "0x0",
        **extra,
    }


def test_a_range_refused_over_http_is_halved_until_every_block_is_read_once(provider):
    def answer(payload):
        params = payload["params"][0]
        first, last = int(params["fromBlock"], 16), int(params["toBlock"], 16)
        if last - first + 1 > 300:
            error = {"code": -32005, "message": "query returned more than 10000 results"}
            return 200, {"jsonrpc": "2.0", "id": payload["id"], "error": error}
        logs = [raw_log(block) for block in range(first, last + 1) if block % 100 == 0]
        return 200, {"jsonrpc": "2.0", "id": payload["id"], "result": logs}

    provider.answer = answer
    logs = _read_logs(client_for(provider.url), 0, 4999)

    assert [log.block_number for log in logs] == list(range(0, 5000, 100))
    assert {(log.amount_units, log.to_address, log.from_address) for log in logs} == {
        (7, "0x" + "c" * 40, "0x" + "b" * 40)
    }
    answered = [
        (int(p["params"][0]["fromBlock"], 16), int(p["params"][0]["toBlock"], 16))
        for p in provider.payloads
    ]
    answered = [(a, b) for a, b in answered if b - a + 1 <= 300]
    assert sorted(n for a, b in answered for n in range(a, b + 1)) == list(range(5000))
    assert {p["params"][0]["address"][0].lower() for p in provider.payloads} == {TOKEN}


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        # Some providers refuse a range with an HTTP error and a JSON-RPC body.
        (400, {"error": {"code": -32602, "message": "Log response size exceeded"}}, RangeTooLarge),
        # Rate limited: retried later, not read in smaller ranges.
        (429, {"error": {"code": 429, "message": "Too many requests, slow down"}}, RpcError),
        (503, b"<html>Service unavailable</html>", RpcError),
        (200, b"not json", RpcError),
        (200, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "boom"}}, RpcError),
    ],
)
def test_provider_failures_are_rpc_errors(provider, status, body, error):
    provider.answer = lambda payload: (status, body)
    with pytest.raises(error) as raised:
        client_for(provider.url).transfer_logs(from_block=0, to_block=10)
    if error is RpcError:
        assert not isinstance(raised.value, RangeTooLarge)


def test_an_unreachable_node_is_an_rpc_error(settings, dead_rpc_url):
    settings.LOCAL_TOKEN_ADDRESS = TOKEN
    with pytest.raises(RpcError):
        client_for(dead_rpc_url).head()


def test_a_batch_answered_out_of_order_is_matched_by_id_and_one_failed_call_fails_it(provider):
    def reversed_answers(payload):
        return 200, [
            {"jsonrpc": "2.0", "id": call["id"], "result": call["params"][0]}
            for call in reversed(payload)
        ]

    provider.answer = reversed_answers
    client = client_for(provider.url)
    assert client.batch([("echo", ["a"]), ("echo", ["b"]), ("echo", ["c"])]) == ["a", "b", "c"]

    def one_fails(payload):
        answers = [{"jsonrpc": "2.0", "id": call["id"], "result": None} for call in payload]
        answers[1] = {"jsonrpc": "2.0", "id": payload[1]["id"], "error": {"message": "nope"}}
        return 200, answers

    provider.answer = one_fails
    with pytest.raises(RpcError):
        client.batch([("echo", ["a"]), ("echo", ["b"])])


def test_only_erc20_transfer_logs_are_read():
    assert parse_transfer(raw_log(5)).amount_units == 7
    nft = raw_log(5)
    nft["topics"] = [*nft["topics"], "0x" + "0" * 63 + "1"]  # ERC-721: the token id indexed
    assert parse_transfer(nft) is None
    assert parse_transfer(raw_log(5, removed=True)) is None
    other = raw_log(5)
    other["topics"] = ["0x" + "e" * 64, *other["topics"][1:]]
    assert parse_transfer(other) is None


def test_no_token_configured_reads_nothing_rather_than_every_contract(provider, settings, tmp_path):
    settings.LOCAL_TOKEN_ADDRESS = ""
    settings.LOCAL_CHAIN_FILE = tmp_path / "no-local-chain.json"
    assert client_for(provider.url).transfer_logs(from_block=0, to_block=10) == []
    assert provider.payloads == []


def test_a_transfer_on_the_local_chain_reads_as_the_chain_has_it(chain):
    to = "0x" + "ab" * 20
    tx_hash = chain.transfer(to, 1_234_567)
    receipt = chain.receipt(tx_hash)
    client = ChainClient(get_network("local"))

    (log,) = client.transfer_logs(
        from_block=receipt["blockNumber"], to_block=receipt["blockNumber"]
    )
    assert log.tx_hash == receipt["transactionHash"].to_0x_hex().lower()
    assert (log.block_number, log.block_hash) == (
        receipt["blockNumber"],
        receipt["blockHash"].to_0x_hex().lower(),
    )
    assert (log.from_address, log.to_address) == (chain.payer.lower(), to)
    assert (log.token_address, log.amount_units) == (chain.token_address.lower(), 1_234_567)
    assert log.block_timestamp == chain.block_timestamp(receipt["blockNumber"])
    from_receipt = client.receipt_logs(log.tx_hash)
    assert [found._replace(block_timestamp=None) for found in from_receipt] == [
        log._replace(block_timestamp=None)
    ]
    latest, blocks = client.latest_and([receipt["blockNumber"], 10**9])
    assert latest.number == chain.head()
    assert blocks[receipt["blockNumber"]].hash == log.block_hash
    assert blocks[10**9] is None  # not (yet) on the chain
