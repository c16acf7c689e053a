"""JSON-RPC access to a network: every error becomes RpcError, so callers can retry.

Plain JSON-RPC over one kept-alive HTTP session per thread and URL: the watcher reads a few
fields of each log and block, so it decodes them itself from the node's hex (web3's result
formatters and checksummed addresses cost more than the node spends answering). Several calls
go out as one JSON-RPC batch where the node accepts them together (block hashes).

The node's answer is decoded with the cycle collector paused (collector_paused): an
eth_getLogs answer of a busy token is tens of thousands of dicts and lists, none of them in a
cycle, which set off collections that walked them all again (bench/watcher.py). A scan
runs whole with it paused (payments.chain.scanning.scan_network).
"""

import gc
import os
import threading
from dataclasses import dataclass
from itertools import count
from typing import NamedTuple

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from .networks import TRANSFER_TOPIC, Network

BLOCK_BATCH = 100  # eth_getBlockByNumber calls per JSON-RPC batch


class RpcError(Exception):
    """The node could not answer (unreachable, timeout, HTTP or JSON-RPC error)."""


class RangeTooLarge(RpcError):
    """The provider refused an eth_getLogs block range: ask for a smaller one."""


_RANGE_HINTS = (
    "range",
    "too many",
    "limit exceeded",
    "more than",
    "response size",
    "query returned",
    "-32005",
)


class TransferLog(NamedTuple):
    """One ERC-20 Transfer log (a tuple: a scan makes thousands)."""

    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    token_address: str  # addresses here are lower-case
    from_address: str
    to_address: str
    amount_units: int
    block_timestamp: int | None = None  # given by nodes that include it in logs


@dataclass(frozen=True, slots=True)
class Block:
    number: int
    hash: str  # lower-case 0x hex
    parent_hash: str
    timestamp: int


class collector_paused:
    """The cycle collector off for a block that builds many objects and no cycle (a node's
    JSON answer), then back as it was. Process-wide: another thread's garbage waits for the
    next collection, nothing is lost."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc) -> None:
        if self.was_enabled:
            gc.enable()


def _topic_address(topic: str) -> str:
    """The address in an indexed topic (its last 20 bytes), lower-case."""
    return "0x" + topic[-40:].lower()


def _quantity(value) -> int:
    return int(value, 16) if isinstance(value, str) else int(value)


def _error(payload) -> RpcError:
    """The RpcError for a JSON-RPC error object (RangeTooLarge when it is about the range)."""
    if isinstance(payload, dict):
        message = f"{payload.get('message', '')} (code {payload.get('code')})"
    else:
        message = str(payload)
    if any(hint in message.lower() for hint in _RANGE_HINTS):
        return RangeTooLarge(message[:500])
    return RpcError(message[:500])


_sessions = threading.local()


def _session() -> requests.Session:
    """This thread's HTTP session: its connections stay open from one call (and scan) to the
    next. A forked worker process opens its own (it must not share its parent's sockets)."""
    pid, session = getattr(_sessions, "owner", (None, None))
    if session is None or pid != os.getpid():
        session = requests.Session()
        session.headers["Content-Type"] = "application/json"
        # Every call here only reads: one that failed on the way (a kept-alive connection the
        # node had closed) is sent again, twice at most; anything else is the task's to retry.
        retry = Retry(total=2, connect=2, read=1, status=0, other=0, allowed_methods=None)
        session.mount("http://", HTTPAdapter(max_retries=retry))
        session.mount("https://", HTTPAdapter(max_retries=retry))
        _sessions.owner = (os.getpid(), session)
    return session


class ChainClient:
    def __init__(self, network: Network, rpc_url: str | None = None):
        url = rpc_url or network.rpc_url
        if not url:
            raise RpcError(f"network {network.key} has no RPC URL")
        self.network, self.url = network, url
        self.timeout = settings.PAYMENT_RPC_TIMEOUT_SECONDS
        self._ids = count(1)

    # ------------------------------------------------------------------ transport

    def _post(self, payload):
        try:
            response = _session().post(self.url, json=payload, timeout=self.timeout)
        except requests.RequestException as exc:
            raise RpcError(f"{type(exc).__name__}: {exc}"[:500]) from exc
        try:
            with collector_paused():
                body = response.json()
        except ValueError:
            body = None
        if response.status_code == 429:
            raise RpcError(f"rate limited by the node (HTTP 429): {response.text[:200]}")
        if response.status_code != 200:
            # Some providers answer a refused range with an HTTP error and a JSON-RPC body.
            detail = body.get("error") if isinstance(body, dict) else None
            raise _error(detail or f"HTTP {response.status_code}: {response.text[:200]}")
        if body is None:
            raise RpcError("the node's answer is not JSON")
        return body

    def call(self, method: str, params: list):
        """One JSON-RPC call; its result."""
        body = self._post(
            {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
        )
        if not isinstance(body, dict):
            raise RpcError(f"unexpected answer to {method}")
        if body.get("error") is not None:
            raise _error(body["error"])
        return body.get("result")

    def batch(self, calls: list[tuple[str, list]]) -> list:
        """Several calls in one JSON-RPC batch; their results in the same order."""
        if not calls:
            return []
        ids = [next(self._ids) for _ in calls]
        body = self._post(
            [
                {"jsonrpc": "2.0", "id": call_id, "method": method, "params": params}
                for call_id, (method, params) in zip(ids, calls, strict=True)
            ]
        )
        if isinstance(body, dict) and body.get("error") is not None:
            raise _error(body["error"])  # the whole batch refused
        if not isinstance(body, list):
            raise RpcError("unexpected answer to a batch")
        answers = {answer.get("id"): answer for answer in body if isinstance(answer, dict)}
        results = []
        for call_id in ids:
            answer = answers.get(call_id)
            if answer is None:
                raise RpcError("a call of the batch got no answer")
            if answer.get("error") is not None:
                raise _error(answer["error"])
            results.append(answer.get("result"))
        return results

    # ------------------------------------------------------------------ blocks

    def head(self) -> int:
        return _quantity(self.call("eth_blockNumber", []))

    @staticmethod
    def _block_call(number) -> tuple[str, list]:
        tag = number if isinstance(number, str) else hex(number)
        return ("eth_getBlockByNumber", [tag, False])

    @staticmethod
    def _parse_block(raw) -> Block | None:
        if not raw:
            return None
        return Block(
            number=_quantity(raw["number"]),
            hash=raw["hash"].lower(),
            parent_hash=raw["parentHash"].lower(),
            timestamp=_quantity(raw["timestamp"]),
        )

    def latest(self) -> Block:
        """The head block (its parent hash is the hash of the block below the head)."""
        block = self._parse_block(self.call(*self._block_call("latest")))
        if block is None:
            raise RpcError("the node has no latest block")
        return block

    def latest_and(self, numbers) -> tuple[Block, dict[int, Block | None]]:
        """The head block and these blocks (None for one the node does not have), in one
        batch."""
        numbers = sorted(set(numbers))
        answers = self.batch([self._block_call("latest"), *map(self._block_call, numbers)])
        latest = self._parse_block(answers[0])
        if latest is None:
            raise RpcError("the node has no latest block")
        return latest, {
            n: self._parse_block(raw) for n, raw in zip(numbers, answers[1:], strict=True)
        }

    def block(self, number: int) -> tuple[str, int]:
        """(hash, unix timestamp) of a block."""
        block = self._parse_block(self.call(*self._block_call(number)))
        if block is None:
            raise RpcError(f"block {number} is not available")
        return block.hash, block.timestamp

    def block_headers(self, numbers) -> dict[int, Block | None]:
        """Several blocks (None for one the node does not have), BLOCK_BATCH per batch."""
        numbers = sorted(set(numbers))
        found: dict[int, Block | None] = {}
        for start in range(0, len(numbers), BLOCK_BATCH):
            chunk = numbers[start : start + BLOCK_BATCH]
            results = self.batch([self._block_call(number) for number in chunk])
            for number, raw in zip(chunk, results, strict=True):
                found[number] = self._parse_block(raw)
        return found

    def blocks(self, numbers, *, missing_ok: bool = False) -> dict[int, tuple[str, int]]:
        """(hash, timestamp) of several blocks, in JSON-RPC batches. A block the node does not
        have raises RpcError, or is left out with `missing_ok` (a chain that got shorter in a
        reorganisation)."""
        found = {}
        for number, block in self.block_headers(numbers).items():
            if block is None:
                if missing_ok:
                    continue
                raise RpcError(f"block {number} is not available")
            found[number] = (block.hash, block.timestamp)
        return found

    # ------------------------------------------------------------------ logs

    def transfer_logs(
        self, *, from_block: int, to_block: int, to_address: str | None = None, raw: bool = False
    ) -> list[TransferLog] | list[dict]:
        """Transfer logs of the network's token contracts in [from_block, to_block]; with `raw`,
        as the node sent them, for the caller to keep the ERC-20 Transfers it wants
        (transfer_recipients tells whom each one pays; parse_transfer parses one)."""
        tokens = [asset.token_address for asset in self.network.assets]
        if not tokens:
            return []  # no address filter would mean every contract's logs
        topics: list = [TRANSFER_TOPIC]
        if to_address:
            topics += [None, "0x" + "0" * 24 + to_address.lower().removeprefix("0x")]
        params = {
            "fromBlock": hex(from_block),
            "toBlock": hex(to_block),
            "address": tokens,
            "topics": topics,
        }
        logs = self.call("eth_getLogs", [params]) or []
        if raw:
            return logs  # the caller keeps the transfers (transfer_recipients)
        return [parsed for log in logs if (parsed := parse_transfer(log)) is not None]

    def receipt_logs(self, tx_hash: str) -> list[TransferLog]:
        """Transfer logs of the network's tokens in one transaction (for a declared hash)."""
        receipt = self.call("eth_getTransactionReceipt", [tx_hash])
        if receipt is None:
            raise RpcError(f"transaction {tx_hash} is not known to the node (yet)")
        tokens = {asset.token_address.lower() for asset in self.network.assets}
        return [
            parsed
            for log in receipt.get("logs") or []
            if str(log.get("address", "")).lower() in tokens
            and (parsed := parse_transfer(log)) is not None
        ]


def is_transfer(log: dict) -> bool:
    """An ERC-20 Transfer log (an ERC-721 Transfer has its token id as a fourth topic; a
    removed log no longer counts)."""
    topics = log.get("topics") or []
    return len(topics) == 3 and topics[0].lower() == TRANSFER_TOPIC and not log.get("removed")


def transfer_recipients(logs: list[dict]) -> list[str | None]:
    """For each raw log, the lower-case address it pays when it is an ERC-20 Transfer, else
    None: one pass over a token's thousands of logs, building nothing (parse_transfer is for the
    few that are ours)."""
    topic = TRANSFER_TOPIC
    return [
        "0x" + topics[2][-40:].lower()
        if len(topics := log.get("topics") or ()) == 3
        and (topics[0] == topic or topics[0].lower() == topic)
        and not log.get("removed")
        else None
        for log in logs
    ]


def parse_transfer(log: dict) -> TransferLog | None:
    """An ERC-20 Transfer log as the node sent it (hex strings), or None for any other log."""
    if not is_transfer(log):
        return None
    topics = log["topics"]
    data = log.get("data") or "0x"
    timestamp = log.get("blockTimestamp")
    return TransferLog(
        tx_hash=log["transactionHash"].lower(),
        log_index=_quantity(log["logIndex"]),
        block_number=_quantity(log["blockNumber"]),
        block_hash=log["blockHash"].lower(),
        token_address=log["address"].lower(),
        from_address=_topic_address(topics[1]),
        to_address=_topic_address(topics[2]),
        amount_units=int(data, 16) if data not in ("0x", "") else 0,
        block_timestamp=_quantity(timestamp) if timestamp is not None else None,
    )
