"""Reads of the networks' vocabulary that every room shows: the (network, asset) choices, a
network's name, a token amount as a wallet writes it. From settings, no query."""

from dataclasses import dataclass
from decimal import Decimal

from django.utils.translation import gettext

from .networks import all_networks, enabled_networks


@dataclass(frozen=True, slots=True)
class StablecoinChoice:
    network_key: str
    network_name: str
    asset_symbol: str

    @property
    def value(self) -> str:
        return f"{self.network_key}:{self.asset_symbol}"

    @property
    def label(self) -> str:
        return gettext("%(asset)s on %(network)s") % {
            "asset": self.asset_symbol,
            "network": self.network_name,
        }


def stablecoin_choices() -> list[StablecoinChoice]:
    """One choice per asset of every enabled network (read from settings, no query)."""
    return [
        StablecoinChoice(network.key, str(network.name), asset.symbol)
        for network in enabled_networks().values()
        for asset in network.assets
    ]


def network_name(key: str) -> str:
    network = all_networks().get(key)
    return str(network.name) if network else key


def token_amount(units: Decimal | int, decimals: int) -> str:
    """Base units as the token's decimal amount with all its decimals: "893.760000".

    A string on purpose: it is what a wallet expects, so it is never localised.
    """
    return f"{Decimal(int(units)).scaleb(-decimals):f}"
