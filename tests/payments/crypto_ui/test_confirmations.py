"""Confirmations n/N come from the watcher's cursor alone: no RPC call."""

import pytest

from payments.chain.networks import HEAD_LAG, confirmations_at
from payments.chain.selectors import token_amount
from payments.crypto.selectors.state import transfer_confirmations


@pytest.mark.parametrize(
    ("block_number", "cursor_next_block", "required", "expected"),
    [
        # The watcher read up to block 100, which is HEAD_LAG behind the head it saw.
        (100, 101, 3, min(3, 1 + HEAD_LAG)),
        (100, 100, 3, HEAD_LAG),  # read up to 99: the transfer's block is the head
        (99, 101, 3, min(3, 2 + HEAD_LAG)),
        (100, 101, 300, 1 + HEAD_LAG),
        (100, 400, 300, 300),  # never above N
        (100, 50, 3, 0),  # a cursor far behind the transfer: never below 0
        (100, None, 3, 0),  # no cursor yet
    ],
)
def test_confirmations_are_counted_from_the_cursor(
    block_number, cursor_next_block, required, expected
):
    assert (
        transfer_confirmations(
            block_number=block_number, cursor_next_block=cursor_next_block, required=required
        )
        == expected
    )


def test_the_page_shows_n_of_n_exactly_when_the_watcher_confirms():
    """The watcher confirms when confirmations_at(head, block) >= N, head being
    next_block - 1 + HEAD_LAG; the page reaches N/N exactly then."""
    required, block = 5, 1_000
    for next_block in range(block - 3, block + 10):
        head = next_block - 1 + HEAD_LAG
        shown = transfer_confirmations(
            block_number=block, cursor_next_block=next_block, required=required
        )
        assert (shown == required) == (confirmations_at(head=head, block_number=block) >= required)


def test_confirmations_count_the_own_block_and_never_go_negative():
    assert confirmations_at(head=100, block_number=100) == 1
    assert confirmations_at(head=163, block_number=100) == 64
    assert confirmations_at(head=99, block_number=100) == 0  # a head read behind the block


@pytest.mark.parametrize(
    ("units", "decimals", "expected"),
    [
        (893_760_000, 6, "893.760000"),
        (1, 6, "0.000001"),
        (0, 6, "0.000000"),
        (10**18, 18, "1.000000000000000000"),
        (5, 0, "5"),
    ],
)
def test_token_amounts_show_every_decimal_of_the_token(units, decimals, expected):
    assert token_amount(units, decimals) == expected
