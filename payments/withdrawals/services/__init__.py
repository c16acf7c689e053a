"""Withdrawals of the USD balance in a stablecoin, checked on chain.

The customer asks (`withdrawal_request`): the amount moves at once from their balance to the
withdrawals pending. Finance approves or rejects it (a rejection returns the amount); the server
holds no key, so finance sends from its own wallet and enters the transaction hash
(`withdrawal_enter_hash`); the worker reads that transaction from the chain
(`withdrawal_check`) and marks the withdrawal paid once it carries a Transfer of the token to
the address for at least the amount with the network's confirmations, else keeps it sent with
the reason.

`withdrawal_set_status` is the one way a withdrawal changes status: it checks
WITHDRAWAL_TRANSITIONS, writes the WithdrawalEvent (who, why) and queues what follows after
the commit. The caller holds the withdrawal's row lock (payments.locks.lock_withdrawal, step 3a
of the lock order: before the ledger accounts its postings lock).
"""

from .checking import withdrawal_check, withdrawal_check_soon, withdrawals_to_check
from .decisions import (
    HASH_MESSAGE,
    withdrawal_approve,
    withdrawal_enter_hash,
    withdrawal_reject,
    withdrawal_take_hash_back,
)
from .request import address_checked, withdrawal_request
from .status import (
    TX_HASH_PATTERN,
    InvalidWithdrawalTransition,
    OwnWithdrawal,
    WithdrawalAddressError,
    WithdrawalAmountError,
    WithdrawalError,
    WithdrawalHashError,
    WithdrawalNetworkUnavailable,
    can_change,
    withdrawal_minimum,
    withdrawal_set_status,
)

__all__ = [
    "HASH_MESSAGE",
    "TX_HASH_PATTERN",
    "InvalidWithdrawalTransition",
    "OwnWithdrawal",
    "WithdrawalAddressError",
    "WithdrawalAmountError",
    "WithdrawalError",
    "WithdrawalHashError",
    "WithdrawalNetworkUnavailable",
    "address_checked",
    "can_change",
    "withdrawal_approve",
    "withdrawal_check",
    "withdrawal_check_soon",
    "withdrawal_enter_hash",
    "withdrawal_minimum",
    "withdrawal_reject",
    "withdrawal_request",
    "withdrawal_set_status",
    "withdrawal_take_hash_back",
    "withdrawals_to_check",
]
