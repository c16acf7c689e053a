"""parse_report: what the site accepts from a customer's machine, and every way it refuses.

Each bad input gets its own message, and where JSON Schema can say the same rule, the shipped
report.schema.json refuses it too (so the documentation and the site agree)."""

import copy
import json

import pytest
from django.utils import translation

from pilot.report import MAX_REPORT_BYTES, ReportRejected, parse_report

from .conftest import SCHEMA_PATH

jsonschema = pytest.importorskip("jsonschema")
STEPS = ["interpreter", "driver", "torch", "compute", "extensions", "peak_memory"]


def valid() -> dict:
    """A report as diagnose.py writes it when PyTorch is missing."""
    steps = [
        {
            "name": "interpreter",
            "status": "ok",
            "detail": "Interpreter: /usr/bin/python3",
            "advice": "",
            "data": {"version": "3.12.3", "variables": {"LD_LIBRARY_PATH": None}},
        },
        {
            "name": "driver",
            "status": "ok",
            "detail": "The cards match the order.",
            "advice": "",
            "data": {"reading": {"cards": [{"index": 0, "memory_mib": 81559.0}]}},
        },
        {
            "name": "torch",
            "status": "failed",
            "detail": "PyTorch cannot be imported",
            "advice": "Check the interpreter before reinstalling.",
            "data": {},
        },
    ] + [
        {
            "name": name,
            "status": "skipped",
            "detail": "Not run: step 3 (PyTorch import) failed.",
            "advice": "",
            "data": {},
        }
        for name in STEPS[3:]
    ]
    return {
        "schema": "gpu-rental/diagnostics-report",
        "schema_version": 1,
        "order": {"id": 42, "reference": "GR-000042"},
        "generated_at": "2026-11-20T10:15:00+00:00",
        "tool_version": "1.0.0",
        "language": "en",
        "host": {"hostname": "gpu-node-1", "platform": "Linux-6.8-x86_64", "python": "3.12.3"},
        "steps": steps,
        "step_reached": "torch",
        "first_error": {"step": "torch", "message": "PyTorch cannot be imported"},
        "handover": {
            "expected": {
                "model": "H100 80 GB",
                "cards": 1,
                "memory_gb_per_card": 80,
                "platform": "cuda",
                "host": "gpu-node-1",
            },
            "seen": {
                "model": "NVIDIA H100 80GB HBM3",
                "cards": 1,
                "memory_gb_per_card": 79.6,
                "platform": "cuda",
            },
            "problems": [],
        },
    }


def encoded(document) -> bytes:
    return json.dumps(document).encode()


def schema_accepts(document) -> bool:
    validator = jsonschema.Draft202012Validator(
        json.loads(SCHEMA_PATH.read_text()),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    return validator.is_valid(document)


def test_a_valid_report_is_read_into_its_fields():
    report = parse_report(encoded(valid()))
    assert report.order_id == 42
    assert report.order_reference == "GR-000042"
    assert report.generated_at.isoformat() == "2026-11-20T10:15:00+00:00"
    assert [step.status for step in report.steps] == ["ok", "ok", "failed"] + ["skipped"] * 3
    assert report.step_reached == "torch"
    assert report.first_error.step == "torch"
    assert report.handover.problems == ()
    assert not report.passed
    assert report.document == valid()
    assert schema_accepts(valid())


def test_a_passing_report_and_one_with_handover_problems_are_accepted():
    passing = valid()
    for step in passing["steps"][2:5]:
        step |= {"status": "ok", "advice": "", "detail": "fine"}  # a JSON step, not a row
    passing["steps"][5]["detail"] = "Not run: no --task given."
    passing["step_reached"] = "extensions"
    passing["first_error"] = None
    assert parse_report(encoded(passing)).passed
    assert schema_accepts(passing)

    fewer = valid()
    fewer["handover"]["expected"]["cards"] = 2
    fewer["handover"]["problems"] = ["fewer_cards"]
    assert parse_report(encoded(fewer)).handover.problems == ("fewer_cards",)


def mutate(change):
    document = valid()
    change(document)
    return encoded(document)


def _set(path, value):
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def _del(path):
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def _swap_steps(document):
    document["steps"][0], document["steps"][1] = document["steps"][1], document["steps"][0]


def _duplicate_step(document):
    document["steps"][1] = copy.deepcopy(document["steps"][0])


def _deep(document):
    nested = {}
    for _ in range(10):
        nested = {"level": nested}
    document["steps"][0]["data"] = nested


# (id, raw bytes, message the customer reads, whether the schema refuses it as well)
BAD = [
    ("empty", b"", "The report is empty.", None),
    ("not-utf8", b'{"schema": "\xff\xfe"}', "The report is not UTF-8 text.", None),
    ("not-json", b'{"schema": ', "The report is not valid JSON (line 1, column 12).", None),
    ("a-list", b"[1, 2]", "The report must be a JSON object.", True),
    ("oversized", b" " * (MAX_REPORT_BYTES + 1), "The report is larger than 256 KiB.", None),
    (
        "nan",
        encoded(valid()).replace(b"79.6", b"NaN"),
        "The report contains a number that is not finite (NaN or Infinity).",
        None,
    ),
    (
        "infinity",
        encoded(valid()).replace(b"79.6", b"Infinity"),
        "The report contains a number that is not finite (NaN or Infinity).",
        None,
    ),
    (
        "repeated-key",
        encoded(valid()).replace(b'"tool_version"', b'"language": "en", "tool_version"'),
        "The report repeats the key “language”.",
        None,
    ),
    ("deep-json", b"[" * 100000 + b"]" * 100000, "The report is nested too deeply.", None),
    (
        "other-schema",
        mutate(_set(["schema"], "someone/else")),
        "This is not a diagnostics report of this site (schema “someone/else”).",
        True,
    ),
    (
        "newer-version",
        mutate(_set(["schema_version"], 2)),
        "This report was written by a newer diagnose.py (report version 2); this site reads "
        "version 1. Download the kit again from the order page and run it once more.",
        True,
    ),
    (
        "version-zero",
        mutate(_set(["schema_version"], 0)),
        "Report version 0 is not one this site reads.",
        True,
    ),
    (
        "version-text",
        mutate(_set(["schema_version"], "1")),
        "schema_version must be a whole number.",
        True,
    ),
    (
        "version-bool",
        mutate(_set(["schema_version"], True)),
        "schema_version must be a whole number.",
        True,
    ),
    ("missing-steps", mutate(_del(["steps"])), "The report lacks the field steps.", True),
    (
        "unknown-field",
        mutate(_set(["extra"], 1)),
        "The report has a field this version does not know: extra.",
        True,
    ),
    (
        "order-id-bool",
        mutate(_set(["order", "id"], True)),
        "order.id must be a whole number.",
        True,
    ),
    # JSON Schema counts 42.0 as an integer; the site wants whole numbers written as such.
    (
        "order-id-float",
        mutate(_set(["order", "id"], 42.0)),
        "order.id must be a whole number.",
        False,
    ),
    (
        "order-id-negative",
        mutate(_set(["order", "id"], -1)),
        "order.id must be between 1 and 9223372036854775807.",
        True,
    ),
    (
        "reference-other-order",
        mutate(_set(["order", "reference"], "GR-000043")),
        "order.reference does not match order.id.",
        False,
    ),
    (
        "reference-shape",
        mutate(_set(["order", "reference"], "42")),
        "order.reference does not match order.id.",
        True,
    ),
    (
        "timestamp-naive",
        mutate(_set(["generated_at"], "2026-11-20T10:15:00")),
        "generated_at must be a date and time with a time zone (ISO 8601).",
        True,
    ),
    (
        "timestamp-words",
        mutate(_set(["generated_at"], "yesterday")),
        "generated_at must be a date and time with a time zone (ISO 8601).",
        True,
    ),
    ("language", mutate(_set(["language"], "fr")), "language must be one of: it, en.", True),
    ("hostname-number", mutate(_set(["host", "hostname"], 7)), "host.hostname must be text.", True),
    ("steps-not-list", mutate(_set(["steps"], {})), "steps must be a list.", True),
    (
        "unknown-step",
        mutate(_set(["steps", 1, "name"], "network")),
        "steps[1].name must be one of: interpreter, driver, torch, compute, extensions, "
        "peak_memory.",
        True,
    ),
    (
        "unknown-status",
        mutate(_set(["steps", 0, "status"], "passed")),
        "steps[0].status must be one of: ok, failed, skipped.",
        True,
    ),
    (
        "steps-out-of-order",
        mutate(_swap_steps),
        "The report must list the six steps in this order: interpreter, driver, torch, compute, "
        "extensions, peak_memory.",
        True,
    ),
    ("step-twice", mutate(_duplicate_step), "Step interpreter appears twice.", True),
    (
        "step-missing",
        mutate(lambda d: d["steps"].pop()),
        "The report must list the six steps in this order: interpreter, driver, torch, compute, "
        "extensions, peak_memory.",
        True,
    ),
    (
        "step-extra-field",
        mutate(_set(["steps", 0, "colour"], "red")),
        "The report has a field this version does not know: steps[0].colour.",
        True,
    ),
    (
        "detail-too-long",
        mutate(_set(["steps", 0, "detail"], "x" * 4001)),
        "steps[0].detail is longer than 4000 characters.",
        True,
    ),
    (
        "advice-too-long",
        mutate(_set(["steps", 2, "advice"], "x" * 2001)),
        "steps[2].advice is longer than 2000 characters.",
        True,
    ),
    (
        "data-not-object",
        mutate(_set(["steps", 0, "data"], [])),
        "steps[0].data must be an object.",
        True,
    ),
    (
        "data-string-too-long",
        mutate(_set(["steps", 0, "data", "version"], "x" * 1001)),
        "steps[0].data.version is longer than 1000 characters.",
        False,
    ),
    (
        "data-too-deep",
        mutate(_deep),
        "steps[0].data.level.level.level.level.level.level.level is nested too deeply.",
        False,
    ),
    (
        "ran-after-failure",
        mutate(_set(["steps", 3, "status"], "ok")),
        "Step compute follows a failed step but is not marked skipped.",
        False,
    ),
    (
        "skipped-without-failure",
        mutate(_set(["steps", 1, "status"], "skipped")),
        "Step driver is skipped although no step before it failed.",
        False,
    ),
    (
        "step-reached-wrong",
        mutate(_set(["step_reached"], "driver")),
        "step_reached says driver, the steps say torch.",
        False,
    ),
    (
        "first-error-null",
        mutate(_set(["first_error"], None)),
        "Step torch failed but first_error is null.",
        False,
    ),
    (
        "first-error-other-step",
        mutate(_set(["first_error", "step"], "driver")),
        "first_error must name the failed step torch.",
        False,
    ),
    (
        "first-error-empty",
        mutate(_set(["first_error", "message"], " ")),
        "first_error.message must not be empty.",
        False,
    ),
    (
        "problem-unknown",
        mutate(_set(["handover", "problems"], ["broken"])),
        "handover.problems[0] must be one of: no_vendor_tool, fewer_cards, other_model, "
        "less_memory, other_platform.",
        True,
    ),
    (
        "problems-contradict",
        mutate(_set(["handover", "problems"], ["less_memory"])),
        "handover.problems (less_memory) does not match the comparison of expected and seen (-).",
        False,
    ),
    (
        "problems-hidden",
        mutate(_set(["handover", "seen", "cards"], 0)),
        "handover.problems (-) does not match the comparison of expected and seen (fewer_cards).",
        False,
    ),
    (
        "expected-cards-bool",
        mutate(_set(["handover", "expected", "cards"], True)),
        "handover.expected.cards must be a whole number.",
        True,
    ),
    (
        "seen-memory-text",
        mutate(_set(["handover", "seen", "memory_gb_per_card"], "80")),
        "handover.seen.memory_gb_per_card must be a number or null.",
        True,
    ),
    (
        "seen-platform",
        mutate(_set(["handover", "seen", "platform"], "metal")),
        "handover.seen.platform must be one of: cuda, rocm.",
        True,
    ),
    (
        "model-too-long",
        mutate(_set(["handover", "seen", "model"], "H" * 201)),
        "handover.seen.model is longer than 200 characters.",
        True,
    ),
]


@pytest.mark.parametrize(
    ("raw", "message", "schema_too"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_bad_report_is_refused_with_its_message(raw, message, schema_too):
    with pytest.raises(ReportRejected) as refused:
        parse_report(raw)
    assert refused.value.message == message
    if schema_too is not None:
        assert schema_accepts(json.loads(raw)) is not schema_too


def test_the_limit_is_on_bytes_and_a_report_just_under_it_is_read():
    document = valid()
    document["steps"][0]["data"]["padding"] = ["x" * 1000] * 200  # ~200 KiB
    raw = encoded(document)
    assert len(raw) < MAX_REPORT_BYTES
    assert parse_report(raw).order_id == 42


def test_messages_follow_the_language():
    with translation.override("it"), pytest.raises(ReportRejected) as refused:
        parse_report(mutate(_set(["schema_version"], 2)))
    assert refused.value.message.startswith(
        "Questo report è stato scritto da un diagnose.py più recente"
    )
