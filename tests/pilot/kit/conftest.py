"""The diagnostics kit as a customer gets it: built for a real, paid order, extracted, and
diagnose.py run as a separate process in a fresh virtual environment that has no PyTorch.

The only double is the GPU vendor tool: small shell scripts named nvidia-smi, amd-smi or
rocm-smi, placed alone on PATH, that print what a real one prints (this machine has no GPU)."""

import importlib.util
import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.db import transaction

from payments.crypto.services.balance_payment import balance_pay_order
from pilot.kit.diagnostics import build_diagnostics_zip
from rental.models import Host, HostState, Order
from tests.states import hosts_set_state

DIAGNOSE_SOURCE = Path(__file__).resolve().parents[3] / "pilot/kit/diagnostics/files/diagnose.py"
SCHEMA_PATH = DIAGNOSE_SOURCE.parent / "report.schema.json"
TOKEN = "grk_test-token-0123456789abcdef"
H100_CARD = ("NVIDIA H100 80GB HBM3", 81559, "9.0")


def base_interpreter() -> str:
    """The interpreter the project's .venv was made from (not the .venv itself)."""
    candidate = getattr(sys, "_base_executable", None)
    if candidate and Path(candidate).exists() and not candidate.startswith(sys.prefix + "/"):
        return candidate
    return str(Path(sys.base_prefix) / "bin" / "python3")


def make_venv(folder: Path, interpreter: str) -> Path:
    subprocess.run([interpreter, "-m", "venv", "--without-pip", str(folder)], check=True)
    return folder / "bin" / "python"


@pytest.fixture(scope="session")
def venv_python(tmp_path_factory) -> Path:
    """A fresh virtual environment: the standard library and nothing else."""
    return make_venv(tmp_path_factory.mktemp("fresh") / "venv", base_interpreter())


@pytest.fixture
def tools(tmp_path) -> Path:
    """The only folder on diagnose.py's PATH; fake vendor tools go here."""
    folder = tmp_path / "bin"
    folder.mkdir()
    return folder


def write_tool(folder: Path, name: str, script: str) -> Path:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def _printf(lines: list[str]) -> str:
    quoted = " ".join("'" + line.replace("'", "'\\''") + "'" for line in lines)
    return f"printf '%s\\n' {quoted}"


def fake_nvidia_smi(folder: Path, cards, driver="550.54.15", used_mib=1024) -> Path:
    """nvidia-smi answering the two queries diagnose.py makes (with only shell built-ins: PATH
    holds nothing else)."""
    inventory = [
        f"{index}, {name}, {memory}, {driver}, {capability}"
        for index, (name, memory, capability) in enumerate(cards)
    ]
    used = [f"{index}, {used_mib}" for index in range(len(cards))]
    query = "--query-gpu=index,name,memory.total,driver_version,compute_cap"
    return write_tool(
        folder,
        "nvidia-smi",
        'case "$1" in\n'
        f"  --query-gpu=index,memory.used) {_printf(used)} ;;\n"
        f"  {query}) {_printf(inventory)} ;;\n"
        '  *) echo "unexpected arguments: $*" >&2; exit 2 ;;\n'
        "esac\n",
    )


def fake_json_tool(folder: Path, name: str, answers: dict) -> Path:
    """amd-smi / rocm-smi: the JSON each first argument gets ("*" for any)."""
    cases = "".join(
        f"  {pattern}) {_printf([json.dumps(answer)])} ;;\n" for pattern, answer in answers.items()
    )
    return write_tool(folder, name, f'case "$1" in\n{cases}esac\n')


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    raw: bytes | None

    @property
    def report(self) -> dict:
        assert self.raw is not None, self.stdout + self.stderr
        return json.loads(self.raw)

    def step(self, name: str) -> dict:
        return next(step for step in self.report["steps"] if step["name"] == name)


def run_diagnose(kit: Path, python: Path, tools: Path, *args, env=None, timeout=120) -> Run:
    report = kit / "report.json"
    if report.exists():
        report.unlink()
    environment = {"PATH": str(tools), "HOME": str(kit), "LANG": "C.UTF-8"}
    environment.update(env or {})
    done = subprocess.run(
        [str(python), str(kit / "diagnose.py"), "--json", str(report), *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=kit,
        timeout=timeout,
    )
    return Run(
        done.returncode, done.stdout, done.stderr, report.read_bytes() if report.exists() else None
    )


def extract(content: bytes, folder: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        archive.extractall(folder)
        top = archive.namelist()[0].rstrip("/")
    return folder / top


@pytest.fixture
def paid_order(catalogue, customer, credit, place_order, django_capture_on_commit_callbacks):
    """paid_order(model="h100", lots=2, hosts=(("gpu-node-1", 2, "10.0.0.7"),)): the model's
    hosts replaced by these, the order paid from the balance and its cards allocated."""

    def make(model="h100", lots=2, hosts=(("gpu-node-1", 2, "10.0.0.7"),), **options) -> Order:
        gpu_model = catalogue[model]
        # Earlier hosts leave the stock: deleted, or in maintenance where cards are rented.
        Host.objects.filter(gpu_model=gpu_model, allocations__isnull=True).delete()
        hosts_set_state(Host.objects.filter(gpu_model=gpu_model), HostState.MAINTENANCE)
        for name, cards, ssh_host in hosts:
            Host.objects.create(
                management="manual",
                name=name, gpu_model=gpu_model, cards=cards, ssh_host=ssh_host, ssh_user="ubuntu"
            )
        credit(customer, "50000.00")
        order = place_order(customer, gpu_model, lots=lots, **options)
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            balance_pay_order(order_id=order.pk, customer=customer)
        order.refresh_from_db()
        assert order.allocations.filter(released_at__isnull=True).count() == order.total_cards
        return order

    return make


@pytest.fixture
def kit_for(tmp_path):
    """kit_for(order, language="en", upload_url=...) -> the extracted kit folder."""

    def make(order, language="en", upload_url="http://127.0.0.1:9/unused") -> Path:
        content = build_diagnostics_zip(
            order=order, token=TOKEN, upload_url=upload_url, language=language
        )
        return extract(content, tmp_path / "kit")

    return make


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes


@pytest.fixture
def upload_server():
    """A tiny HTTP server in a thread that records each POST and answers `status` with
    `answer` (set them on the returned object before the run)."""

    class State:
        status = 201
        answer = {"message": "Report stored for order."}
        received: list[Received] = []

    state = State()
    state.received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            state.received.append(
                Received(self.path, dict(self.headers.items()), self.rfile.read(length))
            )
            body = json.dumps(state.answer).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/api/orders/upload"
    yield state
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture(scope="session")
def diagnose_module():
    """diagnose.py loaded as a module, for its functions (its own copy of the comparison, the
    parsers of the vendor tools' output, the peak-memory sampler)."""
    spec = importlib.util.spec_from_file_location("gr_diagnose", DIAGNOSE_SOURCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python38() -> str | None:
    for candidate in (
        os.environ.get("PYTHON38"),
        "/root/.pyenv/versions/3.8.18/bin/python3.8",
        "/usr/bin/python3.8",
    ):
        if candidate and Path(candidate).exists():
            return candidate
    return None
