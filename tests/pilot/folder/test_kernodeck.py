"""Kernodeck as shipped: the resume test passes when the checkpoint holds every state and fails,
naming the state, when the optimizer's or the generator's is left out."""

import json
import os
import re

from .conftest import run

QUALIFY = [
    "- its own states: learning-rate scheduler",
    "- precision: GPU kernels, mixed precision",
    "- data: the loader's position and shuffling",
    "- distributed state:",
]


def test_resume_test_passes_bit_for_bit_after_a_sigkill_mid_way(kit):
    tested = run(kit, "kernodeck/resume_test.py")

    assert tested.returncode == 0, tested.stdout + tested.stderr
    out = tested.stdout
    killed = re.search(r"of step (\d+) of 300; the last checkpoint on disk is step (\d+)\.", out)
    assert killed, out
    assert 10 <= int(killed.group(2)) < 200  # a checkpoint was written, well before the end
    assert "3/3 resumed in a new process from step " + killed.group(2) in out
    assert "final parameters: identical bit for bit (5 values)" in out
    assert "next 5 random draws: identical bit for bit" in out
    assert "Verdict: OK." in out
    for line in QUALIFY:
        assert line in out


def test_without_the_optimizer_state_the_resume_test_fails_and_names_it(kit):
    tested = run(kit, "kernodeck/resume_test.py", "--omit", "optimizer")

    assert tested.returncode == 1
    out = tested.stdout
    assert "final parameters: DIFFERENT (5 of 5 values)" in out
    assert "Verdict: FAILED. The checkpoint leaves out the optimizer state." in out
    assert "- the optimizer state (the momentum velocity): after the resume it restarted" in out
    assert "Verdict: OK" not in out


def test_without_the_generator_state_the_resume_test_fails_and_names_it(kit):
    tested = run(kit, "kernodeck/resume_test.py", "--omit", "rng")

    assert tested.returncode == 1
    out = tested.stdout
    assert "next random draws: DIFFERENT" in out
    assert "Verdict: FAILED. The checkpoint leaves out the RNG state." in out
    assert "- the random-generator state: after the resume the generator restarted" in out


def test_the_checkpoint_holds_model_optimizer_generator_and_step_written_atomically(kit, tmp_path):
    workdir = tmp_path / "train"

    trained = run(kit, "kernodeck/train.py", "--workdir", workdir, "--steps", "40")

    assert trained.returncode == 0, trained.stderr
    # No temporary file left behind: each write replaced its target in one step.
    assert sorted(os.listdir(workdir)) == ["checkpoint.json", "final.json"]
    checkpoint = json.loads((workdir / "checkpoint.json").read_text())
    assert checkpoint["step"] == 40
    assert {"model", "optimizer", "rng", "step"} <= set(checkpoint)
    assert len(checkpoint["optimizer"]["velocity"]) == 5
    assert len(checkpoint["rng"]["internal"]) == 625
    assert all(value.startswith(("0x", "-0x")) for value in checkpoint["model"]["w"])

    # Resuming a finished training from its checkpoint gives the same final state.
    first = (workdir / "final.json").read_text()
    again = run(kit, "kernodeck/train.py", "--workdir", workdir, "--steps", "40", "--resume")
    assert again.returncode == 0
    assert "resumed from step 40" in again.stdout
    assert (workdir / "final.json").read_text() == first


def test_kernodeck_speaks_the_italian_kits_language(kit_it):
    tested = run(kit_it, "kernodeck/resume_test.py", "--omit", "rng")

    assert tested.returncode == 1
    assert "Esito: NON SUPERATO. Il checkpoint non contiene lo stato del generatore casuale." in (
        tested.stdout
    )
    assert "La tua applicazione deve ancora qualificare" in tested.stdout
