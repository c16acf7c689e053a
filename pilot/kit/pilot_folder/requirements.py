"""requirements-rebuild.txt, written for the order's compute platform.

The guide: "the official PyTorch selector distinguishes the system and the compute platform:
copying a command from another machine is not a compatibility check". So the file names the
wheel index of the order's platform (a CUDA build for NVIDIA cards, a ROCm build for MI300X)
and says where every line comes from. The index versions are the ones the current PyTorch
selector offers for Linux + pip; the file tells the customer to confirm them there.
"""

import re

PYTORCH_SELECTOR = "https://pytorch.org/get-started/locally/"
PYPI = "https://pypi.org/simple"
# (index URL, the build it holds). CUDA 12.8 is the first to compile for sm_100 (B200) and
# still covers sm_90 (H100, H200).
PYTORCH_INDEX = {
    "cuda": ("https://download.pytorch.org/whl/cu128", "CUDA 12.8"),
    "rocm": ("https://download.pytorch.org/whl/rocm6.4", "ROCm 6.4"),
}
# The architecture each card needs compiled in the build (the key token of the model's name).
ARCHITECTURES = {"H100": "sm_90", "H200": "sm_90", "B200": "sm_100", "MI300X": "gfx942"}

TEXT = {
    "en": {
        "head": "requirements-rebuild.txt: order {reference}, {model}, {platform}",
        "why": [
            "Rebuild the environment on the rented machine from this file, in a new virtual",
            "environment, not from a copy of another machine's environment. Every line says",
            "where its package comes from (its provenance); pin the versions your pilot",
            "qualified (pip freeze shows them) before the final volume.",
            "",
            "The pilot of this folder (src/, check_pilot.py, kernodeck/) needs only",
            "Python >= 3.8 and its standard library: nothing below is needed to run it.",
        ],
        "selector": [
            "The official PyTorch selector ({selector}) distinguishes the system",
            "(Linux, pip) and the compute platform ({build}): copying a command from another",
            "machine is not a compatibility check. Confirm this index there for the build",
            "of PyTorch you choose.",
        ],
        "arch": "The build must hold the architecture of this order's cards: {arch} ({model}).",
        "cuda": [
            "PyTorch for CUDA comes from the PyTorch CUDA wheel index ({build}),",
            "the rest from PyPI.",
        ],
        "rocm": [
            "PyTorch for ROCm comes from the PyTorch ROCm wheel index ({build}), the rest from",
            "PyPI. A CUDA wheel does not run on an AMD card: each extension of your project",
            "(flash-attn, xformers, bitsandbytes, apex...) needs a ROCm build of its own; write",
            "where each comes from, and check it with the diagnostics kit before the volume.",
        ],
        "torch": "torch    # from {index} ({build}); pin it: torch==<the version you qualified>",
        "yours": "Your application's own dependencies, one per line, each with its provenance:",
        "example": "e.g.  numpy==2.1.3    # PyPI",
        "custom": "What you asked to be installed (custom preparation of the order):",
    },
    "it": {
        "head": "requirements-rebuild.txt: ordine {reference}, {model}, {platform}",
        "why": [
            "Ricostruisci l'ambiente sulla macchina noleggiata da questo file, in un ambiente",
            "virtuale nuovo, non da una copia dell'ambiente di un'altra macchina. Ogni riga",
            "indica da dove viene il suo pacchetto (la provenienza); fissa le versioni",
            "qualificate dal tuo pilota (pip freeze le mostra) prima del volume finale.",
            "",
            "Il pilota di questa cartella (src/, check_pilot.py, kernodeck/) richiede solo",
            "Python >= 3.8 e la sua libreria standard: niente di quanto segue serve ad avviarlo.",
        ],
        "selector": [
            "Il selettore ufficiale PyTorch ({selector}) distingue sistema",
            "(Linux, pip) e piattaforma di calcolo ({build}): copiare un comando da un'altra",
            "macchina non costituisce una verifica di compatibilità. Conferma lì questo indice",
            "per la versione di PyTorch che scegli.",
        ],
        "arch": (
            "La build deve contenere l'architettura delle schede di questo ordine: "
            "{arch} ({model})."
        ),
        "cuda": [
            "PyTorch per CUDA proviene dall'indice dei pacchetti CUDA di PyTorch ({build}),",
            "il resto da PyPI.",
        ],
        "rocm": [
            "PyTorch per ROCm proviene dall'indice dei pacchetti ROCm di PyTorch ({build}), il",
            "resto da PyPI. Un pacchetto CUDA non funziona su una scheda AMD: ogni estensione",
            "del progetto (flash-attn, xformers, bitsandbytes, apex...) richiede una propria",
            "build ROCm; scrivi da dove viene ciascuna e controllala con il kit di diagnostica",
            "prima del volume.",
        ],
        "torch": "torch    # da {index} ({build}); fissala: torch==<la versione qualificata>",
        "yours": "Le dipendenze della tua applicazione, una per riga, ognuna con la provenienza:",
        "example": "es.  numpy==2.1.3    # PyPI",
        "custom": "Ciò che hai chiesto di installare (preparazione personalizzata dell'ordine):",
    },
}

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
MAX_CUSTOM_CHARS = 2000


def model_architecture(model_name: str) -> str | None:
    """The compiled architecture the order's cards need, from the model's key token."""
    for word in model_name.split():
        if any(char.isdigit() for char in word):
            return ARCHITECTURES.get(word.upper().replace("-", ""))
    return None


def _comment(lines) -> list[str]:
    return [("# " + line).rstrip() for line in lines]


def requirements_rebuild(*, order, language: str) -> bytes:
    text = TEXT[language]
    platform = order.compute_platform
    index, build = PYTORCH_INDEX[platform]
    values = {
        "reference": order.reference,
        "model": order.model_name,
        "platform": order.get_compute_platform_display(),
        "selector": PYTORCH_SELECTOR,
        "build": build,
        "index": index,
    }
    lines = _comment([text["head"].format(**values), ""])
    lines += _comment(text["why"]) + ["#"]
    lines += _comment(line.format(**values) for line in text["selector"])
    architecture = model_architecture(order.model_name)
    if architecture:
        lines += _comment([text["arch"].format(arch=architecture, model=order.model_name)])
    lines += ["#"] + _comment(line.format(**values) for line in text[platform])
    lines += ["", f"--index-url {index}", f"--extra-index-url {PYPI}", ""]
    lines += [text["torch"].format(**values), ""]
    lines += _comment([text["yours"], text["example"]])
    custom = CONTROL.sub(" ", order.custom_preparation or "").strip()[:MAX_CUSTOM_CHARS]
    if custom:
        lines += ["#"] + _comment([text["custom"]]) + _comment(custom.splitlines())
    return ("\n".join(lines) + "\n").encode("utf-8")
