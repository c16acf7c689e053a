"""The pilot's application: classify the documents of data/pilot into runs/<new folder>/.

    python3 src/classify.py                      a new try, in runs/<UTC date and time>
    python3 src/classify.py --run-dir runs/try-01
    python3 src/classify.py --status runs/try-01 which documents are done, which to redo
    python3 src/classify.py --resume runs/try-01 keep the done ones, process the rest

Standard library only, Python >= 3.8. Exit status: 0 done, 2 bad parameters or input, 3 the run
folder already exists (a try never reuses one), 1 anything else that stopped the run.
"""

import argparse
import os
import secrets
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from inputs import PilotError, list_inputs, load_config, project_root, sha256_of  # noqa: E402
from messages import DEFAULT_LANGUAGE, LANGUAGES, message  # noqa: E402
from rules import Classifier  # noqa: E402
from run_folder import (  # noqa: E402
    RESULTS_FILE,
    create_run_folder,
    default_run_name,
    now_utc,
    read_results,
    read_summary,
    write_results,
    write_summary,
)

CODE_NAME = "gpu-rental pilot classifier"
CODE_VERSION = "1.0"


def code_fingerprint():
    """The code revision recorded in every summary: a digest of src/*.py as it ran."""
    folder = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as handle:
                parts.append(name.encode("utf-8") + b"\0" + handle.read())
    return sha256_of(b"\0\0".join(parts))


def build_record(*, doc_id, relative, raw, outcome, run_id, language):
    record = {
        "id": doc_id,
        "status": outcome.status,
        "input": relative,
        "sha256": sha256_of(raw),
        "run_id": run_id,
        "processed_at": now_utc().isoformat(),
    }
    if outcome.status == "accepted":
        record["category"] = outcome.category
    else:
        code, values = outcome.reason
        record["reason_code"] = code
        record["reason"] = message(language, "reason_" + code, **values)
    return record


def summary_of(*, base, records, inputs, complete):
    accepted = [record["id"] for record in records if record["status"] == "accepted"]
    rejected = [record["id"] for record in records if record["status"] == "rejected"]
    by_category = {}
    for record in records:
        if record["status"] == "accepted":
            by_category[record["category"]] = by_category.get(record["category"], 0) + 1
    summary = dict(base)
    summary.update(
        {
            "status": "complete" if complete else "running",
            "documents": len(inputs),
            "processed": len(records),
            "accepted": len(accepted),
            "rejected": len(rejected),
            "accepted_ids": accepted,
            "rejected_ids": rejected,
            "by_category": by_category,
            "results_file": RESULTS_FILE,
        }
    )
    if complete:
        summary["finished_at"] = now_utc().isoformat()
    return summary


def process(*, run_dir, inputs, records, classifier, summary_base, language, pause, root):
    """Classify every input without a record, writing results after each one."""
    done = {record["id"] for record in records}
    for doc_id, relative in inputs:
        if doc_id in done:
            continue
        with open(os.path.join(root, relative), "rb") as handle:
            raw = handle.read()
        outcome = classifier.classify(raw)
        record = build_record(
            doc_id=doc_id,
            relative=relative,
            raw=raw,
            outcome=outcome,
            run_id=summary_base["run_id"],
            language=language,
        )
        records.append(record)
        records.sort(key=lambda item: item["id"])
        write_results(run_dir, records)
        if outcome.status == "accepted":
            print(message(language, "line_accepted", doc_id=doc_id, category=outcome.category))
        else:
            print(message(language, "line_rejected", doc_id=doc_id, reason=record["reason"]))
        sys.stdout.flush()
        if pause:
            time.sleep(pause)
    summary = summary_of(base=summary_base, records=records, inputs=inputs, complete=True)
    write_summary(run_dir, summary)
    print(
        message(
            language,
            "done",
            accepted=summary["accepted"],
            rejected=summary["rejected"],
            total=summary["processed"],
            run_dir=run_dir,
        )
    )


def checked_records(run_dir, inputs, root):
    """The results a resumed run keeps: each must belong to the input and match its bytes."""
    by_id = dict(inputs)
    records = []
    seen = set()
    for record in read_results(run_dir):
        doc_id = record["id"]
        if doc_id not in by_id:
            raise PilotError("run_unknown_id", path=run_dir, doc_id=doc_id)
        if doc_id in seen:
            continue
        with open(os.path.join(root, by_id[doc_id]), "rb") as handle:
            if sha256_of(handle.read()) != record.get("sha256"):
                raise PilotError("run_input_changed", path=run_dir, doc_id=doc_id)
        seen.add(doc_id)
        records.append(record)
    return records


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--run-dir", help="the new run folder (default: runs/<UTC time>)")
    choice.add_argument("--resume", metavar="RUN_DIR", help="finish an interrupted run")
    choice.add_argument("--status", metavar="RUN_DIR", help="list done and to-redo documents")
    parser.add_argument("--config", help="parameters file (default: config/pilot.json)")
    parser.add_argument("--lang", choices=LANGUAGES, default=DEFAULT_LANGUAGE)
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait after each document, to try an interruption and a resume",
    )
    arguments = parser.parse_args(argv)
    if arguments.pause < 0:
        parser.error("--pause must be zero or more seconds")
    return arguments


def new_run(*, run_dir, config, config_path, config_sha, inputs, root, language):
    """Create the try's folder and its first summary; returns the summary's fixed part."""
    create_run_folder(run_dir)
    base = {
        "run_id": now_utc().strftime("%Y%m%dT%H%M%SZ-") + secrets.token_hex(4),
        "started_at": now_utc().isoformat(),
        "resumed_at": [],
        "language": language,
        "input_dir": config["input_dir"],
        "config_file": os.path.relpath(config_path, root).replace(os.sep, "/"),
        "config_sha256": config_sha,
        "config": config,
        "code": {"name": CODE_NAME, "version": CODE_VERSION, "sha256": code_fingerprint()},
        "python": sys.version.split()[0],
    }
    input_dir = os.path.join(root, config["input_dir"])
    print(message(language, "start", run_dir=run_dir, input_dir=input_dir, count=len(inputs)))
    write_summary(run_dir, summary_of(base=base, records=[], inputs=inputs, complete=False))
    return base


def resumed_run(*, run_dir, config, inputs, root, language):
    """(summary's fixed part, records kept), or None when nothing is left to do."""
    summary = read_summary(run_dir)
    if summary.get("config") != config:
        raise PilotError("run_config_changed", path=run_dir)
    records = checked_records(run_dir, inputs, root)
    done = {record["id"] for record in records}
    todo = [doc_id for doc_id, _ in inputs if doc_id not in done]
    if not todo and summary.get("status") == "complete":
        print(message(language, "nothing_to_redo", run_dir=run_dir, count=len(inputs)))
        return None
    print(
        message(
            language,
            "resume_start",
            run_dir=run_dir,
            done=len(records),
            todo=len(todo),
            todo_ids=", ".join(todo) or message(language, "none"),
        )
    )
    base = {key: value for key, value in summary.items() if key != "finished_at"}
    base["resumed_at"] = list(summary.get("resumed_at", [])) + [now_utc().isoformat()]
    # Until it finishes, the resumed try is not complete, whatever it was before.
    write_summary(run_dir, summary_of(base=base, records=records, inputs=inputs, complete=False))
    return base, records


def main(argv=None):
    arguments = parse_arguments(argv)
    language = arguments.lang
    root = project_root()
    config_path = arguments.config or os.path.join(root, "config", "pilot.json")
    run_dir = arguments.resume or arguments.run_dir
    try:
        config, config_sha = load_config(config_path)
        inputs = list_inputs(config, root)
        if arguments.status:
            return show_status(arguments.status, inputs, language)
        classifier = Classifier(
            allowed_categories=config["allowed_categories"],
            keywords=config["keywords"],
            min_score=config["min_score"],
            max_document_bytes=config["max_document_bytes"],
        )
        if arguments.resume:
            resumed = resumed_run(
                run_dir=run_dir, config=config, inputs=inputs, root=root, language=language
            )
            if resumed is None:
                return 0
            base, records = resumed
        else:
            if run_dir is None:
                run_dir = os.path.join(root, config["output_root"], default_run_name())
            base = new_run(
                run_dir=run_dir,
                config=config,
                config_path=config_path,
                config_sha=config_sha,
                inputs=inputs,
                root=root,
                language=language,
            )
            records = []
        process(
            run_dir=run_dir,
            inputs=inputs,
            records=records,
            classifier=classifier,
            summary_base=base,
            language=language,
            pause=arguments.pause,
            root=root,
        )
    except PilotError as error:
        print(message(language, error.key, **error.values), file=sys.stderr)
        return error.exit_status
    except KeyboardInterrupt:
        print(message(language, "interrupted", run_dir=run_dir), file=sys.stderr)
        return 130
    return 0


def show_status(run_dir, inputs, language):
    """Which documents of a run are done and which a resume would redo; changes nothing."""
    summary = read_summary(run_dir)
    done = sorted({record["id"] for record in read_results(run_dir)} & {i for i, _ in inputs})
    todo = [doc_id for doc_id, _ in inputs if doc_id not in done]
    complete = summary.get("status") == "complete" and not todo
    state = message(language, "status_complete" if complete else "status_incomplete")
    none = message(language, "none")
    print(
        message(
            language, "status_head", run_dir=run_dir, state=state, done=len(done), count=len(inputs)
        )
    )
    print(message(language, "status_done", ids=", ".join(done) or none))
    print(message(language, "status_todo", ids=", ".join(todo) or none))
    if not complete:
        print(message(language, "status_resume", run_dir=run_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
