"""The pilot in a browser, in Italian, on a phone: an active order → both kits downloaded and
checked → the real diagnose.py of the kit run on this machine (a fake nvidia-smi on PATH, the
only double: no GPU here) sends its report with the kit's token → the page shows its steps → the
same report file uploaded on the page → a decision recorded, in the timeline → "revise the
configuration" opens the configurator pre-filled."""

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import expect

from pilot.models import DiagnosticsReport, KitToken, PilotDecision
from rental.models import Order
from tests.pilot.web.conftest import make_active, make_paid

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

H100_INVENTORY = "0, NVIDIA H100 80GB HBM3, 81559, 550.54.15, 9.0"


def fake_nvidia_smi(folder: Path) -> None:
    """One H100, as nvidia-smi prints it for diagnose.py's two CSV queries."""
    tool = folder / "nvidia-smi"
    tool.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        "  --query-gpu=index,memory.used) printf '%s\\n' '0, 1024' ;;\n"
        f"  --query-gpu=*) printf '%s\\n' '{H100_INVENTORY}' ;;\n"
        '  *) echo "unexpected arguments: $*" >&2; exit 2 ;;\n'
        "esac\n"
    )
    tool.chmod(0o755)


def base_interpreter() -> str:
    """A Python without the project's packages (the customer's machine has none of them)."""
    candidate = getattr(sys, "_base_executable", None)
    if candidate and Path(candidate).exists() and not candidate.startswith(sys.prefix + "/"):
        return candidate
    return str(Path(sys.base_prefix) / "bin" / "python3")


def downloaded(page, link_name: str) -> tuple[str, bytes]:
    with page.expect_download() as info:
        page.get_by_role("link", name=link_name).click()
    download = info.value
    return download.suggested_filename, Path(download.path()).read_bytes()


def test_the_customer_runs_the_pilot_of_an_active_order_in_italian(
    new_page,
    live_server,
    settings,
    catalogue,
    customer,
    credit,
    place_order,
    sshd,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    settings.SITE_URL = live_server.url  # the kit's upload address
    customer.language = "it"
    customer.save(update_fields=["language"])
    credit(customer, "2000.00")
    order = place_order(customer, catalogue["h100"], lots=1, preparation="pytorch")
    # Tasks run as each service commits (a transactional test): nothing waits to be captured.
    capture = django_capture_on_commit_callbacks
    order = make_active(make_paid(order, capture), sshd, capture)

    page = new_page(viewport={"width": 390, "height": 844}, locale="it-IT")  # a phone
    page.context.add_cookies(
        [{"name": django_settings.LANGUAGE_COOKIE_NAME, "value": "it", "url": live_server.url}]
    )
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Accedi").click()
    page.goto(f"/account/orders/{order.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    pilot = page.locator('[data-section="pilot"]')
    expect(pilot.get_by_role("heading", name="Pilota", exact=True)).to_be_visible()
    expect(pilot.locator('[data-field="pilot-guide"]')).to_contain_text(
        "avvia la diagnostica prima della tua applicazione"
    )
    expect(pilot.locator('[data-field="no-report"]')).to_contain_text("Nessun report per ora")

    # Both kits.
    name, content = downloaded(page, "Scarica il kit di diagnostica")
    assert name == f"diagnostics-{order.reference}.zip"
    kit_folder = tmp_path / "kit"
    with zipfile.ZipFile(io.BytesIO(content)) as kit:
        top = f"{order.reference.lower()}-diagnostics/"
        assert {f"{top}diagnose.py", f"{top}LEGGIMI.md", f"{top}order.json"} <= set(kit.namelist())
        kit.extractall(kit_folder)
    kit_path = kit_folder / top
    upload = json.loads((kit_path / "order.json").read_text())["upload"]
    assert upload["url"] == f"{live_server.url}/account/orders/{order.pk}/kit/reports/"
    assert KitToken.objects.get(order=order, replaced_at__isnull=True)

    name, content = downloaded(page, "Scarica la cartella del pilota")
    assert name == f"pilot-{order.reference}.zip"
    with zipfile.ZipFile(io.BytesIO(content)) as folder:
        names = folder.namelist()
        top_pilot = f"{order.reference.lower()}-pilot/"
        assert f"{top_pilot}check_pilot.py" in names
        assert len([n for n in names if re.search(r"data/pilot/.+\.txt$", n)]) == 12
        assert 'DEFAULT_LANGUAGE = "it"' in folder.read(f"{top_pilot}check_pilot.py").decode()

    # The real diagnose.py, on "the rented machine": one H100 answers, PyTorch is missing.
    tools = tmp_path / "bin"
    tools.mkdir()
    fake_nvidia_smi(tools)
    report_path = kit_path / "report.json"
    run = subprocess.run(
        [base_interpreter(), "diagnose.py", "--json", str(report_path), "--upload"],
        cwd=kit_path,
        env={"PATH": str(tools), "HOME": str(tmp_path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 1, run.stdout + run.stderr  # a step failed
    assert "HTTP 201" in run.stdout, run.stdout + run.stderr
    stored = DiagnosticsReport.objects.get(order=order)
    assert stored.source == "token"
    assert stored.first_error_step == "torch"
    assert stored.document["language"] == "it"

    page.reload()
    latest = page.locator('[data-section="pilot-latest-report"]')
    expect(latest.locator('[data-step="interpreter"]')).to_have_attribute("data-status", "ok")
    expect(latest.locator('[data-step="driver"]')).to_have_attribute("data-status", "ok")
    expect(latest.locator('[data-step="torch"]')).to_have_attribute("data-status", "failed")
    expect(latest.locator('[data-step="compute"]')).to_have_attribute("data-status", "skipped")
    expect(latest.locator('[data-field="first-error"]')).to_contain_text(
        "Primo errore in «Import di PyTorch»"
    )
    expect(latest.locator('[data-field="step-reached"]')).to_contain_text("Import di PyTorch")
    expect(latest.locator('[data-field="handover-summary"]')).to_have_text(
        "Questa macchina è conforme all'ordine."
    )
    expect(latest.locator('[data-field="handover-cards"]')).to_contain_text(
        "rilevato 1, noleggiato 1"
    )
    expect(page.locator('[data-section="timeline"]')).to_contain_text(
        "Report di diagnostica: primo errore in «Import di PyTorch»"
    )

    # The same file, uploaded on the page.
    page.get_by_label("File del report").set_input_files(str(report_path))
    page.get_by_role("button", name="Carica il report").click()
    expect(page.get_by_role("status")).to_contain_text("Il report è registrato sull'ordine.")
    expect(page.locator('[data-section="pilot-earlier-reports"] li')).to_have_count(1)
    assert DiagnosticsReport.objects.filter(order=order, source="page").count() == 1

    # A decision, resting on the report, in the timeline.
    decision = page.locator('[data-section="pilot-decision"]')
    decision.get_by_label("Correggere l'ambiente").check()
    decision.get_by_label("Motivazione").fill(
        "PyTorch manca nell'interprete usato: lo installo nel venv del progetto e rilancio."
    )
    decision.get_by_label("Report su cui si basa").select_option(index=1)
    decision.get_by_role("button", name="Registra la decisione").click()
    expect(page.get_by_role("status")).to_contain_text("Decisione registrata")
    expect(page.locator('[data-section="timeline"]')).to_contain_text(
        "Decisione: Correggere l'ambiente"
    )
    expect(page.locator('[data-section="pilot-decisions"]')).to_contain_text(
        "PyTorch manca nell'interprete usato"
    )
    assert PilotDecision.objects.get(order=order).report is not None
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    # Revise the configuration: the configurator, pre-filled from this order.
    decision = page.locator('[data-section="pilot-decision"]')
    decision.get_by_label("Rivedere la configurazione").check()
    decision.get_by_label("Motivazione").fill("Il picco di memoria richiede due schede.")
    decision.get_by_role("button", name="Registra la decisione").click()
    expect(page).to_have_url(re.compile(r"/configure/\?"))
    expect(page.get_by_role("status")).to_contain_text(order.reference)
    expect(page.locator("#id_gpu_model")).to_have_value(order.gpu_model.slug)
    expect(page.locator("#id_lots")).to_have_value("1")
    expect(page.get_by_label("PyTorch")).to_be_checked()
    assert Order.objects.get(pk=order.pk).pilot_decisions.count() == 2
    assert page.csp_violations == []
