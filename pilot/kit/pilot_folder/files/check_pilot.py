"""Check a pilot run from a copy: python3 check_pilot.py RUN_DIR [--copy-to DIR] [--lang it|en]

The run's folder is first copied to another place (a temporary folder, or DIR/<run name> with
--copy-to) and every check reads THE COPY: a result is only usable once it has been copied and
re-read somewhere you control. The criteria are the ones prepared before the launch:

  - each of the identifiers of data/pilot appears exactly once in the results;
  - each accepted document has an allowed category, each rejected one a reason;
  - no identifier is invented; accepted + rejected = the number of inputs (12);
  - the summary is complete, agrees with the results and holds the parameters and the code
    version needed to understand them.

Standard library only, Python >= 3.8. It does not import src/: the check stays independent of
the program it checks. Exit status: 0 when every check passes, 1 on any failure, 2 when the
check cannot run (no such folder, unreadable configuration, copy refused).
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile

DEFAULT_LANGUAGE = "en"  # set by the kit builder
RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"

MESSAGES = {
    "en": {
        "no_run_dir": "{path} is not a folder: give the run folder, e.g. runs/2026-03-01T101500Z",
        "config_unreadable": "cannot read the configuration {path}: {error}",
        "copy_exists": "{path} already exists: a copy is never overwritten, choose another place",
        "copy_inside": "--copy-to must be outside the run folder it copies",
        "copied": "Copy: {path} ({count} files, re-read from the copy)",
        "copy_removed": (
            "The temporary copy was removed. Keep one in a place you control with "
            "--copy-to DIR, outside the rented machine."
        ),
        "copy_kept": "The copy stays in {path}.",
        "copy_differs": "{name} of the copy differs from the run folder: the copy is not usable",
        "summary_missing": "{name} is missing or unreadable in the copy: the run cannot be checked",
        "results_missing": "{name} is missing from the copy",
        "bad_line": "{name} line {line} is not a JSON record",
        "no_id": "{name} line {line} has no identifier",
        "bad_status": "{doc_id}: status {status!r}, expected accepted or rejected",
        "input_count": "{path} holds {found} documents; config/pilot.json expects {expected}",
        "missing": "{doc_id} is missing from the results",
        "duplicate": "{doc_id} appears {times} times in the results (exactly once expected)",
        "invented": "{doc_id} is in the results but not in {path}: an invented identifier",
        "bad_category": (
            "{doc_id} accepted with category {category!r}, which is not allowed ({allowed})"
        ),
        "no_reason": "{doc_id} rejected without a reason",
        "count": "accepted ({accepted}) + rejected ({rejected}) = {total}, expected {expected}",
        "expected_rejection": "{doc_id} was meant to be rejected, but it was accepted",
        "checksum": (
            "{doc_id} was classified from another input: its checksum differs from {path}"
        ),
        "reused": (
            "{doc_id} was written by another run ({other}, not {run_id}): the run folder was reused"
        ),
        "not_complete": (
            "the run did not finish (status {status!r}): see which documents are left with "
            "python3 src/classify.py --status RUN_DIR, finish with --resume RUN_DIR"
        ),
        "summary_counts": (
            "{summary} says {s_accepted} accepted and {s_rejected} rejected; the results hold "
            "{accepted} and {rejected}"
        ),
        "no_parameters": "{summary} does not hold the parameters of the run",
        "other_parameters": "the run used parameters other than config/pilot.json",
        "no_code": "{summary} does not say which code version produced the results",
        "run_line": "Run {run_id}: {total} results, {accepted} accepted, {rejected} rejected",
        "ok": (
            "Verdict: OK. The {expected} identifiers appear once each, every accepted document "
            "has an allowed category, every rejected one a reason; the summary agrees."
        ),
        "look": (
            "Now read a few results beside their inputs: a syntactically valid output can "
            "still be wrong for its use."
        ),
        "sample_accepted": "  {doc_id}: {category}  <- {path}",
        "sample_rejected": "  {doc_id}: rejected, {reason}  <- {path}",
        "failed": "Verdict: FAILED, {count} problem(s):",
    },
    "it": {
        "no_run_dir": (
            "{path} non è una cartella: indica la cartella della prova, ad es. "
            "runs/2026-03-01T101500Z"
        ),
        "config_unreadable": "impossibile leggere la configurazione {path}: {error}",
        "copy_exists": (
            "{path} esiste già: una copia non viene mai sovrascritta, scegli un'altra posizione"
        ),
        "copy_inside": "--copy-to deve stare fuori dalla cartella della prova che copia",
        "copied": "Copia: {path} ({count} file, riletti dalla copia)",
        "copy_removed": (
            "La copia temporanea è stata eliminata. Conservane una in una posizione che "
            "controlli con --copy-to CARTELLA, fuori dalla macchina noleggiata."
        ),
        "copy_kept": "La copia resta in {path}.",
        "copy_differs": (
            "{name} della copia è diverso dalla cartella della prova: la copia non è utilizzabile"
        ),
        "summary_missing": (
            "{name} manca o è illeggibile nella copia: la prova non può essere controllata"
        ),
        "results_missing": "{name} manca nella copia",
        "bad_line": "{name} riga {line}: non è un record JSON",
        "no_id": "{name} riga {line}: nessun identificatore",
        "bad_status": "{doc_id}: stato {status!r}, atteso accepted o rejected",
        "input_count": "{path} contiene {found} documenti; config/pilot.json ne prevede {expected}",
        "missing": "{doc_id} manca dai risultati",
        "duplicate": "{doc_id} compare {times} volte nei risultati (attesa una volta sola)",
        "invented": "{doc_id} è nei risultati ma non in {path}: un identificatore inventato",
        "bad_category": (
            "{doc_id} accettato con la categoria {category!r}, che non è ammessa ({allowed})"
        ),
        "no_reason": "{doc_id} rifiutato senza un motivo",
        "count": ("accettati ({accepted}) + rifiutati ({rejected}) = {total}, attesi {expected}"),
        "expected_rejection": "{doc_id} doveva essere rifiutato, ma è stato accettato",
        "checksum": (
            "{doc_id} è stato classificato da un altro input: il suo checksum è diverso da {path}"
        ),
        "reused": (
            "{doc_id} è stato scritto da un'altra prova ({other}, non {run_id}): la cartella "
            "della prova è stata riutilizzata"
        ),
        "not_complete": (
            "la prova non è terminata (stato {status!r}): vedi quali documenti restano con "
            "python3 src/classify.py --status CARTELLA, completa con --resume CARTELLA"
        ),
        "summary_counts": (
            "{summary} indica accettati {s_accepted} e rifiutati {s_rejected}; i risultati "
            "contengono accettati {accepted} e rifiutati {rejected}"
        ),
        "no_parameters": "{summary} non contiene i parametri della prova",
        "other_parameters": "la prova ha usato parametri diversi da config/pilot.json",
        "no_code": "{summary} non indica quale versione del codice ha prodotto i risultati",
        "run_line": (
            "Prova {run_id}: risultati {total}, accettati {accepted}, rifiutati {rejected}"
        ),
        "ok": (
            "Esito: OK. I {expected} identificatori compaiono una volta ciascuno, ogni "
            "documento accettato ha una categoria ammessa, ogni rifiutato un motivo; il "
            "riepilogo concorda."
        ),
        "look": (
            "Ora esamina alcuni risultati con i loro input: un output sintatticamente valido "
            "può restare errato per l'uso."
        ),
        "sample_accepted": "  {doc_id}: {category}  <- {path}",
        "sample_rejected": "  {doc_id}: rifiutato, {reason}  <- {path}",
        "failed": "Esito: NON SUPERATO, {count} problema/i:",
    },
}


class Messages:
    def __init__(self, language):
        self.table = MESSAGES.get(language, MESSAGES["en"])

    def __call__(self, key, **values):
        return self.table[key].format(**values)


class CannotCheck(Exception):
    """The check cannot run at all (exit status 2), as opposed to a run that fails it."""


def kit_root():
    return os.path.dirname(os.path.abspath(__file__))


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(65536), b""):
            digest.update(block)
    return digest.hexdigest()


def files_under(folder):
    found = []
    for current, _folders, names in os.walk(folder):
        for name in names:
            found.append(os.path.relpath(os.path.join(current, name), folder))
    return sorted(found)


def copy_run(run_dir, copy_to, say):
    """Copy the run folder: (the copy, the folder to remove afterwards, files that differ)."""
    source = os.path.abspath(run_dir)
    name = os.path.basename(source.rstrip(os.sep)) or "run"
    if copy_to:
        target_parent = os.path.abspath(copy_to)
        if (target_parent + os.sep).startswith(source + os.sep):
            raise CannotCheck(say("copy_inside"))
        os.makedirs(target_parent, exist_ok=True)
    else:
        target_parent = tempfile.mkdtemp(prefix="check-pilot-")
    target = os.path.join(target_parent, name)
    if os.path.exists(target):
        raise CannotCheck(say("copy_exists", path=target))
    shutil.copytree(source, target)
    differs = [
        relative
        for relative in files_under(source)
        if not os.path.isfile(os.path.join(target, relative))
        or sha256_file(os.path.join(source, relative))
        != sha256_file(os.path.join(target, relative))
    ]
    return target, target_parent, differs


def load_config(path, say):
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
        expected_types = {
            "input_dir": str,
            "input_extensions": list,
            "allowed_categories": list,
            "expected_documents": int,
            "expected_rejections": list,
        }
        for key, kind in expected_types.items():
            if key == "expected_rejections" and key not in config:
                continue
            if not isinstance(config.get(key), kind) or isinstance(config.get(key), bool):
                raise ValueError(f"{key} must be a {kind.__name__}")
    except (OSError, ValueError) as error:
        raise CannotCheck(say("config_unreadable", path=path, error=error)) from None
    return config


def input_files(config, root):
    """{identifier: relative path} of the pilot's input, the reference of every check."""
    folder = os.path.join(root, config["input_dir"])
    found = {}
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            stem, extension = os.path.splitext(name)
            if name.startswith(".") or extension not in config["input_extensions"]:
                continue
            found.setdefault(stem, "/".join((config["input_dir"].rstrip("/"), name)))
    return found


def read_copy(copy_dir, say, problems):
    """(summary or None, records) as read back from the copy; each problem is recorded."""
    summary = None
    try:
        with open(os.path.join(copy_dir, SUMMARY_FILE), encoding="utf-8") as handle:
            summary = json.load(handle)
        if not isinstance(summary, dict):
            summary = None
    except (OSError, ValueError):
        summary = None
    if summary is None:
        problems.append(say("summary_missing", name=SUMMARY_FILE))
    records = []
    path = os.path.join(copy_dir, RESULTS_FILE)
    if not os.path.isfile(path):
        problems.append(say("results_missing", name=RESULTS_FILE))
        return summary, records
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                problems.append(say("bad_line", name=RESULTS_FILE, line=number))
                continue
            if not isinstance(record, dict):
                problems.append(say("bad_line", name=RESULTS_FILE, line=number))
            elif not isinstance(record.get("id"), str) or not record["id"].strip():
                problems.append(say("no_id", name=RESULTS_FILE, line=number))
            else:
                records.append(record)
    return summary, records


def check_records(records, inputs, config, root, say, problems):
    """The criteria on the results themselves; returns (accepted, rejected) counts."""
    allowed = list(config["allowed_categories"])
    expected = config["expected_documents"]
    if len(inputs) != expected:
        problems.append(
            say("input_count", path=config["input_dir"], found=len(inputs), expected=expected)
        )
    times = {}
    for record in records:
        times[record["id"]] = times.get(record["id"], 0) + 1
    for doc_id in sorted(inputs):
        if doc_id not in times:
            problems.append(say("missing", doc_id=doc_id))
    for doc_id in sorted(times):
        if doc_id not in inputs:
            problems.append(say("invented", doc_id=doc_id, path=config["input_dir"]))
        elif times[doc_id] > 1:
            problems.append(say("duplicate", doc_id=doc_id, times=times[doc_id]))
    accepted = rejected = 0
    checked_sums = set()
    for record in records:
        doc_id, status = record["id"], record.get("status")
        if status == "accepted":
            accepted += 1
            category = record.get("category")
            if category not in allowed:
                problems.append(
                    say(
                        "bad_category", doc_id=doc_id, category=category, allowed=", ".join(allowed)
                    )
                )
            if doc_id in config.get("expected_rejections", []):
                problems.append(say("expected_rejection", doc_id=doc_id))
        elif status == "rejected":
            rejected += 1
            reason = record.get("reason")
            if not isinstance(reason, str) or not reason.strip():
                problems.append(say("no_reason", doc_id=doc_id))
        else:
            problems.append(say("bad_status", doc_id=doc_id, status=status))
        if doc_id in inputs and doc_id not in checked_sums:
            checked_sums.add(doc_id)
            if record.get("sha256") != sha256_file(os.path.join(root, inputs[doc_id])):
                problems.append(say("checksum", doc_id=doc_id, path=inputs[doc_id]))
    if accepted + rejected != expected:
        problems.append(
            say(
                "count",
                accepted=accepted,
                rejected=rejected,
                total=accepted + rejected,
                expected=expected,
            )
        )
    return accepted, rejected


def check_summary(summary, records, counts, config, say, problems):
    """The summary must be finished, agree with the results and say how they were made."""
    if summary is None:
        return
    accepted, rejected = counts
    if summary.get("status") != "complete":
        problems.append(say("not_complete", status=summary.get("status")))
    if (summary.get("accepted"), summary.get("rejected")) != (accepted, rejected):
        problems.append(
            say(
                "summary_counts",
                summary=SUMMARY_FILE,
                s_accepted=summary.get("accepted"),
                s_rejected=summary.get("rejected"),
                accepted=accepted,
                rejected=rejected,
            )
        )
    if not isinstance(summary.get("config"), dict):
        problems.append(say("no_parameters", summary=SUMMARY_FILE))
    elif summary["config"] != config:
        problems.append(say("other_parameters"))
    code = summary.get("code")
    if not isinstance(code, dict) or not code.get("version"):
        problems.append(say("no_code", summary=SUMMARY_FILE))
    run_id = summary.get("run_id")
    for record in records:
        if record.get("run_id") != run_id:
            problems.append(
                say("reused", doc_id=record["id"], other=record.get("run_id"), run_id=run_id)
            )


def samples(records, inputs, say, count=3):
    """A few results beside their inputs, for the reading no check replaces."""
    chosen = [r for r in records if r.get("status") == "rejected"][:1]
    chosen += [r for r in records if r.get("status") == "accepted"][: count - len(chosen)]
    lines = []
    for record in chosen:
        path = inputs.get(record["id"], "?")
        if record.get("status") == "accepted":
            lines.append(
                say("sample_accepted", doc_id=record["id"], category=record["category"], path=path)
            )
        else:
            lines.append(
                say("sample_rejected", doc_id=record["id"], reason=record.get("reason"), path=path)
            )
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--copy-to", metavar="DIR", help="keep the copy in DIR/<run name>")
    parser.add_argument("--config", help="the criteria (default: config/pilot.json of the kit)")
    parser.add_argument("--lang", choices=("en", "it"), default=DEFAULT_LANGUAGE)
    arguments = parser.parse_args(argv)
    say = Messages(arguments.lang)
    root = kit_root()
    copy_parent = None
    try:
        if not os.path.isdir(arguments.run_dir):
            raise CannotCheck(say("no_run_dir", path=arguments.run_dir))
        config = load_config(arguments.config or os.path.join(root, "config", "pilot.json"), say)
        copy_dir, copy_parent, differs = copy_run(arguments.run_dir, arguments.copy_to, say)
    except CannotCheck as error:
        print(error, file=sys.stderr)
        return 2
    try:
        print(say("copied", path=copy_dir, count=len(files_under(copy_dir))))
        problems = [say("copy_differs", name=name) for name in differs]
        inputs = input_files(config, root)
        summary, records = read_copy(copy_dir, say, problems)
        counts = check_records(records, inputs, config, root, say, problems)
        check_summary(summary, records, counts, config, say, problems)
        print(
            say(
                "run_line",
                run_id=(summary or {}).get("run_id"),
                total=len(records),
                accepted=counts[0],
                rejected=counts[1],
            )
        )
        if problems:
            print(say("failed", count=len(problems)))
            for problem in problems:
                print("  - " + problem)
        else:
            print(say("ok", expected=config["expected_documents"]))
            print(say("look"))
            for line in samples(records, inputs, say):
                print(line)
    finally:
        if arguments.copy_to:
            print(say("copy_kept", path=copy_dir))
        else:
            shutil.rmtree(copy_parent, ignore_errors=True)
            print(say("copy_removed"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
