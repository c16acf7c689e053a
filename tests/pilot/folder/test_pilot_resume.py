"""Resuming a batch of independent documents from the run folder: the done ones are kept, the
others redone, and the run then passes the check."""

import os
import signal
import subprocess
import sys
import time

from .conftest import check, classify, problems, read_records, read_summary, write_records

ALL = [f"DOC-{n:02d}" for n in range(1, 13)]


def kill_after(kit, run_name, documents):
    """Start a try that pauses after each document; kill it (SIGKILL) after `documents`."""
    process = subprocess.Popen(
        [sys.executable, "src/classify.py", "--run-dir", f"runs/{run_name}", "--pause", "0.25"],
        cwd=kit,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    results = kit / "runs" / run_name / "results.jsonl"
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if results.exists() and len(results.read_text().splitlines()) >= documents:
                break
            time.sleep(0.01)
        else:
            raise AssertionError("the try wrote no results in time")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return kit / "runs" / run_name


def test_a_killed_try_is_resumed_from_its_folder_and_then_passes_the_check(kit):
    run_dir = kill_after(kit, "try-01", 4)
    kept = read_records(run_dir)
    done = [record["id"] for record in kept]
    assert 4 <= len(done) < 12 and done == ALL[: len(done)]
    todo = ALL[len(done) :]

    unfinished = check(kit, "runs/try-01")
    assert unfinished.returncode == 1
    assert problems(unfinished.stdout)[: len(todo)] == [
        f"{doc_id} is missing from the results" for doc_id in todo
    ]
    assert any(
        "the run did not finish (status 'running')" in p for p in problems(unfinished.stdout)
    )

    status = classify(kit, "--status", "runs/try-01")
    assert status.returncode == 0
    assert status.stdout.splitlines() == [
        f"runs/try-01: interrupted or still running, {len(done)} of 12 documents done",
        "done:     " + ", ".join(done),
        "to redo:  " + ", ".join(todo),
        "Resume with: python3 src/classify.py --resume runs/try-01",
    ]
    assert read_records(run_dir) == kept  # --status changes nothing

    resumed = classify(kit, "--resume", "runs/try-01")

    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[0] == (
        f"Resuming runs/try-01: {len(done)} done and kept, {len(todo)} to redo: " + ", ".join(todo)
    )
    records = read_records(run_dir)
    assert [record["id"] for record in records] == ALL
    assert records[: len(kept)] == kept  # the done ones are kept as they were, not redone
    summary = read_summary(run_dir)
    assert summary["status"] == "complete" and len(summary["resumed_at"]) == 1
    assert {record["run_id"] for record in records} == {summary["run_id"]}
    checked = check(kit, "runs/try-01")
    assert checked.returncode == 0, checked.stdout
    assert "Verdict: OK." in checked.stdout


def test_results_lost_from_a_finished_try_are_redone_on_resume(kit, finished_run):
    write_records(finished_run, read_records(finished_run)[:5])

    status = classify(kit, "--status", "runs/try-01")
    assert "to redo:  " + ", ".join(ALL[5:]) in status.stdout

    resumed = classify(kit, "--resume", "runs/try-01")

    assert resumed.returncode == 0, resumed.stderr
    assert [record["id"] for record in read_records(finished_run)] == ALL
    assert check(kit, "runs/try-01").returncode == 0


def test_resuming_a_complete_try_changes_nothing(kit, finished_run):
    before = (finished_run / "results.jsonl").read_bytes()

    resumed = classify(kit, "--resume", "runs/try-01")

    assert resumed.returncode == 0
    assert resumed.stdout.strip() == (
        "runs/try-01: all 12 documents have a result, nothing to redo."
    )
    assert (finished_run / "results.jsonl").read_bytes() == before


def test_a_resume_refuses_changed_parameters_or_a_changed_input(kit, finished_run):
    write_records(finished_run, read_records(finished_run)[:5])
    before = (finished_run / "results.jsonl").read_bytes()

    config = kit / "config" / "pilot.json"
    original = config.read_text()
    config.write_text(original.replace('"min_score": 2', '"min_score": 3'))
    refused = classify(kit, "--resume", "runs/try-01")
    assert refused.returncode == 2
    assert "config/pilot.json changed since runs/try-01 started" in refused.stderr

    config.write_text(original)
    with open(kit / "data" / "pilot" / "DOC-02.txt", "a") as document:
        document.write("One more line.\n")
    refused = classify(kit, "--resume", "runs/try-01")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "DOC-02 changed since runs/try-01 started (its checksum differs): the pilot input must "
        "stay unchanged. Start a new run instead."
    )
    assert (finished_run / "results.jsonl").read_bytes() == before


def test_a_resume_refuses_a_folder_that_is_not_a_run(kit):
    (kit / "runs" / "elsewhere").mkdir()

    refused = classify(kit, "--resume", "runs/elsewhere")

    assert refused.returncode == 2
    assert "runs/elsewhere is not a run folder of this pilot" in refused.stderr


def test_the_italian_status_names_done_and_to_redo(kit_it):
    assert classify(kit_it, "--run-dir", "runs/prova-01").returncode == 0
    run_dir = kit_it / "runs" / "prova-01"
    write_records(run_dir, read_records(run_dir)[:10])

    status = classify(kit_it, "--status", "runs/prova-01")

    assert status.stdout.splitlines() == [
        "runs/prova-01: interrotta o ancora in corso, documenti completati 10 su 12",
        "completati:      " + ", ".join(ALL[:10]),
        "da rielaborare:  DOC-11, DOC-12",
        "Riprendi con: python3 src/classify.py --resume runs/prova-01",
    ]
