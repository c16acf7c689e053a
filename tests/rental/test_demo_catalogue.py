from decimal import Decimal
from io import StringIO

from django.conf import settings
from django.core.management import call_command

from rental.models import ComputePlatform, GpuModel, Host, HostState, LotPrice
from tests.conftest import lots_available
from tests.states import hosts_set_state


def per_card_hour(model: GpuModel, days: int) -> Decimal:
    price = LotPrice.objects.get(gpu_model=model, duration_days=days).price_usd
    return price / (model.cards_per_lot * days * 24)


def test_demo_catalogue_has_the_four_models_at_market_prices(catalogue):
    expected = {
        "h100": ("2.8", 80, 1),
        "h200": ("3.8", 141, 1),
        "b200": ("6.0", 180, 2),
        "mi300x": ("2.0", 192, 1),
    }
    for key, (rate, memory, cards) in expected.items():
        model = catalogue[key]
        assert model.memory_gb_per_card == memory
        assert model.cards_per_lot == cards
        assert abs(per_card_hour(model, 3) - Decimal(rate)) < Decimal("0.01")
        # 7-day lots about 5% and 30-day lots about 15% cheaper per day than 3-day lots.
        assert abs(per_card_hour(model, 7) / per_card_hour(model, 3) - Decimal("0.95")) < Decimal(
            "0.001"
        )
        assert abs(per_card_hour(model, 30) / per_card_hour(model, 3) - Decimal("0.85")) < Decimal(
            "0.001"
        )
    assert catalogue["mi300x"].compute_platform == ComputePlatform.ROCM
    assert catalogue["h100"].compute_platform == ComputePlatform.CUDA


def test_b200_lot_price_covers_both_cards(catalogue):
    price = LotPrice.objects.get(gpu_model=catalogue["b200"], duration_days=3).price_usd
    assert price == Decimal("864.00")  # 6.00 USD × 2 cards × 72 h


def test_reloading_keeps_operator_edits_unless_reset(catalogue):
    h100 = catalogue["h100"]
    LotPrice.objects.filter(gpu_model=h100, duration_days=7).update(price_usd=Decimal("400.00"))
    Host.objects.filter(name="demo-h100-a").update(cards=3)
    hosts_set_state(Host.objects.filter(name="demo-h100-a"), HostState.MAINTENANCE)

    call_command("load_demo_catalogue", stdout=StringIO())
    assert LotPrice.objects.get(gpu_model=h100, duration_days=7).price_usd == Decimal("400.00")
    assert Host.objects.filter(name="demo-h100-a", cards=3, state="maintenance").exists()

    call_command("load_demo_catalogue", "--reset", stdout=StringIO())
    assert LotPrice.objects.get(gpu_model=h100, duration_days=7).price_usd == Decimal("446.88")
    assert GpuModel.objects.count() == 4
    assert Host.objects.filter(name="demo-h100-a", cards=8, state="available").exists()


def test_demo_hosts_give_each_model_its_stock_and_point_at_the_local_ssh_server(catalogue):
    assert {slug: lots_available(model) for slug, model in catalogue.items()} == {
        "h100": 16,
        "h200": 12,
        "b200": 8,  # 16 cards, two per lot
        "mi300x": 10,
    }
    for host in Host.objects.all():
        assert (host.ssh_host, host.ssh_port) == ("127.0.0.1", settings.DEMO_SSH_PORT)
