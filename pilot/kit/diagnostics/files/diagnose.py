#!/usr/bin/env python3
"""Diagnostics for a rented GPU machine: check the launch path before the final volume.

Runs on the rented host with the Python you mean to use (standard library only, Python >= 3.8)
and checks, in this order, each step only after the previous one passed:

  1. interpreter  the interpreter really used and the variables that change what runs
  2. driver       the vendor tool's cards (nvidia-smi, amd-smi, rocm-smi) against the order
  3. torch        PyTorch's import, its platform and compiled architectures against the cards
  4. compute      a matrix product on every card checked against the CPU, and an allocation
  5. extensions   the project's extensions from extensions.txt: a real operation where known
  6. peak_memory  optional: the peak memory per card of your own task (--task "<command>")

It writes a readable summary and, with --json PATH, the versioned report described in
report.schema.json; --upload sends that report to the order page. Exit status: 0 when no step
failed, 1 when one did, 2 for bad command-line usage or a broken kit, 3 when --upload was asked
for and the upload failed (the summary still says how the diagnosis went).

PyTorch and the extensions are imported in child processes of this script (`--probe`), so an
import that crashes or hangs becomes a message in the report instead of ending the diagnosis.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TOOL_VERSION = "1.0.0"
SCHEMA = "gpu-rental/diagnostics-report"
SCHEMA_VERSION = 1
STEPS = ("interpreter", "driver", "torch", "compute", "extensions", "peak_memory")
PROBLEMS = ("no_vendor_tool", "fewer_cards", "other_model", "less_memory", "other_platform")

# Length limits of the report (the site refuses longer strings rather than cutting them, so
# this script shortens its own text first, visibly).
DETAIL_MAX = 4000
ADVICE_MAX = 2000
DATA_STRING_MAX = 1000
DATA_LIST_MAX = 256
MEMORY_TOLERANCE = 0.9
MATMUL_SIZE = 512
MATMUL_RTOL = 1e-3
MATMUL_ATOL = 1e-3
SAMPLE_SECONDS = 0.5
PROBE_MARKER = "@@gr-diagnose-probe@@"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UPLOAD_FAILED = 0, 1, 2, 3

# ---------------------------------------------------------------------------------- messages

MESSAGES = {
    "title": {
        "en": "Diagnostics for order {reference}: {model} x {cards} ({platform})",
        "it": "Diagnostica dell'ordine {reference}: {model} x {cards} ({platform})",
    },
    "step.interpreter": {"en": "Interpreter and environment", "it": "Interprete e ambiente"},
    "step.driver": {"en": "Driver and cards", "it": "Driver e schede"},
    "step.torch": {"en": "PyTorch import", "it": "Import di PyTorch"},
    "step.compute": {"en": "Real compute on every card", "it": "Calcolo reale su ogni scheda"},
    "step.extensions": {"en": "Project extensions", "it": "Estensioni del progetto"},
    "step.peak_memory": {
        "en": "Peak memory of a representative task",
        "it": "Picco di memoria di un compito rappresentativo",
    },
    "skipped.after": {
        "en": "Not run: step {number} ({step}) failed.",
        "it": "Non eseguito: il passaggio {number} ({step}) non è riuscito.",
    },
    "skipped.no_task": {
        "en": "Not run: no --task given. If you don't know the peak yet, keep it as a goal of "
        'the pilot: run diagnose.py --task "<your pilot command>".',
        "it": "Non eseguito: nessun --task indicato. Se non conosci ancora il picco, mantieni "
        'questo punto come obiettivo del pilota: esegui diagnose.py --task "<il comando del '
        'tuo pilota>".',
    },
    # advice, one per step, from the customer guide (section 5)
    "advice.interpreter": {
        "en": "Check the interpreter before reinstalling: run diagnose.py with the python of the "
        "environment you prepared (activate it, or call it by its full path), and unset the "
        "variables you did not set on purpose. Change one factor at a time.",
        "it": "Verifica l'interprete prima di reinstallare: avvia diagnose.py con il python "
        "dell'ambiente che hai preparato (attivalo o chiamalo con il percorso completo) e "
        "rimuovi le variabili che non hai impostato di proposito. Cambia un fattore alla volta.",
    },
    "advice.driver": {
        "en": "Do not work around a machine that differs from the order: upload this report "
        "(diagnose.py --upload) or attach it on the order page, so that the operators correct "
        "the handover. If the tool is missing, check the paths (PATH, /usr/bin/nvidia-smi, "
        "/opt/rocm/bin) before reinstalling a driver.",
        "it": "Non aggirare una macchina diversa dall'ordine: carica questo report "
        "(diagnose.py --upload) o allegalo nella pagina dell'ordine, così gli operatori "
        "correggono la consegna. Se lo strumento manca, verifica i percorsi (PATH, "
        "/usr/bin/nvidia-smi, /opt/rocm/bin) prima di reinstallare un driver.",
    },
    "advice.torch": {
        "en": "Check the interpreter before reinstalling: the python that runs this script must "
        "be the one where you installed PyTorch. Then install the build for this machine's "
        "platform from PyTorch's official selector (CUDA or ROCm): copying a command from "
        "another machine is not a compatibility check. Change one factor at a time.",
        "it": "Verifica l'interprete prima di reinstallare: il python che esegue questo script "
        "deve essere quello in cui hai installato PyTorch. Poi installa la build per la "
        "piattaforma di questa macchina dal selettore ufficiale di PyTorch (CUDA o ROCm): "
        "copiare un comando da un'altra macchina non è una verifica di compatibilità. Cambia "
        "un fattore alla volta.",
    },
    "advice.compute": {
        "en": "A successful import does not prove a GPU computation. Note the first error and "
        "change one factor at a time: check what else uses the cards (nvidia-smi, amd-smi), "
        "then run again; when memory is short, check the input size before raising the batch.",
        "it": "Un import riuscito non dimostra un calcolo GPU. Annota il primo errore e cambia "
        "un fattore alla volta: verifica che cos'altro usa le schede (nvidia-smi, amd-smi), "
        "poi riprova; se la memoria non basta, verifica la dimensione degli input prima di "
        "aumentare il batch.",
    },
    "advice.extensions": {
        "en": "A simple computation that works does not validate every extension. Check the "
        "paths before copying again: the extension must be built for this PyTorch and this "
        "platform, and LD_LIBRARY_PATH must not point at another toolkit. Reinstall one "
        "extension at a time and run again.",
        "it": "Un calcolo semplice riuscito non convalida tutte le estensioni. Verifica i "
        "percorsi prima di ricopiare: l'estensione deve essere compilata per questo PyTorch e "
        "questa piattaforma, e LD_LIBRARY_PATH non deve puntare a un altro toolkit. Reinstalla "
        "un'estensione alla volta e riprova.",
    },
    "advice.peak_memory": {
        "en": "Check the input size before raising the batch, and change one factor at a time. "
        "If the task runs long, monitor it separately from the interactive connection that "
        "started it (tmux or screen, or nohup with a log file, and --json to keep the report).",
        "it": "Verifica la dimensione degli input prima di aumentare il batch e cambia un "
        "fattore alla volta. Se il compito dura a lungo, organizza il suo monitoraggio "
        "separatamente dalla connessione interattiva che lo ha avviato (tmux o screen, oppure "
        "nohup con un file di log, e --json per conservare il report).",
    },
    # step 1
    "interp.python": {
        "en": "Interpreter: {executable} (Python {version})",
        "it": "Interprete: {executable} (Python {version})",
    },
    "interp.venv": {
        "en": "Virtual environment: {prefix}",
        "it": "Ambiente virtuale: {prefix}",
    },
    "interp.conda": {"en": "Conda environment: {name}", "it": "Ambiente conda: {name}"},
    "interp.no_env": {
        "en": "No virtual or conda environment: the system Python.",
        "it": "Nessun ambiente virtuale o conda: il Python di sistema.",
    },
    "interp.path_same": {
        "en": "`python` on PATH is this interpreter.",
        "it": "Il `python` nel PATH è questo interprete.",
    },
    "interp.path_other": {
        "en": "`python` on PATH is another interpreter: {path} ({prefix}). A command typed as "
        "`python ...` does not run in this environment.",
        "it": "Il `python` nel PATH è un altro interprete: {path} ({prefix}). Un comando "
        "scritto `python ...` non gira in questo ambiente.",
    },
    "interp.path_none": {
        "en": "No `python` on PATH: call interpreters by their full path.",
        "it": "Nessun `python` nel PATH: chiama gli interpreti con il percorso completo.",
    },
    "interp.var": {"en": "{name}={value}", "it": "{name}={value}"},
    "interp.var_unset": {"en": "{name} is not set", "it": "{name} non è impostata"},
    "interp.empty_visible": {
        "en": "{name} is set but empty: no card is visible to the programs started here.",
        "it": "{name} è impostata ma vuota: nessuna scheda è visibile ai programmi avviati qui.",
    },
    "interp.hsa_override": {
        "en": "HSA_OVERRIDE_GFX_VERSION={value} is set on an MI300X: it makes ROCm treat the "
        "card as another architecture, while the MI300X (gfx942) is supported as it is. "
        "Unset it (unset HSA_OVERRIDE_GFX_VERSION) and run again.",
        "it": "HSA_OVERRIDE_GFX_VERSION={value} è impostata su una MI300X: fa trattare la scheda "
        "a ROCm come un'altra architettura, mentre la MI300X (gfx942) è supportata così com'è. "
        "Rimuovila (unset HSA_OVERRIDE_GFX_VERSION) e riprova.",
    },
    "interp.too_old": {
        "en": "Python {version} is older than 3.8, which this kit needs.",
        "it": "Python {version} è più vecchio della 3.8 richiesta da questo kit.",
    },
    # step 2
    "driver.no_tool": {
        "en": "No NVIDIA (nvidia-smi) or AMD (amd-smi, rocm-smi) tool was found on PATH: the "
        "driver is missing or PATH does not include it.",
        "it": "Nessuno strumento NVIDIA (nvidia-smi) o AMD (amd-smi, rocm-smi) trovato nel "
        "PATH: il driver manca oppure il PATH non lo include.",
    },
    "driver.tool_failed": {
        "en": "{tool} did not answer: {error}",
        "it": "{tool} non ha risposto: {error}",
    },
    "driver.seen": {
        "en": "{tool} (driver {driver}): {count} card(s): {cards}",
        "it": "{tool} (driver {driver}): {count} scheda/e: {cards}",
    },
    "driver.card": {
        "en": "#{index} {name}, {memory} GB",
        "it": "#{index} {name}, {memory} GB",
    },
    "driver.expected_host": {
        "en": "Expected on host {host}: {cards} x {model}, {memory} GB per card ({platform}).",
        "it": "Previste sull'host {host}: {cards} x {model}, {memory} GB per scheda ({platform}).",
    },
    "driver.expected_unallocated": {
        "en": "No cards were allocated to this order when the kit was made: compared with the "
        "order's {cards} card(s) in total. Download the kit again once the order is active.",
        "it": "Nessuna scheda era assegnata all'ordine quando il kit è stato creato: confronto "
        "con le {cards} schede dell'ordine in totale. Scarica di nuovo il kit quando l'ordine "
        "è attivo.",
    },
    "driver.matches": {
        "en": "The cards match the order.",
        "it": "Le schede corrispondono all'ordine.",
    },
    "driver.more_cards": {
        "en": "This host shows {seen} cards, {expected} of them rented by this order: use only "
        "yours (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES as the access details say).",
        "it": "Questo host mostra {seen} schede, {expected} delle quali noleggiate con questo "
        "ordine: usa solo le tue (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES come indicato "
        "negli accessi).",
    },
    "driver.arch_other": {
        "en": "Card #{index} reports architecture {seen}, the order's model has {expected}.",
        "it": "La scheda #{index} riporta l'architettura {seen}, il modello dell'ordine ha "
        "{expected}.",
    },
    "driver.ambiguous": {
        "en": "This order has cards on {count} hosts ({hosts}) and this machine ({local}) "
        "matches {matched}: run again with --host NAME.",
        "it": "Questo ordine ha schede su {count} host ({hosts}) e questa macchina ({local}) "
        "corrisponde a {matched}: riprova con --host NOME.",
    },
    "driver.matched_none": {"en": "none of them", "it": "nessuno"},
    "problem.no_vendor_tool": {
        "en": "The cards could not be compared with the order.",
        "it": "Non è stato possibile confrontare le schede con l'ordine.",
    },
    "problem.fewer_cards": {
        "en": "Fewer cards than rented: {seen} seen on this host, {expected} in the order.",
        "it": "Meno schede di quelle noleggiate (su questo host: {seen}, nell'ordine: {expected}).",
    },
    "problem.other_model": {
        "en": "Another model: the card reports \u201c{seen}\u201d, the order is for {expected}.",
        "it": "Un altro modello: la scheda riporta \u00ab{seen}\u00bb, l'ordine è per {expected}.",
    },
    "problem.less_memory": {
        "en": "Less memory per card: {seen} GB seen, {expected} GB in the order.",
        "it": "Meno memoria per scheda: {seen} GB visibili, {expected} GB nell'ordine.",
    },
    "problem.other_platform": {
        "en": "Another platform: the machine has {seen} cards, the order is for {expected}.",
        "it": "Un'altra piattaforma: la macchina ha schede {seen}, l'ordine è per {expected}.",
    },
    # step 3
    "torch.missing": {
        "en": "PyTorch cannot be imported by {python}: {error}",
        "it": "PyTorch non è importabile da {python}: {error}",
    },
    "torch.import_failed": {
        "en": "import torch failed in {python}: {error}",
        "it": "import torch non è riuscito in {python}: {error}",
    },
    "torch.crashed": {
        "en": "The child process that imports PyTorch ended without an answer ({how}). Last "
        "output: {tail}",
        "it": "Il processo figlio che importa PyTorch è terminato senza risposta ({how}). Ultimo "
        "output: {tail}",
    },
    "torch.version": {
        "en": "PyTorch {version} (CUDA {cuda}, HIP {hip}) from {path}",
        "it": "PyTorch {version} (CUDA {cuda}, HIP {hip}) da {path}",
    },
    "torch.arch_list": {
        "en": "Compiled architectures: {archs}",
        "it": "Architetture compilate: {archs}",
    },
    "torch.cpu_only": {
        "en": "This PyTorch is a CPU-only build: it cannot use the {platform} cards.",
        "it": "Questo PyTorch è una build solo CPU: non può usare le schede {platform}.",
    },
    "torch.wrong_platform": {
        "en": "This PyTorch is built for {built}, the cards need {needed}.",
        "it": "Questo PyTorch è compilato per {built}, le schede richiedono {needed}.",
    },
    "torch.unavailable": {
        "en": "torch.cuda.is_available() is False: PyTorch does not reach the driver "
        "({driver}). {error}",
        "it": "torch.cuda.is_available() è False: PyTorch non raggiunge il driver ({driver}). "
        "{error}",
    },
    "torch.fewer_devices": {
        "en": "PyTorch sees {seen} card(s), this host has {expected} for the order.{hint}",
        "it": "PyTorch vede {seen} scheda/e, questo host ne ha {expected} per l'ordine.{hint}",
    },
    "torch.more_devices": {
        "en": "PyTorch sees {seen} cards, this order has {expected} on this host: set "
        "CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES on ROCm) to your cards as the access details "
        "say, so that the next steps use only them, and run again.",
        "it": "PyTorch vede {seen} schede, questo ordine ne ha {expected} su questo host: imposta "
        "CUDA_VISIBLE_DEVICES (HIP_VISIBLE_DEVICES su ROCm) sulle tue schede come indicato negli "
        "accessi, così i passaggi successivi usano solo quelle, e riprova.",
    },
    "torch.visible_hint": {
        "en": " {name}={value} limits the cards visible to PyTorch.",
        "it": " {name}={value} limita le schede visibili a PyTorch.",
    },
    "torch.arch_missing": {
        "en": "Card #{index} ({name}) is {arch}, which this PyTorch build does not include: its "
        "kernels would fail with \u201cno kernel image is available for execution on the "
        "device\u201d. Install a build that lists {arch}.",
        "it": "La scheda #{index} ({name}) è {arch}, che questa build di PyTorch non include: i "
        "suoi kernel fallirebbero con \u00abno kernel image is available for execution on the "
        "device\u00bb. Installa una build che elenca {arch}.",
    },
    "torch.arch_ok": {
        "en": "Card #{index} ({name}): {arch}, {how}.",
        "it": "Scheda #{index} ({name}): {arch}, {how}.",
    },
    "torch.arch_native": {"en": "compiled for it", "it": "compilata per essa"},
    "torch.arch_ptx": {
        "en": "only through PTX compiled at run time ({ptx}): the first start is slower",
        "it": "solo tramite PTX compilato all'avvio ({ptx}): il primo avvio è più lento",
    },
    # step 4
    "compute.card_ok": {
        "en": "Card #{index}: {size}x{size} matrix product equal to the CPU's (max difference "
        "{diff:.2e}, tolerance rtol={rtol}, atol={atol}); {alloc} GiB allocated and written "
        "({share:.0%} of {total} GiB).",
        "it": "Scheda #{index}: prodotto di matrici {size}x{size} uguale a quello della CPU "
        "(differenza massima {diff:.2e}, tolleranza rtol={rtol}, atol={atol}); {alloc} GiB "
        "allocati e scritti ({share:.0%} di {total} GiB).",
    },
    "compute.card_wrong": {
        "en": "Card #{index}: the {size}x{size} matrix product differs from the CPU's (max "
        "difference {diff:.2e}, tolerance rtol={rtol}, atol={atol}).",
        "it": "Scheda #{index}: il prodotto di matrici {size}x{size} differisce da quello della "
        "CPU (differenza massima {diff:.2e}, tolleranza rtol={rtol}, atol={atol}).",
    },
    "compute.card_error": {
        "en": "Card #{index}: {what} failed: {error}",
        "it": "Scheda #{index}: {what} non è riuscito: {error}",
    },
    "compute.what_matmul": {"en": "the matrix product", "it": "il prodotto di matrici"},
    "compute.what_alloc": {
        "en": "allocating {alloc} GiB ({share:.0%} of the card, {free} GiB free)",
        "it": "l'allocazione di {alloc} GiB ({share:.0%} della scheda, {free} GiB liberi)",
    },
    "compute.no_cards": {
        "en": "PyTorch sees no card: nothing could be computed.",
        "it": "PyTorch non vede alcuna scheda: non è stato possibile calcolare nulla.",
    },
    "compute.crashed": {
        "en": "The compute check ended without an answer ({how}). Last output: {tail}",
        "it": "La verifica di calcolo è terminata senza risposta ({how}). Ultimo output: {tail}",
    },
    # step 5
    "ext.none": {
        "en": "No extensions listed in extensions.txt: nothing to check.",
        "it": "Nessuna estensione elencata in extensions.txt: niente da verificare.",
    },
    "ext.no_file": {
        "en": "No extensions.txt next to diagnose.py: nothing to check.",
        "it": "Nessun extensions.txt accanto a diagnose.py: niente da verificare.",
    },
    "ext.kernel_ok": {
        "en": "{name} {version}: {operation} on card #0 gave the expected result.",
        "it": "{name} {version}: {operation} sulla scheda #0 ha dato il risultato atteso.",
    },
    "ext.import_ok": {
        "en": "{name} {version}: import only: not proof of a working kernel.",
        "it": "{name} {version}: solo import: non prova che un kernel funzioni.",
    },
    "ext.failed": {
        "en": "{name}: {error}",
        "it": "{name}: {error}",
    },
    "ext.wrong": {
        "en": "{name}: {operation} gave a wrong result (max difference {diff:.2e}).",
        "it": "{name}: {operation} ha dato un risultato errato (differenza massima {diff:.2e}).",
    },
    "ext.crashed": {
        "en": "{name}: the check ended without an answer ({how}). Last output: {tail}",
        "it": "{name}: la verifica è terminata senza risposta ({how}). Ultimo output: {tail}",
    },
    # step 6
    "peak.result": {
        "en": "Task ran {seconds:.0f} s, exit status {status}, {samples} samples. Peak memory "
        "per card: {cards}",
        "it": "Il compito è durato {seconds:.0f} s, stato di uscita {status}, {samples} "
        "campioni. Picco di memoria per scheda: {cards}",
    },
    "peak.card": {
        "en": "#{index} {peak} GiB of {total} GiB (before the task: {base} GiB)",
        "it": "#{index} {peak} GiB di {total} GiB (prima del compito: {base} GiB)",
    },
    "peak.task_failed": {
        "en": "The task ended with exit status {status}: the peak above is that of a failed run.",
        "it": "Il compito è terminato con stato di uscita {status}: il picco qui sopra è quello "
        "di un'esecuzione non riuscita.",
    },
    "peak.no_samples": {
        "en": "Memory could not be sampled with {tool}: {error}",
        "it": "Non è stato possibile campionare la memoria con {tool}: {error}",
    },
    "peak.interrupted": {
        "en": "Interrupted: the task was stopped before it ended.",
        "it": "Interrotto: il compito è stato fermato prima della fine.",
    },
    # summary, report, upload
    "summary.reached": {
        "en": "Step reached: {number}. {step}",
        "it": "Passaggio raggiunto: {number}. {step}",
    },
    "summary.first_error": {"en": "First error: {message}", "it": "Primo errore: {message}"},
    "summary.advice": {"en": "Advice: {advice}", "it": "Consiglio: {advice}"},
    "summary.all_ok": {
        "en": "No step failed. Next: run your pilot in a new output folder.",
        "it": "Nessun passaggio è fallito. Poi: esegui il tuo pilota in una nuova cartella "
        "di output.",
    },
    "summary.problems": {
        "en": "Handover compared with the order:",
        "it": "Consegna confrontata con l'ordine:",
    },
    "report.written": {"en": "Report written to {path}", "it": "Report scritto in {path}"},
    "report.write_failed": {
        "en": "The report could not be written to {path}: {error}",
        "it": "Non è stato possibile scrivere il report in {path}: {error}",
    },
    "upload.ok": {
        "en": "Upload: the server accepted the report (HTTP {status}): {answer}",
        "it": "Caricamento: il server ha accettato il report (HTTP {status}): {answer}",
    },
    "upload.refused": {
        "en": "Upload failed: the server refused the report (HTTP {status}): {answer}",
        "it": "Caricamento non riuscito: il server ha rifiutato il report (HTTP {status}): "
        "{answer}",
    },
    "upload.unreachable": {
        "en": "Upload failed: the server could not be reached ({error}). The diagnosis above is "
        "complete; keep the report (--json) and attach it on the order page.",
        "it": "Caricamento non riuscito: il server non è raggiungibile ({error}). La diagnostica "
        "qui sopra è completa; conserva il report (--json) e allegalo nella pagina "
        "dell'ordine.",
    },
    "upload.not_configured": {
        "en": "Upload failed: this kit has no upload address; download the kit again from the "
        "order page.",
        "it": "Caricamento non riuscito: questo kit non ha un indirizzo di caricamento; scarica "
        "di nuovo il kit dalla pagina dell'ordine.",
    },
    "upload.expired": {
        "en": "The kit's upload token expired at {when}: download a new kit from the order page "
        "if the server refuses it.",
        "it": "Il token di caricamento del kit è scaduto il {when}: scarica un nuovo kit dalla "
        "pagina dell'ordine se il server lo rifiuta.",
    },
    "usage.order_missing": {
        "en": "order.json was not found next to diagnose.py ({path}): extract the whole kit "
        "folder and run diagnose.py from it.",
        "it": "order.json non trovato accanto a diagnose.py ({path}): estrai l'intera cartella "
        "del kit ed esegui diagnose.py da lì.",
    },
    "usage.order_invalid": {
        "en": "order.json is not a valid kit file ({error}): download the kit again.",
        "it": "order.json non è un file del kit valido ({error}): scarica di nuovo il kit.",
    },
    "usage.unknown_host": {
        "en": "--host {name} is not one of this order's hosts: {hosts}.",
        "it": "--host {name} non è uno degli host di questo ordine: {hosts}.",
    },
    "usage.share": {
        "en": "--memory-share must be a number from 0.05 to 0.95.",
        "it": "--memory-share deve essere un numero tra 0,05 e 0,95.",
    },
    "yes": {"en": "yes", "it": "sì"},
    "unknown": {"en": "unknown", "it": "sconosciuto"},
    "none": {"en": "none", "it": "nessuno"},
}

LANGUAGE = "en"


def tr(key: str, **values) -> str:
    """The message in the chosen language, with its placeholders filled."""
    text = MESSAGES[key].get(LANGUAGE) or MESSAGES[key]["en"]
    return text.format(**values) if values else text


def clip(text: str, limit: int) -> str:
    """Shorten visibly: the report never carries a string the site would refuse."""
    text = str(text)
    if len(text) <= limit:
        return text
    marker = " [... truncated]"
    return text[: limit - len(marker)] + marker


def platform_label(platform_name: str | None) -> str:
    return {"cuda": "CUDA (NVIDIA)", "rocm": "ROCm (AMD)"}.get(platform_name or "", tr("unknown"))


# ------------------------------------------------------------ comparison (copy of pilot.handover)

_SEPARATORS = re.compile(r"[\s\-_]+")


def _squash(text: str) -> str:
    return _SEPARATORS.sub("", text).upper()


def model_key(name: str) -> str:
    """First word of the catalogue name with a digit ("H100 80 GB" -> "H100"), squashed."""
    for word in name.split():
        if any(char.isdigit() for char in word):
            return _squash(word)
    return _squash(name)


def model_matches(expected_model: str, reported_name: str) -> bool:
    key = model_key(expected_model)
    return bool(key) and key in _squash(reported_name)


def compare(expected: dict, seen: dict) -> list:
    """Problem codes; the same rules as pilot.handover.compare on the site."""
    platform_seen = seen.get("platform")
    if platform_seen is None:
        return ["no_vendor_tool"]
    problems = []
    cards = seen.get("cards")
    if cards is not None and cards < expected["cards"]:
        problems.append("fewer_cards")
    model = seen.get("model")
    if model is not None and not model_matches(expected["model"], model):
        problems.append("other_model")
    memory = seen.get("memory_gb_per_card")
    if memory is not None and memory < MEMORY_TOLERANCE * expected["memory_gb_per_card"]:
        problems.append("less_memory")
    if platform_seen != expected["platform"]:
        problems.append("other_platform")
    return problems


def problem_text(code: str, expected: dict, seen: dict) -> str:
    if code == "no_vendor_tool":
        return tr("problem.no_vendor_tool")
    if code == "fewer_cards":
        return tr("problem.fewer_cards", seen=seen["cards"], expected=expected["cards"])
    if code == "other_model":
        return tr("problem.other_model", seen=seen["model"], expected=expected["model"])
    if code == "less_memory":
        return tr(
            "problem.less_memory",
            seen=seen["memory_gb_per_card"],
            expected=expected["memory_gb_per_card"],
        )
    return tr(
        "problem.other_platform",
        seen=platform_label(seen["platform"]),
        expected=platform_label(expected["platform"]),
    )


# ------------------------------------------------------------------------------ the kit files

KIT_DIR = os.path.dirname(os.path.abspath(__file__))


class KitError(Exception):
    """The kit is incomplete or damaged: exit status 2 with this message."""


def load_order(path: str) -> dict:
    """order.json as the kit builder wrote it, checked enough to rely on its fields."""
    if not os.path.isfile(path):
        raise KitError(tr("usage.order_missing", path=path))
    try:
        with open(path, encoding="utf-8") as handle:
            order = json.load(handle)
        order["order"]["id"] = int(order["order"]["id"])
        order["order"]["reference"] = str(order["order"]["reference"])
        order["model"] = str(order["model"])
        if order["platform"] not in ("cuda", "rocm"):
            raise ValueError("platform must be cuda or rocm")
        order["memory_gb_per_card"] = int(order["memory_gb_per_card"])
        order["total_cards"] = int(order["total_cards"])
        for entry in order["hosts"]:
            entry["cards"] = int(entry["cards"])
            entry["host"], entry["ssh_host"] = str(entry["host"]), str(entry["ssh_host"])
    except (ValueError, KeyError, TypeError) as error:
        raise KitError(tr("usage.order_invalid", error=describe_error(error))) from error
    return order


def read_extensions(path: str) -> list | None:
    """extensions.txt: one name per line, # starts a comment; None when the file is absent."""
    if not os.path.isfile(path):
        return None
    names = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            name = line.split("#", 1)[0].strip()
            if name and name not in names:
                names.append(name)
    return names


# ----------------------------------------------------------------------------- small helpers


def describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return type(error).__name__ + (": " + text[-1] if text else "")


def run_tool(argv: list, timeout: float = 60) -> tuple:
    """(exit status, stdout, stderr) of a vendor tool; exit status None when it could not run."""
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv, the tool found on PATH
            argv, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, "", describe_error(error)
    return done.returncode, done.stdout, done.stderr


def tail(text: str, lines: int = 6) -> str:
    kept = [line for line in (text or "").strip().splitlines() if line.strip()]
    return clip(" | ".join(kept[-lines:]) or "-", 1500)


def how_it_ended(returncode) -> str:
    if returncode is None:
        return "timeout"
    if returncode < 0:
        return f"signal {-returncode}"
    return f"exit status {returncode}"


def gib(mib) -> float:
    return round(mib / 1024.0, 1)


def step_result(name: str, status: str, detail: str, data: dict | None = None) -> dict:
    advice = tr("advice." + name) if status == "failed" else ""
    return {
        "name": name,
        "status": status,
        "detail": clip(detail, DETAIL_MAX),
        "advice": clip(advice, ADVICE_MAX),
        "data": clean_data(data or {}),
    }


def clean_data(value, depth: int = 0):
    """JSON the site accepts: finite numbers, bounded strings and lists, shallow nesting."""
    if depth > 5:
        return None
    if isinstance(value, dict):
        return {
            clip(key, 64): clean_data(item, depth + 1) for key, item in list(value.items())[:64]
        }
    if isinstance(value, (list, tuple)):
        return [clean_data(item, depth + 1) for item in list(value)[:DATA_LIST_MAX]]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        return clip(value, DATA_STRING_MAX)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return clip(repr(value), DATA_STRING_MAX)


# ------------------------------------------------------------------ step 1: the interpreter

VISIBILITY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
ENVIRONMENT_VARIABLES = VISIBILITY_VARIABLES + ("LD_LIBRARY_PATH", "HSA_OVERRIDE_GFX_VERSION")


def python_on_path() -> dict | None:
    """The interpreter a plain `python` would start, and its prefix (it may be a venv's)."""
    for name in ("python", "python3"):
        found = shutil.which(name)
        if not found:
            continue
        code, out, _err = run_tool(
            [found, "-c", "import sys; print(sys.executable); print(sys.prefix)"], timeout=20
        )
        lines = out.strip().splitlines() if code == 0 else []
        if len(lines) >= 2:
            return {"name": name, "path": found, "executable": lines[0], "prefix": lines[1]}
        return {"name": name, "path": found, "executable": found, "prefix": "?"}
    return None


def check_interpreter(order: dict) -> dict:
    lines, failures = [], []
    version = platform.python_version()
    lines.append(tr("interp.python", executable=sys.executable, version=version))
    if sys.version_info < (3, 8):  # noqa: UP036 - this script runs on the customer's Python
        failures.append(tr("interp.too_old", version=version))
    venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    conda_prefix = os.environ.get("CONDA_PREFIX")
    conda = os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
    if venv:
        lines.append(tr("interp.venv", prefix=sys.prefix))
    if conda:
        name = os.environ.get("CONDA_DEFAULT_ENV") or os.path.basename(sys.prefix)
        lines.append(tr("interp.conda", name=name + " (" + sys.prefix + ")"))
    if not venv and not conda:
        lines.append(tr("interp.no_env"))
    on_path = python_on_path()
    if on_path is None:
        lines.append(tr("interp.path_none"))
    elif os.path.realpath(on_path["prefix"]) == os.path.realpath(sys.prefix):
        lines.append(tr("interp.path_same"))
    else:
        lines.append(tr("interp.path_other", path=on_path["path"], prefix=on_path["prefix"]))
    variables = {}
    for name in ENVIRONMENT_VARIABLES:
        value = os.environ.get(name)
        variables[name] = value
        if value is None:
            lines.append(tr("interp.var_unset", name=name))
        elif value.strip() == "" and name in VISIBILITY_VARIABLES:
            lines.append(tr("interp.empty_visible", name=name))
        else:
            lines.append(tr("interp.var", name=name, value=value))
    hsa = os.environ.get("HSA_OVERRIDE_GFX_VERSION")
    if hsa is not None and (
        model_key(order["model"]) == "MI300X" or order.get("architecture") == "gfx942"
    ):
        failures.append(tr("interp.hsa_override", value=hsa))
    data = {
        "executable": sys.executable,
        "version": version,
        "prefix": sys.prefix,
        "virtualenv": venv,
        "conda": conda or bool(conda_prefix),
        "python_on_path": on_path,
        "variables": variables,
    }
    status = "failed" if failures else "ok"
    return step_result("interpreter", status, "\n".join(failures + lines), data)


# ------------------------------------------------------------------------- the vendor tools


class ToolFailed(Exception):
    """The vendor tool is there but did not answer usefully."""


def find_vendor_tools(preferred: str) -> list:
    """[(tool name, path, platform)] found on PATH, the order's platform first."""
    candidates = [("nvidia-smi", "cuda"), ("amd-smi", "rocm"), ("rocm-smi", "rocm")]
    candidates.sort(key=lambda entry: entry[1] != preferred)
    found = []
    for name, platform_name in candidates:
        path = shutil.which(name)
        if path:
            found.append((name, path, platform_name))
    return found


def _number(text) -> float | None:
    match = re.search(r"[-+]?\d+(?:\.\d+)?", str(text))
    return float(match.group(0)) if match else None


def _nvidia_arch(capability: str) -> str | None:
    match = re.match(r"^\s*(\d+)\.(\d+)\s*$", capability or "")
    return f"sm_{match.group(1)}{match.group(2)}" if match else None


def read_nvidia(path: str) -> dict:
    """nvidia-smi --query-gpu=index,name,memory.total,driver_version,compute_cap: one CSV line
    per card, memory in MiB. Drivers older than 510 know no compute_cap: asked again without."""
    fields = ["index", "name", "memory.total", "driver_version", "compute_cap"]
    argv = [path, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
    code, out, err = run_tool(argv)
    if code not in (0, None) and "compute_cap" in out + err:
        fields = fields[:-1]
        argv = [path, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
        code, out, err = run_tool(argv)
    if code != 0:
        raise ToolFailed(tail(out + "\n" + err))
    cards, driver = [], None
    for line in out.splitlines():
        parts = [part.strip() for part in line.split(",")]
        if len(parts) < len(fields) or not parts[0].isdigit():
            continue
        extra = len(parts) - len(fields)  # a name with commas in it
        name = ", ".join(parts[1 : 2 + extra])
        rest = parts[2 + extra :]
        memory = _number(rest[0])
        driver = rest[1] if len(rest) > 1 and "[" not in rest[1] else driver
        arch = _nvidia_arch(rest[2]) if len(rest) > 2 else None
        cards.append({"index": int(parts[0]), "name": name, "memory_mib": memory, "arch": arch})
    if not cards:
        raise ToolFailed(tail(out + "\n" + err))
    return {"tool": "nvidia-smi", "platform": "cuda", "driver": driver, "cards": cards}


def _mib(value) -> float | None:
    """amd-smi memory in any of its shapes: 196592, "196592 MB", {"value": .., "unit": "MB"}
    (its MB are MiB); GB/GiB scaled up, bytes scaled down."""
    unit = ""
    if isinstance(value, dict):
        unit = str(value.get("unit", ""))
        value = value.get("value")
    number = _number(value) if value is not None else None
    if number is None:
        return None
    unit = (unit or re.sub(r"[\d\s.+-]", "", str(value))).upper()
    if unit in ("GB", "GIB"):
        return number * 1024
    if unit in ("B", "BYTES"):
        return number / 1048576.0
    if unit in ("KB", "KIB"):
        return number / 1024.0
    return number


def _find(data, *names):
    """The first value under a key whose lower-cased name is one of `names`, depth first."""
    wanted = {name.lower() for name in names}
    if isinstance(data, dict):
        for key, value in data.items():
            if str(key).lower() in wanted:
                return value
        for value in data.values():
            found = _find(value, *names)
            if found is not None:
                return found
    elif isinstance(data, list):
        for value in data:
            found = _find(value, *names)
            if found is not None:
                return found
    return None


def _amd_gpu_entries(data) -> list:
    """amd-smi's JSON: a list of per-GPU objects, or {"gpu_data": [...]}, or one object."""
    if isinstance(data, dict):
        for key in ("gpu_data", "gpus", "data"):
            if isinstance(data.get(key), list):
                return data[key]
        return [data]
    return data if isinstance(data, list) else []


def read_amd_smi(path: str) -> dict:
    """amd-smi static --json: asic.market_name, asic.target_graphics_version, vram.size,
    driver.version per GPU; `amd-smi list --json` for the count when static says nothing."""
    code, out, err = run_tool([path, "static", "--json"])
    entries = []
    if code == 0:
        try:
            entries = _amd_gpu_entries(json.loads(out))
        except ValueError:
            entries = []
    if not entries:
        code, out, err = run_tool([path, "list", "--json"])
        try:
            entries = _amd_gpu_entries(json.loads(out)) if code == 0 else []
        except ValueError:
            entries = []
    if not entries:
        raise ToolFailed(tail(out + "\n" + err))
    cards, driver = [], None
    for position, entry in enumerate(entries):
        index = entry.get("gpu", position) if isinstance(entry, dict) else position
        name = _find(entry, "market_name", "product_name", "card_series")
        vram = _find(entry, "vram")
        memory = _mib(_find(vram, "size")) if vram is not None else None
        arch = _find(entry, "target_graphics_version", "gfx_version")
        version = _find(_find(entry, "driver"), "version")
        driver = driver or (str(version) if version else None)
        cards.append(
            {
                "index": int(_number(index) or position),
                "name": str(name) if name else None,
                "memory_mib": memory,
                "arch": str(arch).split(":")[0] if arch else None,
            }
        )
    return {"tool": "amd-smi", "platform": "rocm", "driver": driver, "cards": cards}


def read_rocm_smi(path: str) -> dict:
    """rocm-smi --showproductname --showmeminfo vram --showdriverversion --json:
    {"card0": {"Card Series": .., "GFX Version": .., "VRAM Total Memory (B)": ..}, "system":
    {"Driver version": ..}}; keys compared case-insensitively."""
    argv = [path, "--showproductname", "--showmeminfo", "vram", "--showdriverversion", "--json"]
    code, out, err = run_tool(argv)
    try:
        data = json.loads(out) if code == 0 else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise ToolFailed(tail(out + "\n" + err))
    cards = []
    for key, entry in sorted(data.items()):
        match = re.match(r"^card(\d+)$", str(key).lower())
        if not match or not isinstance(entry, dict):
            continue
        lowered = {str(name).lower(): value for name, value in entry.items()}
        name = lowered.get("card series") or lowered.get("card sku") or lowered.get("card model")
        total = next(
            (value for name_, value in lowered.items() if "vram total memory" in name_), None
        )
        arch = lowered.get("gfx version")
        cards.append(
            {
                "index": int(match.group(1)),
                "name": str(name) if name else None,
                "memory_mib": _mib({"value": total, "unit": "B"}) if total is not None else None,
                "arch": str(arch).split(":")[0] if arch else None,
            }
        )
    if not cards:
        raise ToolFailed(tail(out + "\n" + err))
    driver = _find(data.get("system", {}), "driver version")
    return {"tool": "rocm-smi", "platform": "rocm", "driver": driver, "cards": cards}


READERS = {"nvidia-smi": read_nvidia, "amd-smi": read_amd_smi, "rocm-smi": read_rocm_smi}


def sample_used_mib(tool: str, path: str) -> dict:
    """{card index: MiB in use now}, from the same vendor tool step 2 used."""
    if tool == "nvidia-smi":
        argv = [path, "--query-gpu=index,memory.used", "--format=csv,noheader,nounits"]
        code, out, err = run_tool(argv, timeout=20)
        if code != 0:
            raise ToolFailed(tail(out + "\n" + err))
        used = {}
        for line in out.splitlines():
            parts = [part.strip() for part in line.split(",")]
            if len(parts) == 2 and parts[0].isdigit() and _number(parts[1]) is not None:
                used[int(parts[0])] = _number(parts[1])
        return used
    if tool == "amd-smi":
        code, out, err = run_tool([path, "metric", "--mem-usage", "--json"], timeout=20)
        try:
            entries = _amd_gpu_entries(json.loads(out)) if code == 0 else []
        except ValueError:
            entries = []
        used = {}
        for position, entry in enumerate(entries):
            value = _mib(_find(entry, "used_vram"))
            if value is not None:
                used[int(_number(entry.get("gpu", position)) or position)] = value
        if not used:
            raise ToolFailed(tail(out + "\n" + err))
        return used
    code, out, err = run_tool([path, "--showmeminfo", "vram", "--json"], timeout=20)
    try:
        data = json.loads(out) if code == 0 else {}
    except ValueError:
        data = {}
    used = {}
    for key, entry in data.items() if isinstance(data, dict) else ():
        match = re.match(r"^card(\d+)$", str(key).lower())
        if match and isinstance(entry, dict):
            for name, value in entry.items():
                if "vram total used memory" in str(name).lower():
                    used[int(match.group(1))] = _mib({"value": value, "unit": "B"})
    if not used:
        raise ToolFailed(tail(out + "\n" + err))
    return used


# --------------------------------------------------------------------- step 2: the cards


def local_identity() -> dict:
    """This machine's names and addresses, to find which allocated host it is."""
    names, addresses = set(), set()
    hostname = socket.gethostname()
    for name in (hostname, socket.getfqdn()):
        if name:
            names.add(name.lower())
            names.add(name.lower().split(".")[0])
            try:
                for info in socket.getaddrinfo(name, None):
                    addresses.add(info[4][0])
            except OSError:
                pass
    for family, target in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:  # connecting a UDP socket sends nothing; it picks the outgoing address
            probe = socket.socket(family, socket.SOCK_DGRAM)
            try:
                probe.connect((target, 9))
                addresses.add(probe.getsockname()[0])
            finally:
                probe.close()
        except OSError:
            pass
    return {"hostname": hostname, "names": sorted(names), "addresses": sorted(addresses)}


def matches_local(entry: dict, identity: dict) -> bool:
    ssh_host = str(entry["ssh_host"]).strip("[]").lower()
    known = set(identity["names"]) | {address.lower() for address in identity["addresses"]}
    return ssh_host in known or str(entry["host"]).lower() in known


def choose_host(order: dict, host_name: str | None, identity: dict) -> tuple:
    """(host entry or None, message or None): which allocated host this machine is.

    None with no message: no cards allocated yet. None with a message: several hosts and this
    machine is not exactly one of them."""
    hosts = order["hosts"]
    if host_name is not None:
        for entry in hosts:
            if host_name in (entry["host"], entry["ssh_host"]):
                return entry, None
        raise KitError(
            tr(
                "usage.unknown_host",
                name=host_name,
                hosts=", ".join(entry["host"] for entry in hosts) or tr("none"),
            )
        )
    if not hosts:
        return None, None
    if len(hosts) == 1:
        return hosts[0], None
    matched = [entry for entry in hosts if matches_local(entry, identity)]
    if len(matched) == 1:
        return matched[0], None
    listed = ", ".join(
        "{} ({} x, {})".format(entry["host"], entry["cards"], entry["ssh_host"]) for entry in hosts
    )
    local = ", ".join([identity["hostname"]] + identity["addresses"])
    which = ", ".join(entry["host"] for entry in matched) or tr("driver.matched_none")
    return None, tr("driver.ambiguous", count=len(hosts), hosts=listed, local=local, matched=which)


def expected_for(order: dict, host: dict | None) -> dict:
    return {
        "model": order["model"],
        "cards": host["cards"] if host else order["total_cards"],
        "memory_gb_per_card": order["memory_gb_per_card"],
        "platform": order["platform"],
        "host": host["host"] if host else None,
    }


def seen_from(reading: dict | None, platform_name: str | None, expected: dict) -> dict:
    """The "seen" object: the first card that is not the ordered model names the model, the
    smallest card gives the memory."""
    if reading is None:
        return {
            "model": None,
            "cards": 0 if platform_name else None,
            "memory_gb_per_card": None,
            "platform": platform_name,
        }
    cards = reading["cards"]
    names = [card["name"] for card in cards if card["name"]]
    other = [name for name in names if not model_matches(expected["model"], name)]
    memories = [card["memory_mib"] for card in cards if card["memory_mib"] is not None]
    return {
        "model": (other or names or [None])[0],
        "cards": len(cards),
        "memory_gb_per_card": gib(min(memories)) if memories else None,
        "platform": reading["platform"],
    }


def check_driver(order: dict, host_name: str | None, state: dict) -> dict:
    identity = local_identity()
    host, ambiguity = choose_host(order, host_name, identity)
    tools = find_vendor_tools(order["platform"])
    reading, error, used_tool = None, None, None
    for name, path, _platform in tools:
        used_tool = (name, path, _platform)
        try:
            reading = READERS[name](path)
            break
        except ToolFailed as failure:
            error = error or tr("driver.tool_failed", tool=name, error=str(failure))
    data = {"local": identity, "tools": [tool[1] for tool in tools], "reading": reading}
    lines = []
    if reading is not None:
        cards_text = "; ".join(
            tr(
                "driver.card",
                index=card["index"],
                name=card["name"] or "?",
                memory=gib(card["memory_mib"]) if card["memory_mib"] is not None else "?",
            )
            for card in reading["cards"]
        )
        lines.append(
            tr(
                "driver.seen",
                tool=reading["tool"],
                driver=reading["driver"] or "?",
                count=len(reading["cards"]),
                cards=cards_text,
            )
        )
        state["tool"] = (reading["tool"], used_tool[1])
        state["cards"] = reading["cards"]
    if ambiguity:
        state["handover"] = None
        return step_result("driver", "failed", "\n".join([ambiguity] + lines), data)
    expected = expected_for(order, host)
    seen = seen_from(reading, used_tool[2] if used_tool else None, expected)
    problems = compare(expected, seen)
    state["handover"] = {
        "expected": expected,
        "seen": seen,
        "problems": problems,
    }
    state["expected_cards"] = expected["cards"]
    if host is None:
        lines.append(tr("driver.expected_unallocated", cards=expected["cards"]))
    else:
        lines.append(
            tr(
                "driver.expected_host",
                host=host["host"],
                cards=expected["cards"],
                model=expected["model"],
                memory=expected["memory_gb_per_card"],
                platform=platform_label(expected["platform"]),
            )
        )
    headline = []
    if not tools:
        headline.append(tr("driver.no_tool"))
    elif reading is None:
        headline.append(error)
    headline += [
        problem_text(code, expected, seen) for code in problems if code != "no_vendor_tool"
    ]
    if reading is not None and not problems:
        lines.append(tr("driver.matches"))
        if seen["cards"] > expected["cards"]:
            lines.append(tr("driver.more_cards", seen=seen["cards"], expected=expected["cards"]))
        wanted = order.get("architecture")
        for card in reading["cards"]:
            if wanted and card["arch"] and card["arch"] != wanted:
                lines.append(
                    tr("driver.arch_other", index=card["index"], seen=card["arch"], expected=wanted)
                )
    status = "failed" if headline else "ok"
    return step_result("driver", status, "\n".join(headline + lines), data)


# ------------------------------------------------------------------------ the child probes


def run_probe(kind: str, argument, timeout: float) -> tuple:
    """Run `--probe KIND` in a child interpreter (the same one): (answer or None, how it ended,
    last output). A crash or a hang of PyTorch or an extension stays in the child."""
    argv = [sys.executable, os.path.abspath(__file__), "--probe", kind, json.dumps(argument)]
    try:
        done = subprocess.run(  # noqa: S603 - this same script, in this same interpreter
            argv, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as expired:
        output = [
            part.decode("utf-8", "replace") if isinstance(part, bytes) else part
            for part in (expired.stdout, expired.stderr)
            if part
        ]
        return None, how_it_ended(None), tail("\n".join(output))
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(PROBE_MARKER):
            try:
                return json.loads(line[len(PROBE_MARKER) :]), how_it_ended(done.returncode), ""
            except ValueError:
                break
    return None, how_it_ended(done.returncode), tail(done.stdout + "\n" + done.stderr)


def probe_torch(_argument) -> dict:
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - any import failure is the answer
        return {
            "imported": False,
            "missing": isinstance(error, ImportError) and getattr(error, "name", None) == "torch",
            "error": describe_error(error),
        }
    answer = {
        "imported": True,
        "version": str(torch.__version__),
        "path": os.path.dirname(getattr(torch, "__file__", "") or ""),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "arch_list": [],
        "available": False,
        "devices": [],
        "error": None,
    }
    try:
        answer["available"] = bool(torch.cuda.is_available())
        answer["arch_list"] = list(torch.cuda.get_arch_list())
        for index in range(torch.cuda.device_count() if answer["available"] else 0):
            properties = torch.cuda.get_device_properties(index)
            if answer["hip"]:
                arch = str(getattr(properties, "gcnArchName", "") or "").split(":")[0] or None
            else:
                major, minor = torch.cuda.get_device_capability(index)
                arch = f"sm_{major}{minor}"
            answer["devices"].append(
                {
                    "index": index,
                    "name": str(properties.name),
                    "arch": arch,
                    "memory_mib": round(properties.total_memory / 1048576.0),
                }
            )
    except Exception as error:  # noqa: BLE001 - reported, not raised
        answer["error"] = describe_error(error)
    return answer


def arch_support(arch: str, arch_list: list) -> tuple:
    """(supported, how): "native", "ptx compute_NN" or None. A CUDA cubin sm_XY runs on cards of
    the same major version X with a minor >= Y; PTX compute_NN is compiled at run time for any
    card >= NN; "sm_90a" runs on sm_90 only. ROCm: the gfx name must be listed."""
    if arch.startswith("gfx"):
        listed = {entry.split(":")[0] for entry in arch_list}
        return (arch in listed, "native" if arch in listed else None)
    card = int(arch[3:])
    for entry in arch_list:
        match = re.match(r"^sm_(\d+)([a-z]?)$", entry)
        if not match:
            continue
        number, suffix = int(match.group(1)), match.group(2)
        if number == card or (
            not suffix and number // 10 == card // 10 and number % 10 <= card % 10
        ):
            return True, "native"
    ptx = [entry for entry in arch_list if re.match(r"^compute_(\d+)$", entry)]
    usable = [entry for entry in ptx if int(entry[8:]) <= card]
    if usable:
        return True, "ptx " + max(usable, key=lambda entry: int(entry[8:]))
    return False, None


def check_torch(state: dict) -> dict:
    answer, how, last = run_probe("torch", None, timeout=300)
    if answer is None:
        return step_result("torch", "failed", tr("torch.crashed", how=how, tail=last))
    if not answer["imported"]:
        key = "torch.missing" if answer["missing"] else "torch.import_failed"
        return step_result("torch", "failed", tr(key, python=sys.executable, error=answer["error"]))
    lines = [
        tr(
            "torch.version",
            version=answer["version"],
            cuda=answer["cuda"] or "-",
            hip=answer["hip"] or "-",
            path=answer["path"],
        ),
        tr("torch.arch_list", archs=", ".join(answer["arch_list"]) or "-"),
    ]
    failures = []
    platform_name = state["handover"]["seen"]["platform"] if state.get("handover") else None
    needed = platform_label(platform_name)
    if not answer["cuda"] and not answer["hip"]:
        failures.append(tr("torch.cpu_only", platform=needed))
    elif platform_name == "cuda" and not answer["cuda"]:
        failures.append(tr("torch.wrong_platform", built="ROCm " + answer["hip"], needed=needed))
    elif platform_name == "rocm" and not answer["hip"]:
        failures.append(tr("torch.wrong_platform", built="CUDA " + answer["cuda"], needed=needed))
    elif not answer["available"]:
        failures.append(
            tr(
                "torch.unavailable",
                driver=state.get("tool", ("?",))[0],
                error=answer["error"] or "",
            )
        )
    else:
        expected = state.get("expected_cards") or 0
        if len(answer["devices"]) < expected:
            hint = "".join(
                tr("torch.visible_hint", name=name, value=os.environ[name])
                for name in VISIBILITY_VARIABLES
                if name in os.environ
            )
            failures.append(
                tr("torch.fewer_devices", seen=len(answer["devices"]), expected=expected, hint=hint)
            )
        elif len(answer["devices"]) > expected and not any(
            name in os.environ for name in VISIBILITY_VARIABLES
        ):
            # Steps 4 and 5 write to every card PyTorch sees: never to another customer's.
            failures.append(
                tr("torch.more_devices", seen=len(answer["devices"]), expected=expected)
            )
        for device in answer["devices"]:
            if not device["arch"]:
                continue
            supported, way = arch_support(device["arch"], answer["arch_list"])
            if not supported:
                failures.append(
                    tr(
                        "torch.arch_missing",
                        index=device["index"],
                        name=device["name"],
                        arch=device["arch"],
                    )
                )
            else:
                text = (
                    tr("torch.arch_native")
                    if way == "native"
                    else tr("torch.arch_ptx", ptx=way[4:])
                )
                lines.append(
                    tr(
                        "torch.arch_ok",
                        index=device["index"],
                        name=device["name"],
                        arch=device["arch"],
                        how=text,
                    )
                )
        if answer["error"]:
            failures.append(answer["error"])
    state["torch_devices"] = answer["devices"]
    status = "failed" if failures else "ok"
    return step_result("torch", status, "\n".join(failures + lines), answer)


# ------------------------------------------------------------------------ step 4: compute


def probe_compute(argument) -> dict:
    import torch

    share = float(argument["share"])
    torch.backends.cuda.matmul.allow_tf32 = False  # compare like with like
    cards = []
    for index in range(torch.cuda.device_count()):
        device = torch.device("cuda", index)
        result = {"index": index, "matmul_ok": False, "alloc_ok": False, "error": None}
        cards.append(result)
        try:
            generator = torch.Generator().manual_seed(index)
            left = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=generator)
            right = torch.randn(MATMUL_SIZE, MATMUL_SIZE, generator=generator)
            expected = left @ right
            product = (left.to(device) @ right.to(device)).cpu()
            torch.cuda.synchronize(device)
            result["max_diff"] = float((product - expected).abs().max())
            result["matmul_ok"] = bool(
                torch.allclose(product, expected, rtol=MATMUL_RTOL, atol=MATMUL_ATOL)
            )
        except Exception as error:  # noqa: BLE001 - reported per card
            result["error"], result["failed"] = describe_error(error), "matmul"
            continue
        try:
            free, total = torch.cuda.mem_get_info(device)
            size = int(total * share)
            result.update(total_gib=round(total / 2**30, 1), free_gib=round(free / 2**30, 1))
            result["alloc_gib"] = round(size / 2**30, 1)
            block = torch.empty(size, dtype=torch.uint8, device=device)
            block.fill_(0x5A)
            torch.cuda.synchronize(device)
            ends = (int(block[0].item()), int(block[-1].item()))
            result["alloc_ok"] = ends == (0x5A, 0x5A)
            if not result["alloc_ok"]:
                result["error"], result["failed"] = (
                    "written bytes read back as " + str(ends),
                    "alloc",
                )
            del block
            torch.cuda.empty_cache()
        except Exception as error:  # noqa: BLE001 - reported per card
            result["error"], result["failed"] = describe_error(error), "alloc"
    return {"cards": cards}


def check_compute(share: float) -> dict:
    answer, how, last = run_probe("compute", {"share": share}, timeout=600)
    if answer is None:
        return step_result("compute", "failed", tr("compute.crashed", how=how, tail=last))
    failures, lines = [], []
    if not answer["cards"]:
        failures.append(tr("compute.no_cards"))
    tolerance = {"size": MATMUL_SIZE, "rtol": MATMUL_RTOL, "atol": MATMUL_ATOL}
    for card in answer["cards"]:
        if card.get("failed") == "matmul":
            what = tr("compute.what_matmul")
            failures.append(
                tr("compute.card_error", index=card["index"], what=what, error=card["error"])
            )
        elif not card["matmul_ok"]:
            failures.append(
                tr("compute.card_wrong", index=card["index"], diff=card["max_diff"], **tolerance)
            )
        elif card.get("failed") == "alloc":
            what = tr(
                "compute.what_alloc",
                alloc=card.get("alloc_gib", "?"),
                share=share,
                free=card.get("free_gib", "?"),
            )
            failures.append(
                tr("compute.card_error", index=card["index"], what=what, error=card["error"])
            )
        else:
            lines.append(
                tr(
                    "compute.card_ok",
                    index=card["index"],
                    diff=card["max_diff"],
                    alloc=card["alloc_gib"],
                    share=share,
                    total=card["total_gib"],
                    **tolerance,
                )
            )
    data = dict(answer, share=share, rtol=MATMUL_RTOL, atol=MATMUL_ATOL, size=MATMUL_SIZE)
    return step_result("compute", "failed" if failures else "ok", "\n".join(failures + lines), data)


# --------------------------------------------------------------------- step 5: extensions

# Extensions with one real operation: (import name, what the operation is).
KERNEL_CHECKS = {
    "flash_attn": "flash_attn_func attention (fp16) against a reference",
    "xformers": "memory_efficient_attention (fp16) against a reference",
    "bitsandbytes": "8-bit blockwise quantize/dequantize",
    "apex": "FusedLayerNorm against torch.nn.functional.layer_norm",
    "triton": "a compiled vector-add kernel",
}
IMPORT_NAMES = {
    "flash-attn": "flash_attn",
    "flash-attention": "flash_attn",
    "flashattention": "flash_attn",
    "transformer-engine": "transformer_engine",
    "opencv-python": "cv2",
    "opencv-python-headless": "cv2",
    "scikit-learn": "sklearn",
    "pillow": "PIL",
    "pyyaml": "yaml",
}


def import_name(name: str) -> str:
    """The module to import for a line of extensions.txt ("flash-attn>=2" -> flash_attn)."""
    bare = re.split(r"[\s<>=!~;\[@(]", name.strip(), maxsplit=1)[0]
    key = bare.lower().replace("_", "-")
    return IMPORT_NAMES.get(key, bare.replace("-", "_"))


def _reference_attention(torch, query, key, value):
    # (batch, sequence, heads, dim) as flash-attn and xformers take it.
    q, k, v = (tensor.float().transpose(1, 2) for tensor in (query, key, value))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return (weights @ v).transpose(1, 2)


TRITON_SOURCE = """
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(axis=0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask)
             + tl.load(y_ptr + offsets, mask=mask), mask=mask)
"""


def _kernel_check(torch, module: str):
    """Run the extension's real operation on card 0: (max difference, allowed difference)."""
    device = torch.device("cuda", 0)
    torch.manual_seed(0)
    if module in ("flash_attn", "xformers"):
        q, k, v = (torch.randn(1, 128, 4, 64, device=device, dtype=torch.float16) for _ in range(3))
        if module == "flash_attn":
            from flash_attn import flash_attn_func

            out = flash_attn_func(q, k, v, dropout_p=0.0, causal=False)
        else:
            import xformers.ops

            out = xformers.ops.memory_efficient_attention(q, k, v)
        torch.cuda.synchronize(device)
        return float((out.float() - _reference_attention(torch, q, k, v)).abs().max()), 2e-2
    if module == "bitsandbytes":
        import bitsandbytes.functional as bnb_functional

        values = torch.randn(4096, device=device)
        quantized, quant_state = bnb_functional.quantize_blockwise(values)
        restored = bnb_functional.dequantize_blockwise(quantized, quant_state)
        torch.cuda.synchronize(device)
        return float((values - restored).abs().max()), 0.05 * float(values.abs().max())
    if module == "apex":
        from apex.normalization import FusedLayerNorm

        layer = FusedLayerNorm(64).to(device)
        values = torch.randn(8, 64, device=device)
        reference = torch.nn.functional.layer_norm(values, (64,), layer.weight, layer.bias)
        out = layer(values)
        torch.cuda.synchronize(device)
        return float((out - reference).abs().max()), 1e-4
    # triton.jit reads the kernel's source from its file: write it as a module of its own.
    folder = tempfile.mkdtemp(prefix="gr-triton-")
    try:
        with open(os.path.join(folder, "gr_triton_probe.py"), "w", encoding="utf-8") as handle:
            handle.write(TRITON_SOURCE)
        sys.path.insert(0, folder)
        probe = importlib.import_module("gr_triton_probe")
        left, right = torch.randn(1000, device=device), torch.randn(1000, device=device)
        out = torch.empty_like(left)
        probe.add_kernel[((1000 + 255) // 256,)](left, right, out, 1000, BLOCK=256)
        torch.cuda.synchronize(device)
        return float((out - (left + right)).abs().max()), 1e-6
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def distribution_version(name: str) -> str | None:
    """The installed version of the distribution a line of extensions.txt names."""
    bare = re.split(r"[\s<>=!~;\[@(]", name.strip(), maxsplit=1)[0]
    try:
        import importlib.metadata

        return importlib.metadata.version(bare)
    except Exception:  # noqa: BLE001 - a version is only a detail
        return None


def probe_extension(argument) -> dict:
    name, module = argument["name"], argument["module"]
    answer = {"name": name, "module": module, "check": "import", "ok": False, "version": None}
    try:
        imported = importlib.import_module(module)
        answer["version"] = str(getattr(imported, "__version__", "") or "") or None
        if answer["version"] is None:
            answer["version"] = distribution_version(name)
        if module in KERNEL_CHECKS:
            import torch

            answer["check"] = "kernel"
            answer["diff"], answer["allowed"] = _kernel_check(torch, module)
            answer["ok"] = answer["diff"] <= answer["allowed"]
        else:
            answer["ok"] = True
    except Exception as error:  # noqa: BLE001 - reported per extension
        answer["error"] = describe_error(error)
    return answer


def check_extensions() -> dict:
    names = read_extensions(os.path.join(KIT_DIR, "extensions.txt"))
    if not names:
        key = "ext.no_file" if names is None else "ext.none"
        return step_result("extensions", "ok", tr(key), {"extensions": []})
    results, failures, lines = [], [], []
    for name in names:
        module = import_name(name)
        answer, how, last = run_probe("extension", {"name": name, "module": module}, timeout=600)
        if answer is None:
            failures.append(tr("ext.crashed", name=name, how=how, tail=last))
            results.append({"name": name, "module": module, "ok": False, "ended": how})
            continue
        results.append(answer)
        version = answer.get("version") or ""
        operation = KERNEL_CHECKS.get(module, "")
        if answer.get("error"):
            failures.append(tr("ext.failed", name=name, error=answer["error"]))
        elif not answer["ok"]:
            failures.append(tr("ext.wrong", name=name, operation=operation, diff=answer["diff"]))
        elif answer["check"] == "kernel":
            lines.append(tr("ext.kernel_ok", name=name, version=version, operation=operation))
        else:
            lines.append(tr("ext.import_ok", name=name, version=version))
    status = "failed" if failures else "ok"
    return step_result("extensions", status, "\n".join(failures + lines), {"extensions": results})


# -------------------------------------------------------------------- step 6: peak memory


def measure_peak(command: str, tool: str, path: str, interval: float = SAMPLE_SECONDS) -> dict:
    """Run the customer's command and sample each card's used memory every `interval` s."""
    baseline = sample_used_mib(tool, path)
    peak = dict(baseline)
    samples, errors = 1, []
    started = time.monotonic()
    # The customer's own command line, as they would type it in their shell.
    task = subprocess.Popen(command, shell=True)  # noqa: S602
    interrupted = False
    try:
        while True:
            finished = task.poll() is not None
            try:
                for index, used in sample_used_mib(tool, path).items():
                    peak[index] = max(peak.get(index, 0), used)
                samples += 1
            except ToolFailed as failure:
                errors.append(str(failure))
            if finished:
                break
            time.sleep(interval)
    except KeyboardInterrupt:
        interrupted = True
        task.terminate()
        task.wait()
    return {
        "command": command,
        "exit_status": task.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "samples": samples,
        "interval_s": interval,
        "baseline_mib": {str(key): value for key, value in sorted(baseline.items())},
        "peak_mib": {str(key): value for key, value in sorted(peak.items())},
        "sample_errors": errors[:5],
        "interrupted": interrupted,
    }


def check_peak(command: str | None, state: dict) -> dict:
    if not command:
        return step_result("peak_memory", "skipped", tr("skipped.no_task"))
    tool, path = state["tool"]
    try:
        data = measure_peak(command, tool, path)
    except ToolFailed as failure:
        return step_result("peak_memory", "failed", tr("peak.no_samples", tool=tool, error=failure))
    totals = {card["index"]: card["memory_mib"] for card in state.get("cards", [])}
    cards = "; ".join(
        tr(
            "peak.card",
            index=index,
            peak=gib(value),
            total=gib(totals[int(index)]) if totals.get(int(index)) else "?",
            base=gib(data["baseline_mib"].get(index, 0)),
        )
        for index, value in data["peak_mib"].items()
    )
    lines = [
        tr(
            "peak.result",
            seconds=data["seconds"],
            status=data["exit_status"],
            samples=data["samples"],
            cards=cards,
        )
    ]
    failures = []
    if data["interrupted"]:
        failures.append(tr("peak.interrupted"))
    elif data["exit_status"] != 0:
        failures.append(tr("peak.task_failed", status=data["exit_status"]))
    status = "failed" if failures else "ok"
    return step_result("peak_memory", status, "\n".join(failures + lines), data)


# ----------------------------------------------------------------------------- the report


def run_steps(order: dict, options) -> tuple:
    """All six steps in order, each only after the previous one passed: (steps, handover)."""
    state = {"handover": None}
    checks = [
        ("interpreter", lambda: check_interpreter(order)),
        ("driver", lambda: check_driver(order, options.host, state)),
        ("torch", lambda: check_torch(state)),
        ("compute", lambda: check_compute(options.memory_share)),
        ("extensions", check_extensions),
        ("peak_memory", lambda: check_peak(options.task, state)),
    ]
    steps, failed_at = [], None
    for number, (name, check) in enumerate(checks, start=1):
        if failed_at is not None:
            step_number, step_name = failed_at
            detail = tr("skipped.after", number=step_number, step=tr("step." + step_name))
            steps.append(step_result(name, "skipped", detail))
            continue
        result = check()
        steps.append(result)
        if result["status"] == "failed":
            failed_at = (number, name)
    return steps, state["handover"]


def build_report(order: dict, steps: list, handover: dict | None) -> dict:
    ran = [step for step in steps if step["status"] != "skipped"]
    failed = [step for step in steps if step["status"] == "failed"]
    first_error = None
    if failed:
        first_error = {"step": failed[0]["name"], "message": failed[0]["detail"]}
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "order": {"id": order["order"]["id"], "reference": order["order"]["reference"]},
        "generated_at": datetime.datetime.now(datetime.timezone.utc)  # noqa: UP017 - 3.8
        .replace(microsecond=0)
        .isoformat(),
        "tool_version": TOOL_VERSION,
        "language": LANGUAGE,
        "host": {
            "hostname": clip(socket.gethostname(), 255),
            "platform": clip(platform.platform(), 200),
            "python": clip(platform.python_version(), 64),
        },
        "steps": steps,
        "step_reached": ran[-1]["name"],
        "first_error": first_error,
        "handover": handover,
    }


def symbols() -> dict:
    marks = {"ok": "\u2713", "failed": "\u2717", "skipped": "\u2013"}
    try:
        "".join(marks.values()).encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        marks = {"ok": "[ok]", "failed": "[FAILED]", "skipped": "[--]"}
    return marks


def summary(order: dict, report: dict) -> str:
    marks = symbols()
    out = [
        tr(
            "title",
            reference=order["order"]["reference"],
            model=order["model"],
            cards=order["total_cards"],
            platform=platform_label(order["platform"]),
        ),
        "",
    ]
    for number, step in enumerate(report["steps"], start=1):
        detail = step["detail"].splitlines() or [""]
        out.append(
            "{} {}. {}: {}".format(
                marks[step["status"]], number, tr("step." + step["name"]), detail[0]
            )
        )
        out.extend("      " + line for line in detail[1:])
    out.append("")
    handover = report["handover"]
    if handover and handover["problems"]:
        out.append(tr("summary.problems"))
        for code in handover["problems"]:
            out.append("  - " + problem_text(code, handover["expected"], handover["seen"]))
    reached = report["step_reached"]
    out.append(tr("summary.reached", number=STEPS.index(reached) + 1, step=tr("step." + reached)))
    if report["first_error"]:
        failed = next(step for step in report["steps"] if step["status"] == "failed")
        out.append(
            tr("summary.first_error", message=report["first_error"]["message"].splitlines()[0])
        )
        out.append(tr("summary.advice", advice=failed["advice"]))
    else:
        out.append(tr("summary.all_ok"))
    return "\n".join(out)


def write_report(report: dict, path: str) -> None:
    """Written whole or not at all: a half-written report is never left behind."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".report-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(report, stream, ensure_ascii=False, indent=2, allow_nan=False)
            stream.write("\n")
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def upload(report: dict, order: dict) -> tuple:
    """POST the report to the order: (ok, message). Never raises."""
    settings = order.get("upload") or {}
    url, token = settings.get("url"), settings.get("token")
    if not url or not token or not str(url).startswith(("http://", "https://")):
        return False, tr("upload.not_configured")
    notes = []
    expires = settings.get("expires_at")
    if expires and token_expired(str(expires)):
        notes.append(tr("upload.expired", when=expires))
    body = json.dumps(report, ensure_ascii=False, allow_nan=False).encode("utf-8")
    request = urllib.request.Request(  # noqa: S310 - the scheme is checked above
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer " + token,
            "User-Agent": "gr-diagnose/" + TOOL_VERSION,
            "Accept": "application/json, text/plain",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - http(s) only
            answer = response.read(20000).decode("utf-8", "replace")
            return True, tr("upload.ok", status=response.status, answer=_answer_text(answer))
    except urllib.error.HTTPError as error:
        answer = error.read(20000).decode("utf-8", "replace")
        notes.insert(0, tr("upload.refused", status=error.code, answer=_answer_text(answer)))
    except (urllib.error.URLError, OSError, ValueError) as error:
        notes.insert(0, tr("upload.unreachable", error=describe_error(error)))
    return False, "\n".join(notes)


def token_expired(expires: str) -> bool:
    utc = datetime.timezone.utc  # noqa: UP017 - datetime.UTC is Python 3.11+
    try:
        when = datetime.datetime.fromisoformat(expires.replace("Z", "+00:00"))
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=utc)
    return when < datetime.datetime.now(utc)


def _answer_text(answer: str) -> str:
    """The server's JSON answer as its message where it has one, else the text itself."""
    try:
        parsed = json.loads(answer)
    except ValueError:
        return clip(answer.strip(), 2000)
    if isinstance(parsed, dict):
        for key in ("message", "detail", "error"):
            if isinstance(parsed.get(key), str):
                return clip(parsed[key], 2000)
    return clip(answer.strip(), 2000)


# ---------------------------------------------------------------------------- command line

PROBES = {"torch": probe_torch, "compute": probe_compute, "extension": probe_extension}


def parse_arguments(argv: list, default_language: str):
    parser = argparse.ArgumentParser(
        prog="diagnose.py",
        description="Check the rented GPU machine step by step; see README.md / LEGGIMI.md.",
    )
    parser.add_argument("--json", metavar="PATH", help="write the JSON report to PATH")
    parser.add_argument("--upload", action="store_true", help="send the report to the order page")
    parser.add_argument("--task", metavar="COMMAND", help="measure the peak memory of COMMAND")
    parser.add_argument(
        "--memory-share",
        type=float,
        default=0.5,
        metavar="SHARE",
        help="share of each card's memory that step 4 allocates (default 0.5)",
    )
    parser.add_argument("--lang", choices=("it", "en"), default=default_language)
    parser.add_argument("--host", metavar="NAME", help="the allocated host this machine is")
    parser.add_argument("--order", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--probe", nargs=2, metavar=("KIND", "ARGUMENT"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def default_language(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            language = json.load(handle).get("language")
    except (OSError, ValueError, AttributeError):
        return "en"
    return language if language in ("it", "en") else "en"


def main(argv: list | None = None) -> int:
    global LANGUAGE
    argv = sys.argv[1:] if argv is None else argv
    order_path = os.path.join(KIT_DIR, "order.json")
    if "--order" in argv[:-1]:
        order_path = argv[argv.index("--order") + 1]
    options = parse_arguments(argv, default_language(order_path))
    if options.probe:
        kind, argument = options.probe
        answer = PROBES[kind](json.loads(argument))
        sys.stdout.write("\n" + PROBE_MARKER + json.dumps(clean_data(answer)) + "\n")
        return EXIT_OK
    LANGUAGE = options.lang
    if not 0.05 <= options.memory_share <= 0.95:
        sys.stderr.write(tr("usage.share") + "\n")
        return EXIT_USAGE
    try:
        order = load_order(options.order or order_path)
        steps, handover = run_steps(order, options)
    except KitError as error:
        sys.stderr.write(str(error) + "\n")
        return EXIT_USAGE
    report = build_report(order, steps, handover)
    print(summary(order, report))
    if options.json:
        try:
            write_report(report, options.json)
            print(tr("report.written", path=options.json))
        except OSError as error:
            print(tr("report.write_failed", path=options.json, error=describe_error(error)))
    status = EXIT_FAILED if report["first_error"] else EXIT_OK
    if options.upload:
        ok, message = upload(report, order)
        print(message)
        if not ok:
            status = EXIT_UPLOAD_FAILED
    return status


if __name__ == "__main__":
    sys.exit(main())
