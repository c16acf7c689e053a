"""accounts.kept.Kept: a bounded map of rendered parts, the least recently used dropped first."""

from accounts.kept import Kept


def test_the_least_recently_used_goes_first_and_the_size_holds():
    kept = Kept(size=2)
    assert kept.put("a", "A") == "A"
    kept.put("b", "B")
    assert kept.get("a") == "A"  # now the most recently used
    kept.put("c", "C")  # drops b, not a
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == ("A", None, "C")
    assert len(kept) == 2
    kept.put("a", "A2")  # a new value for a kept key takes no more room
    assert len(kept) == 2 and kept.get("a") == "A2"
    kept.clear(sender=None, setting="LANGUAGES")  # as setting_changed calls it
    assert len(kept) == 0 and kept.get("a") is None
