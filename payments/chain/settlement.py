"""Where the chain hands what it stored and confirmed to the room that gives it a meaning.

The chain stores transfers, confirms them and notices reversals; what the money on a payment
means (detected, paid, to the balance, to review) is the crypto room's settling
(payments.crypto.services.settling), which sits above the chain. So the chain does not import
it: the crypto room registers its two settling functions here when the app is ready
(payments.apps), and the chain calls them inside its own transactions, under the payments'
locks it holds, exactly where it called settling before. Imports flow crypto → chain only.

A chain with nothing registered refuses to store or confirm (RuntimeError): a transfer must
never change without its payment being settled in the same transaction.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..models import CryptoPayment

Payments = dict[int, CryptoPayment]


@dataclass(frozen=True, slots=True)
class Settler:
    # Transfers were seen (or moved block) on these locked payments: no money moves yet.
    seen: Callable[..., None]  # (payments, *, touched)
    # Transfers were confirmed, reorganised away or reversed: money moves.
    changed: Callable[..., None]  # (payments, *, touched, reversed_ids=())


_settler: Settler | None = None


def settler_register(settler: Settler) -> None:
    """Called once by payments.apps when the app is ready (a second call replaces the first)."""
    global _settler
    _settler = settler


def _registered() -> Settler:
    if _settler is None:
        raise RuntimeError("no settler registered: payments.apps registers the crypto room's")
    return _settler


def settle_seen(payments: Payments, *, touched: Iterable[int]) -> None:
    _registered().seen(payments, touched=touched)


def settle(payments: Payments, *, touched: Iterable[int], reversed_ids: Iterable[int] = ()) -> None:
    _registered().changed(payments, touched=touched, reversed_ids=reversed_ids)
