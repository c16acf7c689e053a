"""diagnose.py run for real: a kit built for a paid order, a fresh virtual environment without
PyTorch, and PATH holding only the fake vendor tool of each test (or nothing at all)."""

import json

import pytest
from django.utils import translation

from pilot.handover import describe_problem
from pilot.report import parse_report
from rental.models import Preparation

from .conftest import (
    H100_CARD,
    fake_json_tool,
    fake_nvidia_smi,
    make_venv,
    python38,
    run_diagnose,
)

jsonschema = pytest.importorskip("jsonschema")
STEPS = ["interpreter", "driver", "torch", "compute", "extensions", "peak_memory"]


def schema_errors(report: dict) -> list[str]:
    from .conftest import SCHEMA_PATH

    validator = jsonschema.Draft202012Validator(
        json.loads(SCHEMA_PATH.read_text()),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    return [error.message for error in validator.iter_errors(report)]


def assert_valid(run) -> None:
    """What the site will do with it: the schema accepts it and parse_report reads it back."""
    assert schema_errors(run.report) == []
    parsed = parse_report(run.raw)
    assert parsed.as_dict()["steps"] == run.report["steps"]


@pytest.fixture
def h100_kit(paid_order, kit_for):
    order = paid_order()  # 2 x H100 on gpu-node-1
    return order, kit_for(order)


def test_without_any_vendor_tool_step_2_fails_and_the_report_says_so(h100_kit, venv_python, tools):
    order, kit = h100_kit
    run = run_diagnose(kit, venv_python, tools)

    assert run.returncode == 1
    report = run.report
    assert [(s["name"], s["status"]) for s in report["steps"]] == [
        ("interpreter", "ok"),
        ("driver", "failed"),
        ("torch", "skipped"),
        ("compute", "skipped"),
        ("extensions", "skipped"),
        ("peak_memory", "skipped"),
    ]
    interpreter = run.step("interpreter")
    assert interpreter["data"]["executable"] == str(venv_python)
    assert interpreter["data"]["virtualenv"] is True
    assert "No `python` on PATH" in interpreter["detail"]
    driver = run.step("driver")
    assert driver["detail"].startswith(
        "No NVIDIA (nvidia-smi) or AMD (amd-smi, rocm-smi) tool was found on PATH"
    )
    assert "check the paths" in driver["advice"]
    assert run.step("torch")["detail"] == "Not run: step 2 (Driver and cards) failed."
    assert report["step_reached"] == "driver"
    assert report["first_error"]["step"] == "driver"
    assert report["first_error"]["message"].startswith("No NVIDIA (nvidia-smi) or AMD")
    assert report["order"] == {"id": order.pk, "reference": order.reference}
    assert report["handover"] == {
        "expected": {
            "model": "H100 80 GB",
            "cards": 2,
            "memory_gb_per_card": 80,
            "platform": "cuda",
            "host": "gpu-node-1",
        },
        "seen": {"model": None, "cards": None, "memory_gb_per_card": None, "platform": None},
        "problems": ["no_vendor_tool"],
    }
    assert_valid(run)
    # The readable summary says the same.
    assert "✓ 1. Interpreter and environment" in run.stdout
    assert "✗ 2. Driver and cards: No NVIDIA (nvidia-smi) or AMD" in run.stdout
    assert "– 3. PyTorch import: Not run" in run.stdout
    assert "Step reached: 2. Driver and cards" in run.stdout
    assert "First error: No NVIDIA (nvidia-smi)" in run.stdout
    assert "Advice: Do not work around a machine that differs from the order" in run.stdout


def test_one_card_seen_where_the_host_has_two_reports_the_missing_card(
    h100_kit, venv_python, tools
):
    order, kit = h100_kit
    fake_nvidia_smi(tools, [H100_CARD])

    run = run_diagnose(kit, venv_python, tools)

    assert run.returncode == 1
    driver = run.step("driver")
    assert driver["status"] == "failed"
    assert driver["detail"].splitlines()[0] == (
        "Fewer cards than rented: 1 seen on this host, 2 in the order."
    )
    assert (
        "nvidia-smi (driver 550.54.15): 1 card(s): #0 NVIDIA H100 80GB HBM3, 79.6 GB"
        in (driver["detail"])
    )
    handover = run.report["handover"]
    assert handover["seen"] == {
        "model": "NVIDIA H100 80GB HBM3",
        "cards": 1,
        "memory_gb_per_card": 79.6,
        "platform": "cuda",
    }
    assert handover["problems"] == ["fewer_cards"]
    assert "  - Fewer cards than rented: 1 seen on this host, 2 in the order." in run.stdout
    assert_valid(run)
    # The site words the same problem for the order page.
    assert describe_problem("fewer_cards", handover["expected"], handover["seen"]) == (
        "Fewer cards than rented: 1 seen, 2 in the order."
    )


def test_the_right_cards_pass_step_2_and_step_3_finds_no_pytorch(h100_kit, venv_python, tools):
    order, kit = h100_kit
    fake_nvidia_smi(tools, [H100_CARD, H100_CARD])

    run = run_diagnose(kit, venv_python, tools)

    assert run.returncode == 1
    assert [s["status"] for s in run.report["steps"]] == [
        "ok",
        "ok",
        "failed",
        "skipped",
        "skipped",
        "skipped",
    ]
    driver = run.step("driver")
    assert "The cards match the order." in driver["detail"]
    assert driver["advice"] == ""
    assert run.report["handover"]["problems"] == []
    torch = run.step("torch")
    assert torch["detail"] == (
        f"PyTorch cannot be imported by {venv_python}: ModuleNotFoundError: No module named 'torch'"
    )
    assert torch["advice"].startswith("Check the interpreter before reinstalling")
    assert run.report["step_reached"] == "torch"
    assert run.report["first_error"] == {"step": "torch", "message": torch["detail"]}
    assert "Advice: Check the interpreter before reinstalling" in run.stdout
    assert_valid(run)


@pytest.mark.parametrize(
    ("card", "problem", "message"),
    [
        (
            ("NVIDIA A100-SXM4-80GB", 81920, "8.0"),
            "other_model",
            "Another model: the card reports “NVIDIA A100-SXM4-80GB”, the order is for H100 80 GB.",
        ),
        (
            ("NVIDIA H100 PCIe", 40960, "9.0"),
            "less_memory",
            "Less memory per card: 40.0 GB seen, 80 GB in the order.",
        ),
    ],
    ids=["other-model", "less-memory"],
)
def test_another_model_or_less_memory_fails_step_2(
    h100_kit, venv_python, tools, card, problem, message
):
    _order, kit = h100_kit
    fake_nvidia_smi(tools, [card, card])

    run = run_diagnose(kit, venv_python, tools)

    assert run.returncode == 1
    assert run.report["handover"]["problems"] == [problem]
    assert run.step("driver")["status"] == "failed"
    assert run.step("driver")["detail"].splitlines()[0] == message
    assert run.report["step_reached"] == "driver"
    assert_valid(run)


def test_an_amd_machine_for_an_nvidia_order_is_another_platform(h100_kit, venv_python, tools):
    _order, kit = h100_kit
    static = [
        {
            "gpu": index,
            "asic": {"market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"},
            "vram": {"type": "HBM", "size": {"value": 196592, "unit": "MB"}},
            "driver": {"name": "amdgpu", "version": "6.8.5"},
        }
        for index in range(2)
    ]
    fake_json_tool(tools, "amd-smi", {"static": static})

    run = run_diagnose(kit, venv_python, tools)

    assert run.report["handover"]["seen"] == {
        "model": "AMD Instinct MI300X",
        "cards": 2,
        "memory_gb_per_card": 192.0,
        "platform": "rocm",
    }
    assert run.report["handover"]["problems"] == ["other_model", "other_platform"]
    assert (
        "Another platform: the machine has ROCm (AMD) cards, the order is for CUDA (NVIDIA)."
        in run.step("driver")["detail"]
    )
    assert_valid(run)


def test_an_mi300x_order_reads_amd_smi_and_flags_hsa_override(
    paid_order, kit_for, venv_python, tools
):
    order = paid_order(model="mi300x", lots=1, hosts=(("mi-node-1", 1, "10.0.0.9"),))
    kit = kit_for(order)
    fake_json_tool(
        tools,
        "amd-smi",
        {
            # amd-smi 25 puts the GPUs under gpu_data and gives sizes as text.
            "static": {
                "gpu_data": [
                    {
                        "gpu": 0,
                        "asic": {
                            "market_name": "AMD Instinct MI300X",
                            "target_graphics_version": "gfx942",
                        },
                        "vram": {"size": "196592 MB"},
                        "driver": {"version": "6.10.5"},
                    }
                ]
            }
        },
    )

    run = run_diagnose(kit, venv_python, tools)
    assert run.step("driver")["status"] == "ok"
    assert run.step("driver")["data"]["reading"]["cards"] == [
        {"index": 0, "name": "AMD Instinct MI300X", "memory_mib": 196592.0, "arch": "gfx942"}
    ]
    assert run.step("torch")["status"] == "failed"

    flagged = run_diagnose(kit, venv_python, tools, env={"HSA_OVERRIDE_GFX_VERSION": "11.0.0"})
    assert flagged.returncode == 1
    interpreter = flagged.step("interpreter")
    assert interpreter["status"] == "failed"
    assert interpreter["detail"].startswith("HSA_OVERRIDE_GFX_VERSION=11.0.0 is set on an MI300X")
    assert interpreter["advice"].startswith("Check the interpreter before reinstalling")
    assert flagged.report["step_reached"] == "interpreter"
    assert flagged.report["handover"] is None
    assert [s["status"] for s in flagged.report["steps"][1:]] == ["skipped"] * 5
    assert_valid(flagged)


def test_rocm_smi_is_read_when_amd_smi_is_missing(paid_order, kit_for, venv_python, tools):
    order = paid_order(model="mi300x", lots=1, hosts=(("mi-node-1", 1, "10.0.0.9"),))
    kit = kit_for(order)
    fake_json_tool(
        tools,
        "rocm-smi",
        {
            "*": {
                "card0": {
                    "Card Series": "AMD Instinct MI300X",
                    "GFX Version": "gfx942",
                    "VRAM Total Memory (B)": "205822885888",
                    "VRAM Total Used Memory (B)": "296255488",
                },
                "system": {"Driver version": "6.7.0"},
            }
        },
    )

    run = run_diagnose(kit, venv_python, tools)

    assert run.step("driver")["status"] == "ok", run.step("driver")["detail"]
    assert (
        "rocm-smi (driver 6.7.0): 1 card(s): #0 AMD Instinct MI300X, 191.7 GB"
        in (run.step("driver")["detail"])
    )
    assert run.report["handover"]["seen"]["memory_gb_per_card"] == 191.7
    assert_valid(run)


def test_a_vendor_tool_that_fails_counts_no_card(h100_kit, venv_python, tools):
    _order, kit = h100_kit
    from .conftest import write_tool

    write_tool(
        tools,
        "nvidia-smi",
        'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver."\n'
        "exit 9\n",
    )
    run = run_diagnose(kit, venv_python, tools)

    driver = run.step("driver")
    assert driver["detail"].splitlines()[0] == (
        "nvidia-smi did not answer: NVIDIA-SMI has failed because it couldn't communicate with "
        "the NVIDIA driver."
    )
    assert run.report["handover"]["problems"] == ["fewer_cards"]
    assert_valid(run)


def test_before_allocation_the_order_total_is_expected_and_said(
    catalogue, customer, place_order, kit_for, venv_python, tools
):
    order = place_order(customer, catalogue["h100"], lots=2)  # awaiting payment: no cards yet
    kit = kit_for(order)
    fake_nvidia_smi(tools, [H100_CARD, H100_CARD])

    run = run_diagnose(kit, venv_python, tools)

    assert run.step("driver")["status"] == "ok"
    assert (
        "No cards were allocated to this order when the kit was made: compared with the order's "
        "2 card(s) in total." in run.step("driver")["detail"]
    )
    assert run.report["handover"]["expected"]["host"] is None
    assert run.report["handover"]["expected"]["cards"] == 2


def test_several_hosts_need_host_and_an_unknown_host_is_refused(
    paid_order, kit_for, venv_python, tools
):
    order = paid_order(lots=3, hosts=(("gpu-a", 2, "10.0.0.1"), ("gpu-b", 2, "10.0.0.2")))
    kit = kit_for(order)
    hosts = json.loads((kit / "order.json").read_text())["hosts"]
    assert hosts == [
        {"host": "gpu-a", "ssh_host": "10.0.0.1", "cards": 2},
        {"host": "gpu-b", "ssh_host": "10.0.0.2", "cards": 1},
    ]
    fake_nvidia_smi(tools, [H100_CARD])

    ambiguous = run_diagnose(kit, venv_python, tools)
    assert ambiguous.returncode == 1
    detail = ambiguous.step("driver")["detail"]
    assert detail.startswith(
        "This order has cards on 2 hosts (gpu-a (2 x, 10.0.0.1), gpu-b (1 x, 10.0.0.2)) and "
        "this machine ("
    )
    assert "matches none of them: run again with --host NAME." in detail
    assert ambiguous.report["handover"] is None
    assert_valid(ambiguous)

    chosen = run_diagnose(kit, venv_python, tools, "--host", "gpu-b")
    assert chosen.step("driver")["status"] == "ok"
    assert chosen.report["handover"]["expected"]["host"] == "gpu-b"
    assert chosen.report["handover"]["expected"]["cards"] == 1

    unknown = run_diagnose(kit, venv_python, tools, "--host", "gpu-z")
    assert unknown.returncode == 2
    assert unknown.raw is None
    assert "--host gpu-z is not one of this order's hosts: gpu-a, gpu-b." in unknown.stderr


def test_the_host_whose_address_is_this_machine_is_chosen_by_itself(
    paid_order, kit_for, venv_python, tools
):
    import socket

    here = socket.gethostname()
    order = paid_order(lots=3, hosts=(("gpu-a", 2, "10.0.0.1"), ("gpu-b", 2, here)))
    kit = kit_for(order)
    fake_nvidia_smi(tools, [H100_CARD])

    run = run_diagnose(kit, venv_python, tools)

    assert run.report["handover"]["expected"]["host"] == "gpu-b"
    assert run.step("driver")["status"] == "ok"


def test_italian_output_with_lang_it_and_by_default_for_an_italian_kit(
    h100_kit, kit_for, venv_python, tools
):
    order, kit = h100_kit
    fake_nvidia_smi(tools, [H100_CARD])

    run = run_diagnose(kit, venv_python, tools, "--lang", "it")

    assert run.report["language"] == "it"
    assert "✓ 1. Interprete e ambiente" in run.stdout
    assert (
        "✗ 2. Driver e schede: Meno schede di quelle noleggiate (su questo host: 1, "
        "nell'ordine: 2)." in run.stdout
    )
    assert "– 3. Import di PyTorch: Non eseguito: il passaggio 2 (Driver e schede)" in run.stdout
    assert "Passaggio raggiunto: 2. Driver e schede" in run.stdout
    assert "Consiglio: Non aggirare una macchina diversa dall'ordine" in run.stdout
    assert run.step("driver")["advice"].startswith("Non aggirare una macchina")
    assert_valid(run)

    italian_kit = kit_for(order, language="it")
    default = run_diagnose(italian_kit, venv_python, tools)
    assert default.report["language"] == "it"
    assert "Passaggio raggiunto" in default.stdout


def test_upload_posts_the_report_with_the_bearer_token(
    h100_kit, kit_for, venv_python, tools, upload_server
):
    order, _kit = h100_kit
    kit = kit_for(order, upload_url=upload_server.url)

    run = run_diagnose(kit, venv_python, tools, "--upload")

    assert run.returncode == 1  # the diagnosis failed (no vendor tool); the upload worked
    [request] = upload_server.received
    assert request.path == "/api/orders/upload"
    assert request.headers["Authorization"] == "Bearer grk_test-token-0123456789abcdef"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == run.report
    assert parse_report(request.body).order_id == order.pk
    assert (
        "Upload: the server accepted the report (HTTP 201): Report stored for order." in run.stdout
    )
    assert b"grk_test-token" not in run.raw  # the token never goes into the report


def test_a_refused_upload_exits_3_and_says_why(
    h100_kit, kit_for, venv_python, tools, upload_server
):
    order, _kit = h100_kit
    kit = kit_for(order, upload_url=upload_server.url)
    upload_server.status = 403
    upload_server.answer = {"message": "This upload token was replaced by a newer kit."}

    run = run_diagnose(kit, venv_python, tools, "--upload")

    assert run.returncode == 3
    assert len(upload_server.received) == 1
    assert (
        "Upload failed: the server refused the report (HTTP 403): This upload token was "
        "replaced by a newer kit." in run.stdout
    )
    assert run.report["first_error"]["step"] == "driver"  # the diagnosis itself is intact


def test_an_unreachable_server_exits_3_and_keeps_the_report(h100_kit, venv_python, tools):
    _order, kit = h100_kit  # its upload URL points at a closed port
    run = run_diagnose(kit, venv_python, tools, "--upload")

    assert run.returncode == 3
    assert "Upload failed: the server could not be reached" in run.stdout
    assert run.report["step_reached"] == "driver"


def test_a_kit_without_order_json_or_with_bad_options_exits_2(h100_kit, venv_python, tools):
    _order, kit = h100_kit
    share = run_diagnose(kit, venv_python, tools, "--memory-share", "1.5")
    assert share.returncode == 2
    assert "--memory-share must be a number from 0.05 to 0.95." in share.stderr

    (kit / "order.json").unlink()
    missing = run_diagnose(kit, venv_python, tools)
    assert missing.returncode == 2
    assert missing.raw is None
    assert "order.json was not found next to diagnose.py" in missing.stderr


def test_it_runs_on_python_3_8(h100_kit, tmp_path, tools):
    interpreter = python38()
    if interpreter is None:
        pytest.skip("no Python 3.8 on this machine (the syntax check still runs)")
    _order, kit = h100_kit
    venv38 = make_venv(tmp_path / "venv38", interpreter)
    fake_nvidia_smi(tools, [H100_CARD, H100_CARD])

    run = run_diagnose(kit, venv38, tools)

    assert run.report["host"]["python"].startswith("3.8.")
    assert [s["status"] for s in run.report["steps"][:3]] == ["ok", "ok", "failed"]
    assert_valid(run)


def test_custom_preparation_extensions_reach_the_kit(paid_order, kit_for):
    order = paid_order(
        preparation=Preparation.CUSTOM,
        custom_preparation="PyTorch 2.7 with Flash Attention 2, xFormers and DeepSpeed.",
    )
    kit = kit_for(order)
    lines = (kit / "extensions.txt").read_text().splitlines()
    assert [line for line in lines if line and not line.startswith("#")] == [
        "flash-attn",
        "xformers",
        "deepspeed",
    ]


def test_describe_problem_is_translated(h100_kit):
    expected = {"model": "H100 80 GB", "cards": 2, "memory_gb_per_card": 80, "platform": "cuda"}
    seen = {"model": "NVIDIA H100", "cards": 1, "memory_gb_per_card": 79.6, "platform": "cuda"}
    with translation.override("it"):
        text = describe_problem("fewer_cards", expected, seen)
    assert text == "Meno schede di quelle noleggiate (rilevate: 1, nell'ordine: 2)."
