"""How the watcher reads a provider that limits eth_getLogs ranges.

anvil has no such limit, so this one test uses a stand-in for the provider at the boundary
(the ChainClient), refusing any range wider than a limit as public providers do.
"""

import pytest

from payments.chain.rpc import RangeTooLarge, TransferLog
from payments.chain.scanning import _read_logs


class LimitedProvider:
    def __init__(self, limit: int):
        self.limit = limit
        self.calls: list[tuple[int, int]] = []

    def transfer_logs(self, *, from_block: int, to_block: int, to_address: str | None = None):
        self.calls.append((from_block, to_block))
        if to_block - from_block + 1 > self.limit:
            raise RangeTooLarge("query returned more than 10000 results")
        return [
            TransferLog(f"0x{block:064x}", 0, block, "0x" + "a" * 64, "0xt", "0xf", "0xt", 1)
            for block in range(from_block, to_block + 1)
            if block % 100 == 0
        ]


def test_a_refused_range_is_halved_until_the_provider_answers_and_no_block_is_skipped():
    provider = LimitedProvider(limit=300)
    logs = _read_logs(provider, 0, 4999)
    assert [log.block_number for log in logs] == list(range(0, 5000, 100))
    answered = [(a, b) for a, b in provider.calls if b - a + 1 <= 300]
    covered = sorted(block for a, b in answered for block in range(a, b + 1))
    assert covered == list(range(5000))  # every block read exactly once
    assert max(b - a + 1 for a, b in answered) == 250  # 2000 -> 1000 -> 500 -> 250


def test_a_provider_that_refuses_even_one_block_raises():
    with pytest.raises(RangeTooLarge):
        _read_logs(LimitedProvider(limit=0), 10, 20)
