"""The allocation rules as a pure function: B200 pairs on one host, fewest hosts, no card twice."""

from collections import Counter, defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rental.allocation import FreeHost, plan_allocation


def host(host_id: int, free: int, *, taken: tuple[int, ...] = ()) -> FreeHost:
    cards = tuple(index for index in range(free + len(taken)) if index not in taken)
    return FreeHost(host_id=host_id, free_cards=cards)


def cards_by_host(plan) -> dict[int, int]:
    return dict(Counter(place.host_id for place in plan))


def test_a_b200_lot_is_two_cards_of_one_host():
    # Three free cards on each host: one pair fits on each, the odd cards stay.
    plan = plan_allocation([host(1, 3), host(2, 3)], lots=2, cards_per_lot=2)
    lots = defaultdict(set)
    for place in plan:
        lots[place.lot].add(place.host_id)
    assert all(len(hosts) == 1 for hosts in lots.values())
    assert cards_by_host(plan) == {1: 2, 2: 2}


def test_odd_free_cards_never_make_a_b200_lot():
    # 1 + 1 + 1 free cards are three cards but no pair on one host.
    assert plan_allocation([host(1, 1), host(2, 1), host(3, 1)], lots=1, cards_per_lot=2) is None


def test_an_order_that_fits_on_one_host_goes_to_the_tightest_one():
    plan = plan_allocation([host(1, 8), host(2, 3), host(3, 4)], lots=3, cards_per_lot=1)
    assert cards_by_host(plan) == {2: 3}  # host 1 stays whole for a larger order


def test_an_order_too_big_for_any_host_uses_the_fewest_hosts():
    hosts = [host(1, 2), host(2, 2), host(3, 6), host(4, 5), host(5, 1)]
    plan = plan_allocation(hosts, lots=9, cards_per_lot=1)
    assert len(cards_by_host(plan)) == 2
    assert sum(cards_by_host(plan).values()) == 9
    assert cards_by_host(plan)[3] == 6  # the largest first, then the tightest fit for the rest


def test_cards_already_taken_are_skipped_and_the_lowest_free_ones_used():
    plan = plan_allocation([host(1, 3, taken=(0, 2))], lots=2, cards_per_lot=1)
    assert [place.card_index for place in plan] == [1, 3]


def test_not_enough_free_cards_gives_no_plan():
    assert plan_allocation([host(1, 2), host(2, 1)], lots=4, cards_per_lot=1) is None
    assert plan_allocation([], lots=1, cards_per_lot=1) is None


def test_lots_and_cards_per_lot_must_be_positive():
    with pytest.raises(ValueError):
        plan_allocation([host(1, 4)], lots=0, cards_per_lot=1)


def min_hosts_needed(capacities: list[int], lots: int) -> int:
    covered = 0
    for count, capacity in enumerate(sorted(capacities, reverse=True), start=1):
        covered += capacity
        if covered >= lots:
            return count
    raise AssertionError


@given(
    free=st.lists(st.integers(min_value=0, max_value=12), min_size=0, max_size=8),
    lots=st.integers(min_value=1, max_value=10),
    cards_per_lot=st.sampled_from([1, 2]),
)
def test_any_plan_keeps_every_rule(free, lots, cards_per_lot):
    hosts = [host(number, count) for number, count in enumerate(free, start=1)]
    plan = plan_allocation(hosts, lots=lots, cards_per_lot=cards_per_lot)
    capacities = [count // cards_per_lot for count in free]
    if sum(capacities) < lots:
        assert plan is None
        return
    assert plan is not None
    # Every card of the order once, each a free card of its host.
    assert len(plan) == lots * cards_per_lot
    assert len({(place.host_id, place.card_index) for place in plan}) == len(plan)
    free_of = {h.host_id: set(h.free_cards) for h in hosts}
    assert all(place.card_index in free_of[place.host_id] for place in plan)
    # Each lot whole on one host, lots numbered 1..n.
    lot_hosts = defaultdict(set)
    for place in plan:
        lot_hosts[place.lot].add(place.host_id)
    assert sorted(lot_hosts) == list(range(1, lots + 1))
    assert all(len(hosts_of_lot) == 1 for hosts_of_lot in lot_hosts.values())
    # As few hosts as possible.
    assert len({place.host_id for place in plan}) == min_hosts_needed(capacities, lots)
