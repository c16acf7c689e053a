"""Networks and assets the site accepts. A network is enabled only when its RPC URL is set.

Confirmations follow public guidance for each chain (deposit policies of large exchanges and the
chains' own finality documentation), expressed in blocks at the chain's block time:
- Ethereum: 64 blocks, two epochs, when a block is finalised (about 13 minutes).
- Base: 300 blocks at 2 s (about 10 minutes): an OP-stack rollup; its batches are posted on
  Ethereum within minutes, and exchanges wait for that.
- Polygon PoS: 256 blocks at about 2 s (about 9 minutes): Polygon had deep reorganisations before
  its 2024-2025 finality upgrades, and exchanges kept conservative counts.
- Arbitrum One: 1,200 blocks at 0.25 s (about 5 minutes) for its batch to reach Ethereum.
Each can be changed with CONFIRMATIONS_<NETWORK>. The local chain (anvil) needs 3 by default.

Block times (seconds between blocks) set the pace of the payment page's status poll while a
payment is live: Ethereum 12, Base 2, Polygon PoS about 2, Arbitrum One 0.25; the local chain
mines every ANVIL_BLOCK_TIME seconds (scripts/local-chain, 2 by default).
"""

import json
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal

from django.conf import settings
from django.utils.translation import gettext_lazy as _

# keccak256("Transfer(address,address,uint256)")
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


@dataclass(frozen=True, slots=True)
class Asset:
    symbol: str
    name: str
    token_address: str
    decimals: int

    def to_units(self, usd_amount: Decimal) -> int:
        """USD to the token's base units, exact (stablecoins count 1:1 to USD)."""
        units = usd_amount * (Decimal(10) ** self.decimals)
        if units != units.to_integral_value():
            raise ValueError("the amount does not fit the token's decimals")
        return int(units)


def units_to_usd(units: Decimal | int, decimals: int) -> Decimal:
    """Token base units to USD cents, rounded down (a sub-cent remainder is not credited)."""
    return (Decimal(units) / (Decimal(10) ** decimals)).quantize(
        Decimal("0.01"), rounding=ROUND_DOWN
    )


# The watcher reads up to this many blocks behind the head (the page counts confirmations from
# its cursor with the same lag).
HEAD_LAG = 1


def confirmations_at(*, head: int, block_number: int) -> int:
    """Confirmations of a transaction mined in `block_number` when the chain's head is `head`:
    1 in its own block, never negative. The watcher and the payment page both count so."""
    return max(0, head - block_number + 1)


@dataclass(frozen=True, slots=True)
class Network:
    key: str
    name: str
    chain_id: int
    confirmations: int
    assets: tuple[Asset, ...]
    explorer_tx_url: str = ""
    block_time_seconds: float = 12.0

    @property
    def rpc_url(self) -> str | None:
        return settings.PAYMENT_RPC_URLS.get(self.key)

    @property
    def enabled(self) -> bool:
        return bool(self.rpc_url) and bool(self.assets)

    def asset(self, symbol: str) -> Asset:
        for asset in self.assets:
            if asset.symbol == symbol:
                return asset
        raise KeyError(symbol)


_PUBLIC = (
    (
        "ethereum",
        _("Ethereum"),
        1,
        64,
        "https://etherscan.io/tx/",
        (
            ("USDC", "USD Coin", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6),
            ("USDT", "Tether USD", "0xdAC17F958D2ee523a2206206994597C13D831ec7", 6),
        ),
    ),
    (
        "base",
        _("Base"),
        8453,
        300,
        "https://basescan.org/tx/",
        (
            ("USDC", "USD Coin", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", 6),
            ("USDT", "Tether USD", "0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2", 6),
        ),
    ),
    (
        "polygon",
        _("Polygon PoS"),
        137,
        256,
        "https://polygonscan.com/tx/",
        (
            ("USDC", "USD Coin", "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", 6),
            ("USDT", "Tether USD", "0xc2132D05D31c914a87C6611C10748AEb04B58e8F", 6),
        ),
    ),
    (
        "arbitrum",
        _("Arbitrum One"),
        42161,
        1200,
        "https://arbiscan.io/tx/",
        (
            ("USDC", "USD Coin", "0xaf88d065e77c8cC2239327C5EDb3A432268e5831", 6),
            ("USDT", "Tether USD", "0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9", 6),
        ),
    ),
)
LOCAL_CHAIN_ID = 31337
LOCAL_ASSET_SYMBOL = "tUSDC"
# Every network key and asset symbol the code knows, enabled or not (the API schema's enums: a
# release's list, never a deployment's settings).
NETWORK_KEYS = (*(row[0] for row in _PUBLIC), "local")
ASSET_SYMBOLS = tuple(
    dict.fromkeys([asset[0] for row in _PUBLIC for asset in row[5]] + [LOCAL_ASSET_SYMBOL])
)
_BLOCK_TIME_SECONDS = {"ethereum": 12.0, "base": 2.0, "polygon": 2.0, "arbitrum": 0.25}


def _confirmations(key: str, default: int) -> int:
    return int(settings.PAYMENT_CONFIRMATIONS.get(key, default))


def local_token_address() -> str | None:
    if settings.LOCAL_TOKEN_ADDRESS:
        return settings.LOCAL_TOKEN_ADDRESS
    try:
        data = json.loads(settings.LOCAL_CHAIN_FILE.read_text())
    except (OSError, ValueError):
        return None
    return data.get("token_address")


def all_networks() -> dict[str, Network]:
    """Every configured network, enabled or not; read at call time (settings may change)."""
    networks = {
        key: Network(
            key=key,
            name=name,
            chain_id=chain_id,
            confirmations=_confirmations(key, confirmations),
            assets=tuple(Asset(*asset) for asset in assets),
            explorer_tx_url=explorer,
            block_time_seconds=_BLOCK_TIME_SECONDS[key],
        )
        for key, name, chain_id, confirmations, explorer, assets in _PUBLIC
    }
    token = local_token_address()
    networks["local"] = Network(
        key="local",
        # No brackets in a name: pages add "(chain id 31337)" after it.
        name=_("Local test chain"),
        chain_id=LOCAL_CHAIN_ID,
        confirmations=_confirmations("local", 3),
        assets=(Asset(LOCAL_ASSET_SYMBOL, "Test USD Coin", token, 6),) if token else (),
        block_time_seconds=settings.LOCAL_CHAIN_BLOCK_TIME_SECONDS,
    )
    return networks


def enabled_networks() -> dict[str, Network]:
    return {key: network for key, network in all_networks().items() if network.enabled}


def get_network(key: str) -> Network:
    return all_networks()[key]
