"""What the customer downloads: one folder, fixed content, the order's expectations inside."""

import io
import json
import stat
import zipfile
from datetime import UTC, datetime

from pilot.kit.diagnostics import build_diagnostics_zip, extensions_named
from rental.models import Order, Preparation
from tests.states import order_to_active

from .conftest import DIAGNOSE_SOURCE, SCHEMA_PATH, TOKEN

URL = "https://rent.example/api/pilot/orders/7/reports/"


def build(order, language="en"):
    return build_diagnostics_zip(order=order, token=TOKEN, upload_url=URL, language=language)


def test_the_kit_is_one_folder_with_its_files_in_a_fixed_order(paid_order):
    order = paid_order()
    content = build(order)
    folder = f"gr-{order.pk:06d}-diagnostics/"

    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        assert archive.testzip() is None
        assert archive.namelist() == [
            folder,
            folder + "README.md",
            folder + "LEGGIMI.md",
            folder + "diagnose.py",
            folder + "extensions.txt",
            folder + "order.json",
            folder + "report.schema.json",
        ]
        assert archive.read(folder + "diagnose.py") == DIAGNOSE_SOURCE.read_bytes()
        assert archive.read(folder + "report.schema.json") == SCHEMA_PATH.read_bytes()
        mode = archive.getinfo(folder + "diagnose.py").external_attr >> 16
        assert stat.S_IMODE(mode) == 0o755
        # The token is in order.json only: readable by its owner alone once unzipped.
        assert stat.S_IMODE(archive.getinfo(folder + "order.json").external_attr >> 16) == 0o600
        readme = archive.read(folder + "README.md").decode()
        assert f"cd gr-{order.pk:06d}-diagnostics" in readme
        assert "import only: not proof of a working kernel" in readme
        assert (
            "Verifica l'interprete prima di reinstallare"
            in archive.read(folder + "LEGGIMI.md").decode()
        )
        document = json.loads(archive.read(folder + "order.json"))

    assert document == {
        "kit": "gpu-rental/diagnostics-kit",
        "kit_version": 1,
        "order": {"id": order.pk, "reference": order.reference},
        "model": "H100 80 GB",
        "vendor": "NVIDIA",
        "platform": "cuda",
        "memory_gb_per_card": 80,
        "cards_per_lot": 1,
        "lots": 2,
        "total_cards": 2,
        "hosts": [{"host": "gpu-node-1", "ssh_host": "10.0.0.7", "cards": 2}],
        "architecture": "sm_90",
        "preparation": "ubuntu",
        "custom_preparation": "",
        "language": "en",
        "upload": {"url": URL, "token": TOKEN, "expires_at": None},
    }


def test_the_same_order_and_token_give_the_same_bytes(paid_order):
    order = paid_order()
    assert build(order) == build(Order.objects.get(pk=order.pk))
    assert build(order) != build_diagnostics_zip(
        order=order, token=TOKEN + "x", upload_url=URL, language="en"
    )


def test_the_token_expires_with_the_rental(paid_order):
    order = paid_order()
    order_to_active(order, starts_at=datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    order.refresh_from_db()
    with zipfile.ZipFile(io.BytesIO(build(order))) as archive:
        document = json.loads(archive.read(f"gr-{order.pk:06d}-diagnostics/order.json"))
    assert document["upload"]["expires_at"] == "2026-11-08T09:00:00+00:00"


def test_an_mi300x_kit_expects_rocm_and_gfx942_and_speaks_italian(paid_order):
    order = paid_order(model="mi300x", lots=1, hosts=(("mi-node-1", 1, "10.0.0.9"),))
    with zipfile.ZipFile(io.BytesIO(build(order, language="it"))) as archive:
        folder = f"gr-{order.pk:06d}-diagnostics/"
        document = json.loads(archive.read(folder + "order.json"))
        extensions = archive.read(folder + "extensions.txt").decode()
    assert (document["platform"], document["architecture"], document["language"]) == (
        "rocm",
        "gfx942",
        "it",
    )
    assert extensions.startswith("# Le estensioni del progetto che diagnose.py verifica")
    # Nothing named: a template whose every line is a comment.
    assert all(line.startswith("#") for line in extensions.splitlines())
    assert "# flash-attn" in extensions.splitlines()


def test_an_unknown_language_falls_back_to_english(paid_order):
    order = paid_order()
    with zipfile.ZipFile(io.BytesIO(build(order, language="de-DE"))) as archive:
        document = json.loads(archive.read(f"gr-{order.pk:06d}-diagnostics/order.json"))
    assert document["language"] == "en"


def test_known_extensions_are_found_in_a_description_whatever_their_spelling():
    text = (
        "Need FLASH_ATTN 2.6, xformers, bitsandbytes==0.44, NVIDIA Apex, Triton, "
        "Transformer Engine, mamba-ssm and causal_conv1d; also DeepSpeed and vLLM."
    )
    assert extensions_named(text) == [
        "flash-attn",
        "xformers",
        "bitsandbytes",
        "apex",
        "triton",
        "deepspeed",
        "vllm",
        "transformer-engine",
        "mamba-ssm",
        "causal-conv1d",
    ]
    # Not inside another word.
    assert extensions_named("apexes of tritonal deepspeedy curves") == []


def test_a_custom_preparation_fills_extensions_txt(paid_order):
    order = paid_order(
        preparation=Preparation.CUSTOM, custom_preparation="bitsandbytes and apex, please"
    )
    with zipfile.ZipFile(io.BytesIO(build(order))) as archive:
        extensions = archive.read(f"gr-{order.pk:06d}-diagnostics/extensions.txt").decode()
    assert [line for line in extensions.splitlines() if not line.startswith("#")] == [
        "bitsandbytes",
        "apex",
    ]
