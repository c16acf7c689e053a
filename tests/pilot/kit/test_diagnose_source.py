"""diagnose.py itself: Python 3.8 syntax, the standard library only, and its inner parts (the
vendor tools' formats, the architecture rule, the peak-memory sampler) on real processes."""

import ast
import sys

import pytest

from .conftest import DIAGNOSE_SOURCE, fake_json_tool, fake_nvidia_smi, write_tool

# What diagnose.py may import inside the probes it runs in a child process.
PROBED = {"torch", "triton", "flash_attn", "xformers", "bitsandbytes", "apex"}


def test_diagnose_parses_as_python_3_8():
    ast.parse(DIAGNOSE_SOURCE.read_text(), feature_version=(3, 8))


def test_a_newer_syntax_would_be_caught():
    with pytest.raises(SyntaxError):
        ast.parse("match x:\n    case 1:\n        pass\n", feature_version=(3, 8))


def test_diagnose_imports_only_the_standard_library():
    tree = ast.parse(DIAGNOSE_SOURCE.read_text())
    top, inner = set(), set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            top.add((node.module or "").split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            inner |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            inner.add((node.module or "").split(".")[0])
    assert top - {"__future__"} <= sys.stdlib_module_names
    assert inner - top - {"__future__"} - sys.stdlib_module_names <= PROBED
    # Each known extension is really exercised; triton's kernel lives in a generated module
    # (triton.jit reads its source from a file).
    assert PROBED - {"triton"} <= inner
    assert "import triton\n" in DIAGNOSE_SOURCE.read_text()


@pytest.mark.parametrize(
    ("arch", "arch_list", "answer"),
    [
        ("sm_90", ["sm_80", "sm_86", "sm_90"], (True, "native")),
        ("sm_90", ["sm_50", "sm_80", "sm_86"], (False, None)),
        ("sm_86", ["sm_80"], (True, "native")),  # same major, lower minor: binary compatible
        ("sm_80", ["sm_86"], (False, None)),
        ("sm_100", ["sm_80", "sm_90", "compute_90"], (True, "ptx compute_90")),
        ("sm_100", ["sm_80", "sm_90"], (False, None)),
        ("sm_100", ["sm_90", "sm_100", "sm_120"], (True, "native")),
        ("sm_90", ["sm_90a"], (True, "native")),
        ("sm_89", ["sm_90a"], (False, None)),
        ("gfx942", ["gfx90a", "gfx942"], (True, "native")),
        ("gfx942", ["gfx90a", "gfx1100"], (False, None)),
        ("gfx942", ["gfx942:sramecc+:xnack-"], (True, "native")),
    ],
)
def test_which_pytorch_builds_run_on_which_card(diagnose_module, arch, arch_list, answer):
    assert diagnose_module.arch_support(arch, arch_list) == answer


@pytest.mark.parametrize(
    ("line", "module"),
    [
        ("flash-attn", "flash_attn"),
        ("flash_attn>=2.5", "flash_attn"),
        ("xformers==0.0.28", "xformers"),
        ("transformer-engine[pytorch]", "transformer_engine"),
        ("opencv-python-headless", "cv2"),
        ("my-package", "my_package"),
        ("deepspeed ; sys_platform == 'linux'", "deepspeed"),
    ],
)
def test_extension_lines_give_the_module_to_import(diagnose_module, line, module):
    assert diagnose_module.import_name(line) == module


def test_nvidia_smi_with_a_comma_in_the_name_and_an_old_driver(diagnose_module, tmp_path):
    # An old driver refuses compute_cap; the second query has four fields.
    path = write_tool(
        tmp_path,
        "nvidia-smi",
        'case "$1" in\n'
        "  *compute_cap*) echo 'Field \"compute_cap\" is not a valid field to query.'; exit 2 ;;\n"
        "  *) printf '%s\\n' '0, NVIDIA H100, Special, 81559, 470.1' '1, NVIDIA H100, Special,"
        " [N/A], 470.1' ;;\n"
        "esac\n",
    )
    reading = diagnose_module.read_nvidia(str(path))
    assert reading == {
        "tool": "nvidia-smi",
        "platform": "cuda",
        "driver": "470.1",
        "cards": [
            {"index": 0, "name": "NVIDIA H100, Special", "memory_mib": 81559.0, "arch": None},
            {"index": 1, "name": "NVIDIA H100, Special", "memory_mib": None, "arch": None},
        ],
    }


def test_amd_smi_list_gives_the_count_when_static_says_nothing(diagnose_module, tmp_path):
    path = fake_json_tool(
        tmp_path,
        "amd-smi",
        {"static": [], "list": [{"gpu": 0, "bdf": "0000:05:00.0"}, {"gpu": 1, "bdf": "x"}]},
    )
    reading = diagnose_module.read_amd_smi(str(path))
    assert [card["index"] for card in reading["cards"]] == [0, 1]
    assert reading["cards"][0]["name"] is None


@pytest.mark.parametrize(
    ("value", "mib"),
    [
        (196592, 196592),
        ("196592 MB", 196592),
        ({"value": 192, "unit": "GB"}, 196608),
        ({"value": 205822885888, "unit": "B"}, 196288.0),
        ("N/A", None),
    ],
)
def test_amd_memory_in_each_of_its_shapes(diagnose_module, value, mib):
    assert diagnose_module._mib(value) == mib


def test_the_peak_of_a_real_task_is_recorded_per_card(diagnose_module, tmp_path):
    """A task that raises card 0's memory for a second, sampled through a vendor tool that
    reads what the task wrote."""
    used = tmp_path / "used.txt"
    used.write_text("0, 1000\n1, 500\n")
    tool = write_tool(
        tmp_path,
        "nvidia-smi",
        f"while read line; do echo \"$line\"; done < '{used}'\n",
    )
    task = (
        f"printf '0, 30000\\n1, 2000\\n' > '{used}'; sleep 1.2; "
        f"printf '0, 1200\\n1, 500\\n' > '{used}'; sleep 0.6"
    )
    data = diagnose_module.measure_peak(task, "nvidia-smi", str(tool), interval=0.1)
    assert data["exit_status"] == 0
    assert data["baseline_mib"] == {"0": 1000.0, "1": 500.0}
    assert data["peak_mib"] == {"0": 30000.0, "1": 2000.0}
    assert data["samples"] >= 5
    assert data["seconds"] >= 1.8

    state = {
        "tool": ("nvidia-smi", str(tool)),
        "cards": [{"index": 0, "memory_mib": 81559.0}, {"index": 1, "memory_mib": 81559.0}],
    }
    step = diagnose_module.check_peak("exit 3", state)
    assert step["status"] == "failed"
    assert "The task ended with exit status 3" in step["detail"]
    assert step["advice"].startswith("Check the input size before raising the batch")
    assert "monitor it separately from the interactive connection" in step["advice"]

    skipped = diagnose_module.check_peak(None, state)
    assert skipped["status"] == "skipped"
    assert "If you don't know the peak yet, keep it as a goal of the pilot" in skipped["detail"]


def test_the_peak_step_reads_the_cards_in_gib(diagnose_module, tmp_path):
    fake = fake_nvidia_smi(tmp_path, [("NVIDIA H100", 81559, "9.0")], used_mib=40960)
    state = {"tool": ("nvidia-smi", str(fake)), "cards": [{"index": 0, "memory_mib": 81559.0}]}
    step = diagnose_module.check_peak("true", state)
    assert step["status"] == "ok"
    assert "#0 40.0 GiB of 79.6 GiB (before the task: 40.0 GiB)" in step["detail"]
    assert step["data"]["command"] == "true"


def test_extensions_are_probed_in_child_processes(diagnose_module, tmp_path, monkeypatch):
    """A module that imports is "import only"; a missing one fails the step with the advice."""
    (tmp_path / "extensions.txt").write_text(
        "# our project\njson  # stands for an extension that imports\nflash-attn>=2.5\n\n"
    )
    monkeypatch.setattr(diagnose_module, "KIT_DIR", str(tmp_path))

    step = diagnose_module.check_extensions()

    assert step["status"] == "failed"
    lines = step["detail"].splitlines()
    assert lines[0] == "flash-attn>=2.5: ModuleNotFoundError: No module named 'flash_attn'"
    assert lines[1].startswith("json ")
    assert lines[1].endswith(": import only: not proof of a working kernel.")
    assert step["advice"].startswith("A simple computation that works does not validate")
    assert [entry["module"] for entry in step["data"]["extensions"]] == ["json", "flash_attn"]


def test_an_empty_extensions_list_passes_and_says_so(diagnose_module, tmp_path, monkeypatch):
    (tmp_path / "extensions.txt").write_text("# flash-attn\n# xformers\n")
    monkeypatch.setattr(diagnose_module, "KIT_DIR", str(tmp_path))
    step = diagnose_module.check_extensions()
    assert (step["status"], step["detail"]) == (
        "ok",
        "No extensions listed in extensions.txt: nothing to check.",
    )


def test_a_compute_check_that_dies_is_reported_with_its_last_output(diagnose_module):
    """The child has no PyTorch here: it ends without an answer, and the step says how."""
    step = diagnose_module.check_compute(0.5)
    assert step["status"] == "failed"
    assert step["detail"].startswith(
        "The compute check ended without an answer (exit status 1). Last output:"
    )
    assert "No module named 'torch'" in step["detail"]
    assert step["advice"].startswith("A successful import does not prove a GPU computation")
