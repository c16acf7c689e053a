"""The handover comparison: what the order promised against what the machine's vendor tool shows.

Server side of the contract in the diagnostics report (`handover`). `diagnose.py` carries a
standalone copy of `model_key`, `model_matches` and `compare` (it runs on the customer's machine,
standard library only); tests/pilot/kit/test_handover.py checks both copies agree on a table of
cases, so change them together.
"""

import re
from collections import Counter

from django.utils.translation import gettext as _

from rental.models import Order

# Problem codes, in the order `compare` reports them.
NO_VENDOR_TOOL = "no_vendor_tool"
FEWER_CARDS = "fewer_cards"
OTHER_MODEL = "other_model"
LESS_MEMORY = "less_memory"
OTHER_PLATFORM = "other_platform"
PROBLEMS = (NO_VENDOR_TOOL, FEWER_CARDS, OTHER_MODEL, LESS_MEMORY, OTHER_PLATFORM)
PLATFORMS = ("cuda", "rocm")

# Vendors report a little less than the nominal GB (reserved memory, GB vs GiB).
MEMORY_TOLERANCE = 0.9

# The GPU architecture each model's cards have, keyed by `model_key`: what a PyTorch build must
# list in torch.cuda.get_arch_list() for kernels to run without a JIT step.
ARCHITECTURES: dict[str, str] = {
    "A100": "sm_80",
    "L40S": "sm_89",
    "H100": "sm_90",
    "H200": "sm_90",
    "GH200": "sm_90",
    "B200": "sm_100",
    "B300": "sm_103",
    "MI250X": "gfx90a",
    "MI300X": "gfx942",
    "MI325X": "gfx942",
    "MI355X": "gfx950",
}

_SEPARATORS = re.compile(r"[\s\-_]+")


def _squash(text: str) -> str:
    return _SEPARATORS.sub("", text).upper()


def model_key(name: str) -> str:
    """The token that identifies a model in a vendor's card name: the first word of the
    catalogue name that contains a digit ("H100 80 GB" → "H100", "MI300X 192 GB" → "MI300X"),
    upper-case without spaces or dashes; the whole name squashed when no word has a digit."""
    for word in name.split():
        if any(char.isdigit() for char in word):
            return _squash(word)
    return _squash(name)


def model_matches(expected_model: str, reported_name: str) -> bool:
    """Whether a card the vendor tool reports ("NVIDIA H100 80GB HBM3") is the ordered model."""
    key = model_key(expected_model)
    return bool(key) and key in _squash(reported_name)


def expected_architecture(model_name: str) -> str | None:
    return ARCHITECTURES.get(model_key(model_name))


def compare(expected: dict, seen: dict) -> list[str]:
    """Problem codes for a machine that shows `seen` where the order promised `expected`.

    `seen` with no platform means no vendor tool answered: nothing else can be compared. More
    cards than rented is no problem of the handover (a shared host shows all of its cards).
    """
    platform = seen.get("platform")
    if platform is None:
        return [NO_VENDOR_TOOL]
    problems = []
    cards = seen.get("cards")
    if cards is not None and cards < expected["cards"]:
        problems.append(FEWER_CARDS)
    model = seen.get("model")
    if model is not None and not model_matches(expected["model"], model):
        problems.append(OTHER_MODEL)
    memory = seen.get("memory_gb_per_card")
    if memory is not None and memory < MEMORY_TOLERANCE * expected["memory_gb_per_card"]:
        problems.append(LESS_MEMORY)
    if platform != expected["platform"]:
        problems.append(OTHER_PLATFORM)
    return problems


class UnknownHost(LookupError):
    """The host named is not one that holds cards of this order."""


def live_allocations(order: Order):
    return order.allocations.filter(released_at__isnull=True).select_related("host")


def cards_per_host(order: Order) -> list[dict]:
    """The order's live cards per host, by host name: what order.json lists for the kit."""
    counts: Counter = Counter()
    hosts = {}
    for allocation in live_allocations(order):
        counts[allocation.host_id] += 1
        hosts[allocation.host_id] = allocation.host
    return sorted(
        (
            {"host": host.name, "ssh_host": host.ssh_host, "cards": counts[host_id]}
            for host_id, host in hosts.items()
        ),
        key=lambda entry: entry["host"],
    )


def expected_for_order(order: Order, host_name: str | None = None) -> dict:
    """The "expected" object of the handover comparison.

    With `host_name`: that host's live cards of the order (UnknownHost when it holds none).
    Without: the only host's cards when the order sits on one host; otherwise (no cards
    allocated yet, or several hosts and none named) the order's total cards, with host None.
    """
    hosts = cards_per_host(order)
    if host_name is not None:
        chosen = [entry for entry in hosts if entry["host"] == host_name]
        if not chosen:
            raise UnknownHost(host_name)
        host, cards = host_name, chosen[0]["cards"]
    elif len(hosts) == 1:
        host, cards = hosts[0]["host"], hosts[0]["cards"]
    else:
        host, cards = None, order.total_cards
    return {
        "model": order.model_name,
        "cards": cards,
        "memory_gb_per_card": order.memory_gb_per_card,
        "platform": order.compute_platform,
        "host": host,
    }


def _platform_label(platform: str | None) -> str:
    return {"cuda": "CUDA (NVIDIA)", "rocm": "ROCm (AMD)"}.get(
        platform or "", _("unknown platform")
    )


def describe_problem(code: str, expected: dict, seen: dict) -> str:
    """One problem in plain words, for the order page and the operators' queue."""
    if code == NO_VENDOR_TOOL:
        return _(
            "No NVIDIA or AMD tool answered on the machine: its cards could not be compared "
            "with the order."
        )
    if code == FEWER_CARDS:
        return _("Fewer cards than rented: %(seen)s seen, %(expected)s in the order.") % {
            "seen": seen.get("cards"),
            "expected": expected["cards"],
        }
    if code == OTHER_MODEL:
        return _(
            "Another model: the machine reports “%(seen)s”, the order is for %(expected)s."
        ) % {
            "seen": seen.get("model"),
            "expected": expected["model"],
        }
    if code == LESS_MEMORY:
        return _("Less memory per card: %(seen)s GB seen, %(expected)s GB in the order.") % {
            "seen": seen.get("memory_gb_per_card"),
            "expected": expected["memory_gb_per_card"],
        }
    if code == OTHER_PLATFORM:
        return _(
            "Another platform: the machine has %(seen)s cards, the order is for %(expected)s."
        ) % {
            "seen": _platform_label(seen.get("platform")),
            "expected": _platform_label(expected["platform"]),
        }
    raise ValueError(code)


def describe_problems(expected: dict, seen: dict, problems: list[str]) -> list[str]:
    return [describe_problem(code, expected, seen) for code in problems]
