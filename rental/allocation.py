"""Which cards of which hosts an order gets: a pure function, no database.

Rules: every card of one lot sits on the same host (a B200 lot is two cards of one machine);
an order is packed onto as few hosts as possible; among plans with that many hosts the big free
hosts stay whole where possible (the last host is the tightest fit). Ties go to the host listed
first, so the same inputs always give the same plan.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FreeHost:
    host_id: int
    free_cards: tuple[int, ...]  # indices of the host's free cards, ascending

    def lots_free(self, cards_per_lot: int) -> int:
        return len(self.free_cards) // cards_per_lot


@dataclass(frozen=True, slots=True)
class Placement:
    lot: int  # 1-based lot number within the order
    host_id: int
    card_index: int


def lots_free(hosts: list[FreeHost], cards_per_lot: int) -> int:
    """How many whole lots these hosts can still take."""
    return sum(host.lots_free(cards_per_lot) for host in hosts)


def plan_allocation(
    hosts: list[FreeHost], *, lots: int, cards_per_lot: int
) -> list[Placement] | None:
    """A placement for every card of `lots` lots, or None when the hosts cannot take them."""
    if lots < 1 or cards_per_lot < 1:
        raise ValueError("lots and cards_per_lot must be positive")
    usable = [host for host in hosts if host.lots_free(cards_per_lot) > 0]
    if lots_free(usable, cards_per_lot) < lots:
        return None
    chosen = _fewest_hosts(usable, lots, cards_per_lot)
    placements: list[Placement] = []
    lot = 1
    remaining = lots
    for host in chosen:
        take = min(remaining, host.lots_free(cards_per_lot))
        cards = host.free_cards[: take * cards_per_lot]
        for start in range(0, len(cards), cards_per_lot):
            for card_index in cards[start : start + cards_per_lot]:
                placements.append(Placement(lot=lot, host_id=host.host_id, card_index=card_index))
            lot += 1
        remaining -= take
    assert remaining == 0
    return placements


def _fewest_hosts(hosts: list[FreeHost], lots: int, cards_per_lot: int) -> list[FreeHost]:
    # Largest first (stable on the input order) gives the smallest number of hosts k; the first
    # k - 1 largest are needed, and the remainder goes to the smallest host that fits it.
    by_size = sorted(hosts, key=lambda host: -host.lots_free(cards_per_lot))
    chosen: list[FreeHost] = []
    covered = 0
    for host in by_size:
        if covered + host.lots_free(cards_per_lot) >= lots:
            remainder = lots - covered
            rest = [other for other in by_size if other not in chosen]
            fits = [other for other in rest if other.lots_free(cards_per_lot) >= remainder]
            chosen.append(min(fits, key=lambda other: other.lots_free(cards_per_lot)))
            return chosen
        chosen.append(host)
        covered += host.lots_free(cards_per_lot)
    raise AssertionError("unreachable: capacity was checked")
