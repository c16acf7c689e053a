"""The pilot folder of an order as a zip: the guide's layout (section 3), ready to adapt.

Everything the customer runs is a shipped file under files/ and ../kernodeck/; this module only
picks the language's variant, fills in the order, sets the scripts' default language and packs
the lot under one top folder (gr-000123-pilot/). The same order and language give the same
bytes, so a second download is the same kit.
"""

import datetime
import io
import zipfile
from pathlib import Path

from django.utils import translation

from .config import pilot_config_bytes
from .requirements import requirements_rebuild

HERE = Path(__file__).resolve().parent
FILES = HERE / "files"
KERNODECK = HERE.parent / "kernodeck"
LANGUAGES = ("en", "it")
DOCUMENTS = tuple(f"DOC-{number:02d}.txt" for number in range(1, 13))
# Scripts whose messages default to the customer's language: the builder rewrites this line.
LANGUAGE_LINE = 'DEFAULT_LANGUAGE = "en"  # set by the kit builder'
# (path in the kit, source, sets the default language, executable)
SHIPPED = (
    ("check_pilot.py", FILES / "check_pilot.py", True, True),
    ("src/classify.py", FILES / "src" / "classify.py", False, True),
    ("src/inputs.py", FILES / "src" / "inputs.py", False, False),
    ("src/messages.py", FILES / "src" / "messages.py", True, False),
    ("src/rules.py", FILES / "src" / "rules.py", False, False),
    ("src/run_folder.py", FILES / "src" / "run_folder.py", False, False),
    ("kernodeck/train.py", KERNODECK / "train.py", True, True),
    ("kernodeck/resume_test.py", KERNODECK / "resume_test.py", True, True),
)
RUNS_KEEP = {
    "en": "One new subfolder per try goes here; a try refuses to reuse an existing one.\n",
    "it": "Qui va una sottocartella nuova per ogni prova; una prova rifiuta di riusarne una.\n",
}


COUNT_WORDS = {
    "en": {"lot": ("lot", "lots"), "card": ("card", "cards")},
    "it": {"lot": ("lotto", "lotti"), "card": ("scheda", "schede")},
}


def _count(number: int, singular: str, plural: str) -> str:
    return f"{number} {singular if number == 1 else plural}"


def normalise_language(language: str) -> str:
    """'it', 'it-it', 'en-gb' → 'it' or 'en'; anything else is a caller's mistake."""
    code = (language or "").strip().lower().replace("_", "-").split("-")[0]
    if code not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, not {language!r}")
    return code


def top_folder(order) -> str:
    return f"{order.reference.lower()}-pilot"


def _with_language(text: str, language: str, source: Path) -> str:
    if text.count(LANGUAGE_LINE) != 1:
        raise RuntimeError(f"{source} must hold the line {LANGUAGE_LINE!r} exactly once")
    return text.replace(LANGUAGE_LINE, f'DEFAULT_LANGUAGE = "{language}"  # set by the kit builder')


def _readme(template: Path, values: dict[str, str]) -> bytes:
    text = template.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    if "{{" in text:
        raise RuntimeError(f"{template} holds a placeholder the builder does not fill")
    return text.encode("utf-8")


def pilot_files(*, order, language: str) -> dict[str, bytes]:
    """{path inside the top folder: content}, in the order they are packed."""
    language = normalise_language(language)
    with translation.override(language):
        preparation = str(order.get_preparation_display())
    values = {
        "reference": order.reference,
        "folder": top_folder(order),
        "model": order.model_name,
        "platform": order.get_compute_platform_display(),
        "lots": _count(order.lots, *COUNT_WORDS[language]["lot"]),
        "cards": _count(order.total_cards, *COUNT_WORDS[language]["card"]),
        "duration": str(order.duration_days),
        "preparation": preparation,
    }
    files = {
        "README.md": _readme(FILES / f"README.{language}.md", values),
        "requirements-rebuild.txt": requirements_rebuild(order=order, language=language),
        "config/pilot.json": pilot_config_bytes(order=order),
    }
    for name in DOCUMENTS:
        files[f"data/pilot/{name}"] = (FILES / "data" / language / name).read_bytes()
    for path, source, sets_language, _executable in SHIPPED:
        text = source.read_text(encoding="utf-8")
        if sets_language:
            text = _with_language(text, language, source)
        files[path] = text.encode("utf-8")
    files["kernodeck/README.md"] = _readme(KERNODECK / f"README.{language}.md", values)
    files["runs/.keep"] = RUNS_KEEP[language].encode("utf-8")
    return files


def build_pilot_zip(*, order, language: str) -> bytes:
    """The order's pilot folder, zipped under gr-<reference>-pilot/ (bytes of the .zip)."""
    files = pilot_files(order=order, language=language)
    executables = {path for path, _source, _lang, executable in SHIPPED if executable}
    top = top_folder(order)
    stamp = _zip_time(order)
    folders = sorted(_folders_of(files))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for folder in ["", *folders]:
            entry = zipfile.ZipInfo(f"{top}/{folder}/" if folder else f"{top}/", stamp)
            entry.external_attr = (0o40755 << 16) | 0x10
            archive.writestr(entry, b"")
        for path, content in files.items():
            entry = zipfile.ZipInfo(f"{top}/{path}", stamp)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = (0o100755 if path in executables else 0o100644) << 16
            archive.writestr(entry, content)
    return buffer.getvalue()


def _folders_of(paths) -> set[str]:
    """Every folder above the files, so that unzip tools create them all (runs/ included)."""
    folders = set()
    for path in paths:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:depth]) for depth in range(1, len(parts) + 1))
    return folders


def _zip_time(order) -> tuple[int, int, int, int, int, int]:
    """The order's creation time (UTC): the kit's files carry one stable date."""
    created = order.created_at
    if created is None:
        return (1980, 1, 1, 0, 0, 0)
    created = created.astimezone(datetime.UTC)
    # Zip times start in 1980 and count seconds in twos.
    second = created.second - created.second % 2
    return (
        max(created.year, 1980),
        created.month,
        created.day,
        created.hour,
        created.minute,
        second,
    )
