"""The handover comparison: the site's rules, the standalone copy in diagnose.py, and what the
order expects per host."""

import pytest

from pilot import handover
from rental.models import CardAllocation

H100 = {"model": "H100 80 GB", "cards": 2, "memory_gb_per_card": 80, "platform": "cuda"}
MI300X = {"model": "MI300X 192 GB", "cards": 1, "memory_gb_per_card": 192, "platform": "rocm"}
B200 = {"model": "B200 180 GB", "cards": 2, "memory_gb_per_card": 180, "platform": "cuda"}


def seen(model, cards, memory, platform):
    return {"model": model, "cards": cards, "memory_gb_per_card": memory, "platform": platform}


CASES = [
    ("h100-match", H100, seen("NVIDIA H100 80GB HBM3", 2, 79.6, "cuda"), []),
    ("h100-more-cards", H100, seen("NVIDIA H100 80GB HBM3", 8, 79.6, "cuda"), []),
    ("h100-fewer", H100, seen("NVIDIA H100 80GB HBM3", 1, 79.6, "cuda"), ["fewer_cards"]),
    ("h100-zero", H100, seen(None, 0, None, "cuda"), ["fewer_cards"]),
    ("h100-a100", H100, seen("NVIDIA A100-SXM4-80GB", 2, 80.0, "cuda"), ["other_model"]),
    ("h100-h200", H100, seen("NVIDIA H200", 2, 139.8, "cuda"), ["other_model"]),
    ("h100-little", H100, seen("NVIDIA H100 PCIe", 2, 40.0, "cuda"), ["less_memory"]),
    ("h100-at-90pc", H100, seen("NVIDIA H100", 2, 72.0, "cuda"), []),
    ("h100-under-90pc", H100, seen("NVIDIA H100", 2, 71.9, "cuda"), ["less_memory"]),
    ("no-tool", H100, seen(None, None, None, None), ["no_vendor_tool"]),
    (
        "h100-on-amd",
        H100,
        seen("AMD Instinct MI300X", 2, 192.0, "rocm"),
        ["other_model", "other_platform"],
    ),
    (
        "everything-wrong",
        H100,
        seen("NVIDIA L4", 1, 22.5, "rocm"),
        ["fewer_cards", "other_model", "less_memory", "other_platform"],
    ),
    ("mi300x-match", MI300X, seen("AMD Instinct MI300X", 1, 192.0, "rocm"), []),
    ("mi300x-dashes", MI300X, seen("AMD Instinct MI-300X OAM", 1, 191.5, "rocm"), []),
    (
        "mi300x-mi250",
        MI300X,
        seen("AMD Instinct MI250X", 1, 64.0, "rocm"),
        ["other_model", "less_memory"],
    ),
    ("b200-match", B200, seen("NVIDIA B200", 2, 179.1, "cuda"), []),
    ("b200-unknown-memory", B200, seen("NVIDIA B200", 2, None, "cuda"), []),
]


@pytest.mark.parametrize(
    ("expected", "seen", "problems"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_site_and_kit_compare_alike(diagnose_module, expected, seen, problems):
    assert handover.compare(expected, seen) == problems
    assert diagnose_module.compare(expected, seen) == problems


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("H100 80 GB", "H100"),
        ("H200 141 GB", "H200"),
        ("B200 180 GB", "B200"),
        ("MI300X 192 GB", "MI300X"),
        ("Instinct MI-300X", "MI300X"),
        ("NVIDIA h100", "H100"),
        ("Blender box", "BLENDERBOX"),
    ],
)
def test_model_key_agrees(diagnose_module, name, key):
    assert handover.model_key(name) == key
    assert diagnose_module.model_key(name) == key


def test_every_demo_model_has_its_architecture(catalogue):
    assert {slug: handover.expected_architecture(m.name) for slug, m in catalogue.items()} == {
        "h100": "sm_90",
        "h200": "sm_90",
        "b200": "sm_100",
        "mi300x": "gfx942",
    }
    assert handover.expected_architecture("Quantum 9000") is None


def test_expected_for_an_order_on_one_host_and_on_several(paid_order):
    single = paid_order()
    assert handover.expected_for_order(single) == {
        "model": "H100 80 GB",
        "cards": 2,
        "memory_gb_per_card": 80,
        "platform": "cuda",
        "host": "gpu-node-1",
    }

    split = paid_order(lots=3, hosts=(("gpu-a", 2, "10.0.0.1"), ("gpu-b", 2, "10.0.0.2")))
    assert handover.expected_for_order(split, "gpu-a")["cards"] == 2
    assert handover.expected_for_order(split, "gpu-b")["cards"] == 1
    assert handover.expected_for_order(split) == {
        "model": "H100 80 GB",
        "cards": 3,
        "memory_gb_per_card": 80,
        "platform": "cuda",
        "host": None,
    }
    with pytest.raises(handover.UnknownHost):
        handover.expected_for_order(split, "gpu-node-1")  # another order's host


def test_released_cards_are_no_longer_expected(paid_order):
    from django.utils import timezone

    order = paid_order(lots=3, hosts=(("gpu-a", 2, "10.0.0.1"), ("gpu-b", 2, "10.0.0.2")))
    CardAllocation.objects.filter(order=order, host__name="gpu-b").update(
        released_at=timezone.now()
    )
    assert handover.cards_per_host(order) == [{"host": "gpu-a", "ssh_host": "10.0.0.1", "cards": 2}]
    assert handover.expected_for_order(order)["host"] == "gpu-a"


def test_before_allocation_the_whole_order_is_expected(catalogue, customer, place_order):
    order = place_order(customer, catalogue["b200"], lots=2)
    assert handover.expected_for_order(order) == {
        "model": "B200 180 GB",
        "cards": 4,
        "memory_gb_per_card": 180,
        "platform": "cuda",
        "host": None,
    }


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("no_vendor_tool", "No NVIDIA or AMD tool answered on the machine"),
        ("fewer_cards", "Fewer cards than rented: 1 seen, 2 in the order."),
        ("other_model", "Another model: the machine reports “NVIDIA L4”, the order is for H100"),
        ("less_memory", "Less memory per card: 22.5 GB seen, 80 GB in the order."),
        ("other_platform", "the machine has ROCm (AMD) cards, the order is for CUDA (NVIDIA)."),
    ],
)
def test_each_problem_in_plain_words(code, text):
    words = handover.describe_problem(code, H100, seen("NVIDIA L4", 1, 22.5, "rocm"))
    assert text in words
