"""Schemathesis against the schema the API serves (issue 23): every operation, in each of
schemathesis's phases (the schema's examples, its coverage of bounds and enums, fuzzing, and the
stateful links between operations), as a customer of the tests' own data (api_world: a
balance, orders, a payment, a webhook endpoint) with a real API token. Fails on any 5xx, a
status code the operation does not document, or a Content-Type, body or header that does not
match the schema; and on input the schema calls invalid that the server accepts (CHECKS).

Run by schemathesis's own engine (what `schemathesis run` runs) against a live server of the
test database; sized for a 2-core machine (a few minutes) and deterministic (seeded, no
example database). Written over whatever the served schema holds: a new operation, or a new
link, is tested as soon as it is served.
"""

import os

import pytest
import schemathesis
from schemathesis.engine import Status, events, from_schema

CHECKS = [
    # What the API answers matches the schema, and is never a 5xx.
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    # The schema is no looser than the server: what it calls invalid the server refuses, a
    # request without the token or a required header is refused, and a deleted object (a
    # webhook endpoint) is gone while a created one can be read at once.
    "negative_data_rejection",
    "missing_required_header",
    "ignored_auth",
    "use_after_free",
    "ensure_resource_availability",
]
# Per operation and phase; SCHEMATHESIS_MAX_EXAMPLES and SCHEMATHESIS_SEED run a longer or another
# walk by hand (the note of issue 23 gives one), make test runs this one.
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "20"))
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "23"))
SCHEMA_PATH = "/api/v1/schema/?format=json"


def configured(schema, token: str, checks=CHECKS):
    schema.config.update(headers={"Authorization": f"Bearer {token}"}, workers=1)
    schema.config.seed = SEED
    schema.config.generation.update(
        max_examples=MAX_EXAMPLES,
        deterministic=True,
        database="none",
        with_security_parameters=False,
    )
    schema.config.checks.update(included_check_names=list(checks))
    return schema


def failures_of(schema) -> tuple[list[str], dict[str, set[str]]]:
    """Run every phase; the failures as readable lines, and the operations each phase ran."""
    found, ran = [], {}
    phase = None
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseStarted):
            phase = event.phase.name.value
        elif isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            ran.setdefault(phase, set()).add(event.recorder.label)
            ran.setdefault("cases", set()).update(
                f"{phase}:{event.recorder.label}:{case_id}" for case_id in event.recorder.cases
            )
            for case_id, checks in event.recorder.checks.items():
                for check in checks:
                    if check.status == Status.FAILURE:
                        case = event.recorder.cases[case_id].value
                        found.append(
                            f"[{phase}] {event.recorder.label}: {check.name}: "
                            f"{check.failure_info.failure.title} — "
                            f"{check.failure_info.failure.message[:500]} "
                            f"(request: {case.method} {case.formatted_path} "
                            f"query={case.query} body={str(case.body)[:300]})"
                        )
        elif isinstance(event, events.NonFatalError):
            found.append(f"[{phase}] {event.label}: error: {event.info.format()}"[:2000])
        elif isinstance(event, events.FatalError):
            found.append(f"[{phase}] fatal: {event.exception!r}"[:2000])
    return found, ran


@pytest.fixture
def served_schema(api_world, live_server, settings):
    settings.API_RATE_LIMIT = "1000000/min"  # the walk is one token's thousands of requests
    schema = schemathesis.openapi.from_url(live_server.url + SCHEMA_PATH)
    return configured(schema, api_world.token)


@pytest.mark.django_db(transaction=True)
def test_schemathesis_finds_nothing_in_any_phase(served_schema):
    failures, ran = failures_of(served_schema)

    print(f"schemathesis: {len(ran.pop('cases', ()))} cases, seed {SEED}, {MAX_EXAMPLES} examples")
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures)
    operations = {op.ok().label for op in served_schema.get_all_operations()}
    assert ran.get("examples", set()) | ran.get("fuzzing", set()) >= operations - {""}
    assert ran.get("stateful"), ran.keys()
