"""`make run` without an SMTP server: an email the worker sends is written out once, whole and
readable, at INFO (issue 23).

Seen failing before: Django's console backend wrote the raw MIME message to standard output,
which the Celery worker logs line by line as WARNING ("WARNING/ForkPoolWorker-1] Subject: ..."),
and the Italian text came out quoted-printable, "=C3=A8" for "è" and lines cut with "="."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

from .stack import ROOT, embedded_env, procfile_command

SUBJECT = "La tua GPU è pronta — ordine ORD-000042"
BODY = (
    "Ciao Katherine,\n"
    "\n"
    "il tuo noleggio è attivo: collegati con ssh grdemo-42@127.0.0.1 -p 2222 e troverai le "
    "schede già verificate, con la preparazione che hai scelto (PyTorch) già installata.\n"
    "Pagina dell'ordine: http://127.0.0.1:8000/orders/42/\n"
)


def test_an_email_sent_by_make_runs_worker_is_logged_once_readable_at_info(tmp_path):
    env = embedded_env(tmp_path / "var")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT, env=env, check=True, capture_output=True,
    )  # fmt: skip
    log_path = tmp_path / "worker.log"
    with log_path.open("ab") as log:
        worker = subprocess.Popen(
            [*procfile_command("worker"), "-I", "tests.embedded.probe"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while b"ready." not in log_path.read_bytes():
            assert worker.poll() is None, log_path.read_text()[-4000:]
            assert time.monotonic() < deadline, log_path.read_text()[-4000:]
            time.sleep(0.1)
        send = (
            "from config.celery_app import app; "
            "app.send_task('tests.embedded.probe.send_mail', "
            f"args=[{SUBJECT!r}, {BODY!r}, 'katherine@example.com'], queue='emails')"
        )
        subprocess.run([sys.executable, "-c", send], cwd=ROOT, env=env, check=True)
        deadline = time.monotonic() + 60
        while b"send_mail" not in _finished(log_path):
            assert worker.poll() is None, log_path.read_text()[-4000:]
            assert time.monotonic() < deadline, log_path.read_text()[-4000:]
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)

    log = log_path.read_text()
    assert log.count(SUBJECT) == 1, log
    # The body as written, its line breaks intact, with nothing between its lines.
    assert BODY in log, log
    record = log[: log.index(BODY)].rsplit("\n[", 1)[-1]
    assert re.match(r"[^\]]*: INFO/", record), record
    assert "To: katherine@example.com" in record, record
    assert "WARNING" not in log, log


def _finished(log_path) -> bytes:
    """The log's lines saying a task succeeded or failed."""
    return b"\n".join(
        line
        for line in log_path.read_bytes().splitlines()
        if b"succeeded in" in line or b"raised" in line
    )
