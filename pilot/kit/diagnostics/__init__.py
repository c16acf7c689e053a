"""The diagnostics kit of one order: diagnose.py with what it must compare the machine against.

`build_diagnostics_zip` puts the standalone script (files/diagnose.py), its documentation and
schema, the order's expectations (order.json) and the extensions to check (extensions.txt) into
one folder of a zip. The same order and token give the same bytes: fixed file order, fixed
timestamps, no creation time inside.
"""

import io
import json
import re
import zipfile
from pathlib import Path

from rental.models import Order, Preparation

from ...handover import cards_per_host, expected_architecture

FILES = Path(__file__).resolve().parent / "files"
KIT_NAME = "gpu-rental/diagnostics-kit"
KIT_VERSION = 1
LANGUAGES = ("it", "en")
ZIP_TIME = (2026, 1, 1, 0, 0, 0)
README_EXAMPLE_FOLDER = "gr-000123-diagnostics"

# Extensions the kit knows by name in a custom preparation's description: the line written to
# extensions.txt and the pattern that finds it (case-insensitive, not inside another word).
KNOWN_EXTENSIONS: tuple[tuple[str, str], ...] = (
    ("flash-attn", r"flash[-_ ]?(?:attn|attention)"),
    ("xformers", r"xformers"),
    ("bitsandbytes", r"bitsandbytes"),
    ("apex", r"(?:nvidia[-_ ])?apex"),
    ("triton", r"triton"),
    ("deepspeed", r"deepspeed"),
    ("vllm", r"vllm"),
    ("transformer-engine", r"transformer[-_ ]?engine"),
    ("mamba-ssm", r"mamba[-_ ]?ssm"),
    ("causal-conv1d", r"causal[-_ ]?conv1d"),
)

_HEADER = {
    "en": (
        "# The project's extensions that diagnose.py checks (step 5), one per line; # starts a\n"
        "# comment. flash-attn, xformers, bitsandbytes, apex and triton get one real operation;\n"
        "# any other name is only imported: not proof of a working kernel.\n"
    ),
    "it": (
        "# Le estensioni del progetto che diagnose.py verifica (passaggio 5), una per riga; #\n"
        "# inizia un commento. flash-attn, xformers, bitsandbytes, apex e triton ricevono una\n"
        "# vera operazione; ogni altro nome viene solo importato: non prova che un kernel\n"
        "# funzioni.\n"
    ),
}
_FOUND = {
    "en": "# Found in the description of your custom preparation:\n",
    "it": "# Trovate nella descrizione della tua preparazione personalizzata:\n",
}
_TEMPLATE = {
    "en": "# Nothing listed yet: remove the # in front of the ones your project uses.\n",
    "it": "# Ancora niente in elenco: togli il # davanti a quelle che usa il tuo progetto.\n",
}


def kit_folder(order: Order) -> str:
    return f"{order.reference.lower()}-diagnostics"


def extensions_named(description: str) -> list[str]:
    """The known extensions a preparation's description names, in the table's order."""
    return [
        name
        for name, pattern in KNOWN_EXTENSIONS
        if re.search(rf"(?<![a-z0-9]){pattern}(?![a-z0-9])", description, re.IGNORECASE)
    ]


def extensions_text(order: Order, language: str) -> str:
    found = []
    if order.preparation == Preparation.CUSTOM:
        found = extensions_named(order.custom_preparation)
    if found:
        return _HEADER[language] + _FOUND[language] + "".join(f"{name}\n" for name in found)
    examples = "".join(f"# {name}\n" for name, _pattern in KNOWN_EXTENSIONS)
    return _HEADER[language] + _TEMPLATE[language] + examples


def order_document(*, order: Order, token: str, upload_url: str, language: str) -> dict:
    """order.json: everything diagnose.py compares the machine against, and where to upload."""
    return {
        "kit": KIT_NAME,
        "kit_version": KIT_VERSION,
        "order": {"id": order.pk, "reference": order.reference},
        "model": order.model_name,
        "vendor": order.vendor,
        "platform": order.compute_platform,
        "memory_gb_per_card": order.memory_gb_per_card,
        "cards_per_lot": order.cards_per_lot,
        "lots": order.lots,
        "total_cards": order.total_cards,
        # Empty before the cards are allocated: diagnose.py then expects the order's total.
        "hosts": cards_per_host(order),
        "architecture": expected_architecture(order.model_name),
        "preparation": order.preparation,
        "custom_preparation": order.custom_preparation,
        "language": language,
        "upload": {
            "url": upload_url,
            "token": token,
            # The token expires at the rental's end (unknown until the order is active).
            "expires_at": order.ends_at.isoformat() if order.ends_at else None,
        },
    }


def _language(language: str) -> str:
    short = (language or "").lower()[:2]
    return short if short in LANGUAGES else "en"


def _entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
    folder = name.endswith("/")
    info.compress_type = zipfile.ZIP_STORED if folder else zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so that unzip applies the mode below
    info.external_attr = (mode << 16) | (0x10 if folder else 0)  # 0x10: the MS-DOS folder flag
    return info


def build_diagnostics_zip(*, order: Order, token: str, upload_url: str, language: str) -> bytes:
    """The kit as zip bytes: one top folder `gr-NNNNNN-diagnostics/` holding diagnose.py,
    order.json, extensions.txt, README.md, LEGGIMI.md and report.schema.json."""
    if not token or not upload_url:
        raise ValueError("the kit needs an upload token and an upload URL")
    language = _language(language)
    folder = kit_folder(order)
    document = order_document(order=order, token=token, upload_url=upload_url, language=language)
    readme = (FILES / "README.md").read_text(encoding="utf-8")
    leggimi = (FILES / "LEGGIMI.md").read_text(encoding="utf-8")
    contents = [
        ("README.md", readme.replace(README_EXAMPLE_FOLDER, folder), 0o644),
        ("LEGGIMI.md", leggimi.replace(README_EXAMPLE_FOLDER, folder), 0o644),
        ("diagnose.py", (FILES / "diagnose.py").read_text(encoding="utf-8"), 0o755),
        ("extensions.txt", extensions_text(order, language), 0o644),
        ("order.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n", 0o600),
        ("report.schema.json", (FILES / "report.schema.json").read_text(encoding="utf-8"), 0o644),
    ]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(_entry(f"{folder}/", 0o40755), b"")
        for name, text, mode in contents:
            archive.writestr(_entry(f"{folder}/{name}", 0o100000 | mode), text.encode("utf-8"))
    return buffer.getvalue()
