from decimal import Decimal

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from rental.hosts.services import host_set_initial_state, host_set_state
from rental.models import (
    HOST_TRANSITIONS,
    ComputePlatform,
    GpuModel,
    Host,
    HostManagement,
    HostState,
    LotPrice,
)
from rental.money import usd

# Demo hosts point at local SSH servers on this machine (manage.py demo_hosts, started by
# `make run`), so the worker's readiness check has something real to talk to.
DEMO_SSH_HOST = "127.0.0.1"
DEMO_SSH_USER = "ubuntu"

# USD per card-hour on a 3-day lot, in line with late-2026 market rates. Longer leases are
# cheaper per day: 5% on 7 days, 15% on 30 days.
DISCOUNT_BY_DURATION = {3: Decimal("1.00"), 7: Decimal("0.95"), 30: Decimal("0.85")}

DEMO_MODELS = [
    {
        "slug": "h100-80gb",
        "name": "H100 80 GB",
        "vendor": "NVIDIA",
        "compute_platform": ComputePlatform.CUDA,
        "memory_gb_per_card": 80,
        "cards_per_lot": 1,
        "description": "Hopper SXM card for training and inference of mid-size models.",
        "usd_per_card_hour": Decimal("2.80"),
        "hosts": (("demo-h100-a", 8), ("demo-h100-b", 8)),
    },
    {
        "slug": "h200-141gb",
        "name": "H200 141 GB",
        "vendor": "NVIDIA",
        "compute_platform": ComputePlatform.CUDA,
        "memory_gb_per_card": 141,
        "cards_per_lot": 1,
        "description": "Hopper with HBM3e: more memory per card for large models and long context.",
        "usd_per_card_hour": Decimal("3.80"),
        "hosts": (("demo-h200-a", 8), ("demo-h200-b", 4)),
    },
    {
        "slug": "b200-180gb",
        "name": "B200 180 GB",
        "vendor": "NVIDIA",
        "compute_platform": ComputePlatform.CUDA,
        "memory_gb_per_card": 180,
        "cards_per_lot": 2,
        "description": "Blackwell, rented in pairs: one lot is two cards on the same host.",
        "usd_per_card_hour": Decimal("6.00"),
        "hosts": (("demo-b200-a", 8), ("demo-b200-b", 8)),
    },
    {
        "slug": "mi300x-192gb",
        "name": "MI300X 192 GB",
        "vendor": "AMD",
        "compute_platform": ComputePlatform.ROCM,
        "memory_gb_per_card": 192,
        "cards_per_lot": 1,
        "description": "CDNA 3 on ROCm: the most memory per card; check ROCm support first.",
        "usd_per_card_hour": Decimal("2.00"),
        "hosts": (("demo-mi300x-a", 8), ("demo-mi300x-b", 2)),
    },
]


DEMO_MODEL_FIELDS = (
    "name", "vendor", "compute_platform", "memory_gb_per_card", "cards_per_lot", "description",
    "display_order", "active",
)  # fmt: skip
# A reset also puts a demo host back to available, through its state machine.
HOST_FIELDS = ("gpu_model", "cards", "ssh_host", "ssh_port", "ssh_user", "management")


def demo_lot_price(
    *, usd_per_card_hour: Decimal, cards_per_lot: int, duration_days: int
) -> Decimal:
    hours = duration_days * 24
    return usd(usd_per_card_hour * DISCOUNT_BY_DURATION[duration_days] * cards_per_lot * hours)


class Command(BaseCommand):
    help = (
        "Load the demo GPU catalogue and its demo hosts. Models and hosts that already exist "
        "are left as operators edited them unless --reset is given."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset",
            action="store_true",
            help="overwrite prices of existing models and the demo hosts' settings",
        )

    @transaction.atomic
    def handle(self, *args, reset: bool = False, **options):
        # A handful of queries whatever the catalogue's size (read what exists, insert what is
        # missing in one statement per table, update the rest in one): the test suite loads
        # it for most of its tests.
        specs = {spec["slug"]: (position, spec) for position, spec in enumerate(DEMO_MODELS)}
        existing = {m.slug: m for m in GpuModel.objects.filter(slug__in=specs)}
        new_models, kept, rates, hosts = [], [], {}, {}
        for slug, (position, spec) in specs.items():
            spec = dict(spec)
            rates[slug] = spec.pop("usd_per_card_hour")
            hosts[slug] = spec.pop("hosts")
            fields = {**spec, "display_order": position, "active": True}
            if slug not in existing:
                new_models.append(GpuModel(**fields))
            elif reset:
                for name, value in fields.items():
                    setattr(existing[slug], name, value)
                kept.append(existing[slug])
        GpuModel.objects.bulk_create(new_models)
        if kept:
            GpuModel.objects.bulk_update(kept, [f for f in DEMO_MODEL_FIELDS])
        touched = new_models + kept  # models left as operators edited them are not touched
        self._demo_hosts({model: hosts[model.slug] for model in touched})
        self._prices({model: rates[model.slug] for model in touched})
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo catalogue ready: {GpuModel.objects.count()} GPU models "
                f"({len(new_models)} new{', prices and demo hosts reset' if reset else ''}); "
                f"{Host.objects.count()} hosts."
            )
        )

    def _demo_hosts(self, hosts_by_model: dict) -> None:
        wanted = {
            name: {
                "gpu_model": gpu_model,
                "cards": cards,
                "ssh_host": DEMO_SSH_HOST,
                "ssh_port": settings.DEMO_SSH_PORT,
                "ssh_user": DEMO_SSH_USER,
                # Prepared by hand until manage.py demo_hosts manages them (as root).
                "management": HostManagement.MANUAL,
            }
            for gpu_model, hosts in hosts_by_model.items()
            for name, cards in hosts
        }
        if not wanted:
            return
        existing = {host.name: host for host in Host.objects.filter(name__in=wanted)}
        for host in existing.values():
            for name in HOST_FIELDS:
                setattr(host, name, wanted[host.name][name])
        new = [Host(name=name, **fields) for name, fields in wanted.items() if name not in existing]
        for host in new:
            host_set_initial_state(host)  # prepared by hand: available at once
        Host.objects.bulk_create(new)
        if existing:
            Host.objects.bulk_update(list(existing.values()), list(HOST_FIELDS))
        for host in sorted(existing.values(), key=lambda host: host.pk):
            if HostState.AVAILABLE in HOST_TRANSITIONS[host.state]:
                host_set_state(
                    host_id=host.pk,
                    to_state=HostState.AVAILABLE,
                    actor=None,
                    reason="Demo host reset (load_demo_catalogue --reset).",
                )

    def _prices(self, rates: dict) -> None:
        if not rates:
            return
        existing = {
            (price.gpu_model_id, price.duration_days): price
            for price in LotPrice.objects.filter(gpu_model__in=list(rates))
        }
        new, changed = [], []
        for gpu_model, rate in rates.items():
            for duration_days in DISCOUNT_BY_DURATION:
                amount = demo_lot_price(
                    usd_per_card_hour=rate,
                    cards_per_lot=gpu_model.cards_per_lot,
                    duration_days=duration_days,
                )
                price = existing.get((gpu_model.pk, duration_days))
                if price is None:
                    new.append(
                        LotPrice(gpu_model=gpu_model, duration_days=duration_days, price_usd=amount)
                    )
                else:
                    price.price_usd = amount
                    changed.append(price)
        LotPrice.objects.bulk_create(new)
        if changed:
            LotPrice.objects.bulk_update(changed, ["price_usd"])
