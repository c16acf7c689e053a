"""Deposit addresses by public derivation from the account-level xpub (BIP-44, Ethereum).

The server holds no private key: it derives m/44'/60'/account'/0/index from PAYMENT_XPUB and
the wallet that owns the matching private key (kept elsewhere) controls the funds.

bip_utils is imported on the first derivation, not with this module: web workers import the
payment services for their views, and most never open a payment (bip_utils and what it pulls
in weigh about as much as the rest of a worker).
"""

from functools import lru_cache


@lru_cache(maxsize=4)
def _external_chain(xpub: str):
    from bip_utils import Bip44, Bip44Changes, Bip44Coins

    account = Bip44.FromExtendedKey(xpub, Bip44Coins.ETHEREUM)
    return account.Change(Bip44Changes.CHAIN_EXT)


def derive_address(*, xpub: str, index: int) -> str:
    """The EIP-55 checksummed address at external index `index` of the account xpub."""
    if index < 0 or index >= 2**31:
        raise ValueError("derivation index out of range")
    return _external_chain(xpub).AddressIndex(index).PublicKey().ToAddress()
