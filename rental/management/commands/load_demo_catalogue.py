from decimal import Decimal

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from rental.models import ComputePlatform, GpuModel, Host, HostManagement, HostState, LotPrice
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
        created_count = 0
        for position, spec in enumerate(DEMO_MODELS):
            spec = dict(spec)
            rate = spec.pop("usd_per_card_hour")
            hosts = spec.pop("hosts")
            fields = {**spec, "display_order": position, "active": True}
            gpu_model, created = GpuModel.objects.get_or_create(slug=spec["slug"], defaults=fields)
            if not created and not reset:
                continue
            self._demo_hosts(gpu_model, hosts)
            if reset:
                for name, value in fields.items():
                    setattr(gpu_model, name, value)
                gpu_model.save()
            created_count += created
            for duration_days in DISCOUNT_BY_DURATION:
                LotPrice.objects.update_or_create(
                    gpu_model=gpu_model,
                    duration_days=duration_days,
                    defaults={
                        "price_usd": demo_lot_price(
                            usd_per_card_hour=rate,
                            cards_per_lot=gpu_model.cards_per_lot,
                            duration_days=duration_days,
                        )
                    },
                )
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo catalogue ready: {GpuModel.objects.count()} GPU models "
                f"({created_count} new{', prices and demo hosts reset' if reset else ''}); "
                f"{Host.objects.count()} hosts."
            )
        )

    def _demo_hosts(self, gpu_model: GpuModel, hosts) -> None:
        for name, cards in hosts:
            Host.objects.update_or_create(
                name=name,
                defaults={
                    "gpu_model": gpu_model,
                    "cards": cards,
                    "ssh_host": DEMO_SSH_HOST,
                    "ssh_port": settings.DEMO_SSH_PORT,
                    "ssh_user": DEMO_SSH_USER,
                    # Prepared by hand until manage.py demo_hosts manages them (as root).
                    "management": HostManagement.MANUAL,
                    "state": HostState.AVAILABLE,
                },
            )
