"""JSON-RPC access to a network: every error becomes RpcError, so callers can retry."""

from dataclasses import dataclass

from django.conf import settings
from web3 import HTTPProvider, Web3

from ..networks import TRANSFER_TOPIC, Network


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


@dataclass(frozen=True, slots=True)
class TransferLog:
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    token_address: str  # addresses here are lower-case
    from_address: str
    to_address: str
    amount_units: int
    block_timestamp: int | None = None  # given by nodes that include it in logs


def _topic_address(topic) -> str:
    """The address in an indexed topic, lower-case (checksumming every log is costly; the
    watcher checksums only the logs that turn out to be ours)."""
    raw = topic.hex() if hasattr(topic, "hex") else str(topic)
    return "0x" + raw.removeprefix("0x")[-40:].lower()


def _hex(value) -> str:
    text = value.hex() if hasattr(value, "hex") else str(value)
    return text if text.startswith("0x") else "0x" + text


class ChainClient:
    def __init__(self, network: Network, rpc_url: str | None = None):
        url = rpc_url or network.rpc_url
        if not url:
            raise RpcError(f"network {network.key} has no RPC URL")
        self.network = network
        self.w3 = Web3(
            HTTPProvider(url, request_kwargs={"timeout": settings.PAYMENT_RPC_TIMEOUT_SECONDS})
        )

    def _call(self, func, *args):
        try:
            return func(*args)
        except Exception as exc:  # noqa: BLE001 - every provider failure is an RpcError
            message = str(exc)
            if any(hint in message.lower() for hint in _RANGE_HINTS):
                raise RangeTooLarge(message) from exc
            raise RpcError(f"{type(exc).__name__}: {message}"[:500]) from exc

    def head(self) -> int:
        return self._call(lambda: self.w3.eth.block_number)

    def block(self, number: int) -> tuple[str, int]:
        """(hash, unix timestamp) of a block."""
        block = self._call(self.w3.eth.get_block, number)
        if block is None:
            raise RpcError(f"block {number} is not available")
        return _hex(block["hash"]).lower(), int(block["timestamp"])

    def blocks(self, numbers, *, missing_ok: bool = False) -> dict[int, tuple[str, int]]:
        """(hash, timestamp) of several blocks, in JSON-RPC batches of 100. A block the node
        does not have raises RpcError, or is left out with `missing_ok` (a chain that got
        shorter in a reorganisation)."""
        numbers = sorted(set(numbers))
        found: dict[int, tuple[str, int]] = {}
        for start in range(0, len(numbers), 100):
            chunk = numbers[start : start + 100]

            def fetch(chunk=chunk):
                with self.w3.batch_requests() as batch:
                    for number in chunk:
                        batch.add(self.w3.eth.get_block(number))
                    return batch.execute()

            for number, block in zip(chunk, self._call(fetch), strict=True):
                if block is None:
                    if missing_ok:
                        continue
                    raise RpcError(f"block {number} is not available")
                found[number] = (_hex(block["hash"]).lower(), int(block["timestamp"]))
        return found

    def transfer_logs(
        self, *, from_block: int, to_block: int, to_address: str | None = None
    ) -> list[TransferLog]:
        """Transfer logs of the network's token contracts in [from_block, to_block]."""
        topics: list = [TRANSFER_TOPIC]
        if to_address:
            topics += [None, "0x" + "0" * 24 + to_address.lower().removeprefix("0x")]
        params = {
            "fromBlock": from_block,
            "toBlock": to_block,
            "address": [asset.token_address for asset in self.network.assets],
            "topics": topics,
        }
        logs = self._call(self.w3.eth.get_logs, params)
        return [self._parse(log) for log in logs if len(log["topics"]) == 3]

    def receipt_logs(self, tx_hash: str) -> list[TransferLog]:
        """Transfer logs of the network's tokens in one transaction (for a declared hash)."""
        receipt = self._call(self.w3.eth.get_transaction_receipt, tx_hash)
        tokens = {asset.token_address.lower() for asset in self.network.assets}
        return [
            self._parse(log)
            for log in receipt["logs"]
            if str(log["address"]).lower() in tokens
            and len(log["topics"]) == 3
            and _hex(log["topics"][0]).lower() == TRANSFER_TOPIC
        ]

    @staticmethod
    def _parse(log) -> TransferLog:
        data = _hex(log["data"])
        return TransferLog(
            tx_hash=_hex(log["transactionHash"]).lower(),
            log_index=int(log["logIndex"]),
            block_number=int(log["blockNumber"]),
            block_hash=_hex(log["blockHash"]).lower(),
            token_address=str(log["address"]).lower(),
            from_address=_topic_address(log["topics"][1]),
            to_address=_topic_address(log["topics"][2]),
            amount_units=int(data, 16) if data not in ("0x", "") else 0,
            block_timestamp=int(log["blockTimestamp"], 16)
            if isinstance(log.get("blockTimestamp"), str)
            else log.get("blockTimestamp"),
        )
