"""The pricing rule: the only place that computes a quote.

A lot is one card (two on B200). The total is the lot price for the duration times the number of
lots; the lot price already covers every card of the lot, so nothing is multiplied by cards.
"""

from dataclasses import dataclass
from decimal import Decimal

from .money import usd

DURATIONS_DAYS = (3, 7, 30)
MIN_LOTS = 1
MAX_LOTS = 10


@dataclass(frozen=True, slots=True)
class Quote:
    duration_days: int
    lots: int
    cards_per_lot: int
    lot_price_usd: Decimal
    total_cards: int
    total_usd: Decimal

    @property
    def card_hours(self) -> int:
        return self.total_cards * self.duration_days * 24


def quote(*, lot_price_usd: Decimal, duration_days: int, lots: int, cards_per_lot: int) -> Quote:
    """Price `lots` lots of one GPU model for `duration_days`.

    Raises ValueError for a duration, lot count, card count or price outside the rules; callers
    validate user input before calling, so an error here is a programming error.
    """
    if isinstance(lots, bool) or not isinstance(lots, int):
        raise TypeError("lots must be an int")
    if duration_days not in DURATIONS_DAYS:
        raise ValueError(f"duration must be one of {DURATIONS_DAYS} days")
    if not MIN_LOTS <= lots <= MAX_LOTS:
        raise ValueError(f"lots must be between {MIN_LOTS} and {MAX_LOTS}")
    if isinstance(cards_per_lot, bool) or not isinstance(cards_per_lot, int) or cards_per_lot < 1:
        raise ValueError("cards_per_lot must be a positive int")
    lot_price = usd(lot_price_usd)
    if lot_price <= 0:
        raise ValueError("lot price must be positive")
    return Quote(
        duration_days=duration_days,
        lots=lots,
        cards_per_lot=cards_per_lot,
        lot_price_usd=lot_price,
        total_cards=lots * cards_per_lot,
        total_usd=usd(lot_price * lots),
    )
