"""The shipped classifier on the shipped folder, then check_pilot.py on what it wrote: the
verdict passes on a real run and fails, with its own message, on each way a run can go wrong."""

import json
import os

import pytest

from .conftest import (
    check,
    classify,
    problems,
    read_records,
    read_summary,
    write_records,
    write_summary,
)

ALLOWED = "invoice, contract, report, letter"


def test_a_run_of_the_shipped_classifier_passes_the_check_from_a_copy(kit, finished_run):
    records = read_records(finished_run)
    assert [record["id"] for record in records] == [f"DOC-{n:02d}" for n in range(1, 13)]
    rejected = [record for record in records if record["status"] == "rejected"]
    assert [record["id"] for record in rejected] == ["DOC-09"]
    assert rejected[0]["reason"] == "unreadable: not valid UTF-8 text (byte 0xe2 at offset 10)"
    assert {record["category"] for record in records if record["status"] == "accepted"} == {
        "invoice",
        "contract",
        "report",
        "letter",
    }
    summary = read_summary(finished_run)
    assert (summary["status"], summary["accepted"], summary["rejected"]) == ("complete", 11, 1)
    assert summary["config"] == json.loads((kit / "config/pilot.json").read_text())
    assert summary["code"]["version"] and len(summary["code"]["sha256"]) == 64

    checked = check(kit, "runs/try-01")

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "Verdict: OK." in checked.stdout
    assert "11 accepted, 1 rejected" in checked.stdout
    assert "DOC-09: rejected, unreadable" in checked.stdout
    copy_line = next(line for line in checked.stdout.splitlines() if line.startswith("Copy: "))
    copy = copy_line.removeprefix("Copy: ").split(" (")[0]
    assert copy != str(finished_run) and not os.path.exists(copy)  # a temporary copy, removed
    assert "The temporary copy was removed" in checked.stdout


def test_copy_to_keeps_the_copy_it_re_read_and_never_overwrites_one(kit, finished_run, tmp_path):
    place = tmp_path / "my-own-place"

    checked = check(kit, "runs/try-01", "--copy-to", place)

    assert checked.returncode == 0, checked.stdout
    copy = place / "try-01"
    assert f"The copy stays in {copy}." in checked.stdout
    for name in ("results.jsonl", "summary.json"):
        assert (copy / name).read_bytes() == (finished_run / name).read_bytes()

    again = check(kit, "runs/try-01", "--copy-to", place)
    assert again.returncode == 2
    assert "already exists: a copy is never overwritten" in again.stderr


def drop(doc_ids):
    def mutate(run_dir):
        write_records(run_dir, [r for r in read_records(run_dir) if r["id"] not in doc_ids])

    return mutate


def duplicate(run_dir):
    records = read_records(run_dir)
    write_records(run_dir, records + [next(r for r in records if r["id"] == "DOC-03")])


def invent(run_dir):
    records = read_records(run_dir)
    write_records(run_dir, records + [{**records[0], "id": "DOC-13"}])


def change(doc_id, **fields):
    def mutate(run_dir):
        records = read_records(run_dir)
        for record in records:
            if record["id"] == doc_id:
                record.update(fields)
                for key, value in fields.items():
                    if value is None:
                        del record[key]
        write_records(run_dir, records)

    return mutate


def summary_change(**fields):
    def mutate(run_dir):
        write_summary(run_dir, {**read_summary(run_dir), **fields})

    return mutate


MUTATIONS = {
    "missing id": (
        drop({"DOC-05"}),
        [
            "DOC-05 is missing from the results",
            "accepted (10) + rejected (1) = 11, expected 12",
            "summary.json says 11 accepted and 1 rejected; the results hold 10 and 1",
        ],
    ),
    "duplicate": (
        duplicate,
        [
            "DOC-03 appears 2 times in the results (exactly once expected)",
            "accepted (12) + rejected (1) = 13, expected 12",
            "summary.json says 11 accepted and 1 rejected; the results hold 12 and 1",
        ],
    ),
    "invented id": (
        invent,
        [
            "DOC-13 is in the results but not in data/pilot: an invented identifier",
            "accepted (12) + rejected (1) = 13, expected 12",
            "summary.json says 11 accepted and 1 rejected; the results hold 12 and 1",
        ],
    ),
    "disallowed category": (
        change("DOC-02", category="memo"),
        [f"DOC-02 accepted with category 'memo', which is not allowed ({ALLOWED})"],
    ),
    "accepted without a category": (
        change("DOC-02", category=None),
        [f"DOC-02 accepted with category None, which is not allowed ({ALLOWED})"],
    ),
    "rejection with an empty reason": (
        change("DOC-09", reason="  "),
        ["DOC-09 rejected without a reason"],
    ),
    "rejection without a reason": (
        change("DOC-09", reason=None),
        ["DOC-09 rejected without a reason"],
    ),
    "count other than 12": (
        drop({"DOC-11", "DOC-12"}),
        [
            "DOC-11 is missing from the results",
            "DOC-12 is missing from the results",
            "accepted (9) + rejected (1) = 10, expected 12",
            "summary.json says 11 accepted and 1 rejected; the results hold 9 and 1",
        ],
    ),
    "summary counts that disagree": (
        summary_change(accepted=12),
        ["summary.json says 12 accepted and 1 rejected; the results hold 11 and 1"],
    ),
    "unknown status": (
        change("DOC-04", status="maybe"),
        [
            "DOC-04: status 'maybe', expected accepted or rejected",
            "accepted (10) + rejected (1) = 11, expected 12",
            "summary.json says 11 accepted and 1 rejected; the results hold 10 and 1",
        ],
    ),
    "the invalid case accepted": (
        change("DOC-09", status="accepted", category="report", reason=None),
        [
            "DOC-09 was meant to be rejected, but it was accepted",
            "summary.json says 11 accepted and 1 rejected; the results hold 12 and 0",
        ],
    ),
    "another input": (
        change("DOC-07", sha256="0" * 64),
        [
            "DOC-07 was classified from another input: its checksum differs from "
            "data/pilot/DOC-07.txt"
        ],
    ),
    "unfinished run": (
        summary_change(status="running"),
        [
            "the run did not finish (status 'running'): see which documents are left with "
            "python3 src/classify.py --status RUN_DIR, finish with --resume RUN_DIR"
        ],
    ),
    "no parameters in the summary": (
        summary_change(config=None),
        ["summary.json does not hold the parameters of the run"],
    ),
    "no code version in the summary": (
        summary_change(code={}),
        ["summary.json does not say which code version produced the results"],
    ),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_each_mutation_of_the_results_fails_the_check_with_its_message(kit, finished_run, name):
    mutate, expected = MUTATIONS[name]
    mutate(finished_run)

    checked = check(kit, "runs/try-01")

    assert checked.returncode == 1, checked.stdout
    assert f"Verdict: FAILED, {len(expected)} problem(s):" in checked.stdout
    assert problems(checked.stdout) == expected
    assert "Verdict: OK" not in checked.stdout


def test_a_results_line_that_is_not_json_is_named(kit, finished_run):
    path = finished_run / "results.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = lines[3][:40]
    path.write_text("\n".join(lines) + "\n")

    checked = check(kit, "runs/try-01")

    assert checked.returncode == 1
    assert problems(checked.stdout)[:2] == [
        "results.jsonl line 4 is not a JSON record",
        "DOC-04 is missing from the results",
    ]


def test_a_reused_run_folder_is_refused_by_the_classifier_and_left_as_it_was(kit, finished_run):
    before = {name: (finished_run / name).read_bytes() for name in os.listdir(finished_run)}

    again = classify(kit, "--run-dir", "runs/try-01")

    assert again.returncode == 3
    assert again.stderr.strip() == (
        "runs/try-01 already exists: every try needs a new run folder, this one is refused. "
        "Choose another name (or none, for a timestamped one), or finish this try with "
        "--resume runs/try-01."
    )
    assert again.stdout == ""
    after = {name: (finished_run / name).read_bytes() for name in os.listdir(finished_run)}
    assert after == before
    assert check(kit, "runs/try-01").returncode == 0


def test_results_of_another_run_in_the_folder_are_flagged_as_a_reused_folder(kit, finished_run):
    assert classify(kit, "--run-dir", "runs/try-02").returncode == 0
    other = next(r for r in read_records(kit / "runs" / "try-02") if r["id"] == "DOC-04")
    records = [other if r["id"] == "DOC-04" else r for r in read_records(finished_run)]
    write_records(finished_run, records)
    run_id = read_summary(finished_run)["run_id"]

    checked = check(kit, "runs/try-01")

    assert checked.returncode == 1
    assert problems(checked.stdout) == [
        f"DOC-04 was written by another run ({other['run_id']}, not {run_id}): the run folder "
        "was reused"
    ]


def test_without_a_name_each_try_gets_a_new_timestamped_folder(kit):
    first = classify(kit)

    assert first.returncode == 0, first.stderr
    runs = [name for name in os.listdir(kit / "runs") if not name.startswith(".")]
    assert len(runs) == 1
    assert runs[0][:2] == "20" and runs[0].endswith("Z")
    assert check(kit, f"runs/{runs[0]}").returncode == 0


def test_the_italian_kit_speaks_italian_by_default_and_english_on_request(kit_it):
    ran = classify(kit_it, "--run-dir", "runs/prova-01")
    assert ran.returncode == 0
    assert (
        "DOC-09  rifiutato  illeggibile: non è testo UTF-8 valido (byte 0xe2 alla posizione 10)"
        in ran.stdout
    )
    assert "Fatto: accettati 11, rifiutati 1, in tutto 12." in ran.stdout

    checked = check(kit_it, "runs/prova-01")
    assert checked.returncode == 0
    assert "Esito: OK." in checked.stdout
    assert "un output sintatticamente valido può restare errato per l'uso" in checked.stdout

    drop({"DOC-05"})(kit_it / "runs" / "prova-01")
    failed = check(kit_it, "runs/prova-01")
    assert failed.returncode == 1
    assert "Esito: NON SUPERATO, 3 problema/i:" in failed.stdout
    assert problems(failed.stdout)[:2] == [
        "DOC-05 manca dai risultati",
        "accettati (10) + rifiutati (1) = 11, attesi 12",
    ]
    in_english = check(kit_it, "runs/prova-01", "--lang", "en")
    assert problems(in_english.stdout)[0] == "DOC-05 is missing from the results"

    refused = classify(kit_it, "--run-dir", "runs/prova-01")
    assert refused.returncode == 3
    assert "runs/prova-01 esiste già: ogni prova richiede una cartella di risultati nuova" in (
        refused.stderr
    )


def test_the_english_kit_speaks_italian_with_lang_it(kit, finished_run):
    checked = check(kit, "runs/try-01", "--lang", "it")

    assert "Esito: OK." in checked.stdout


def edit_config(kit, **changes):
    path = kit / "config" / "pilot.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def test_a_credential_in_the_parameters_file_stops_the_run_before_anything_is_written(kit):
    edit_config(kit, hf_token="hf_abc")

    refused = classify(kit, "--run-dir", "runs/try-01")

    assert refused.returncode == 2
    assert "the key 'hf_token' looks like a credential" in refused.stderr
    assert "environment variables or a file outside this folder" in refused.stderr
    assert not (kit / "runs" / "try-01").exists()


def test_a_path_into_a_home_directory_is_refused(kit):
    edit_config(kit, input_dir="~/documents/pilot")

    refused = classify(kit, "--run-dir", "runs/try-01")

    assert refused.returncode == 2
    assert "must be relative to the project folder" in refused.stderr
    assert not (kit / "runs" / "try-01").exists()


def test_an_input_folder_that_no_longer_holds_twelve_documents_is_refused(kit, finished_run):
    (kit / "data" / "pilot" / "DOC-13.txt").write_text("Dear Ada, kind regards.")

    refused = classify(kit, "--run-dir", "runs/try-02")
    checked = check(kit, "runs/try-01")

    assert refused.returncode == 2
    assert "data/pilot holds 13 documents; config/pilot.json expects 12" in refused.stderr
    assert not (kit / "runs" / "try-02").exists()
    assert checked.returncode == 1
    assert problems(checked.stdout) == [
        "data/pilot holds 13 documents; config/pilot.json expects 12",
        "DOC-13 is missing from the results",
    ]


def test_the_check_of_a_folder_that_does_not_exist_says_so(kit):
    checked = check(kit, "runs/never-ran")

    assert checked.returncode == 2
    assert "runs/never-ran is not a folder" in checked.stderr


def test_a_broken_parameters_file_is_named_by_the_classifier_and_the_check(kit, finished_run):
    (kit / "config" / "pilot.json").write_text('{"allowed_categories": ["invoice",')

    refused = classify(kit, "--run-dir", "runs/try-02")
    checked = check(kit, "runs/try-01")

    assert refused.returncode == 2
    assert "cannot read the configuration" in refused.stderr
    assert not (kit / "runs" / "try-02").exists()
    assert checked.returncode == 2
    assert "cannot read the configuration" in checked.stderr
    assert "Verdict" not in checked.stdout
