#!/usr/bin/env python3
"""Kernodeck: a training loop small enough to run on any CPU, written to be resumed exactly.

    python3 train.py --workdir DIR [--steps 300] [--checkpoint-every 10] [--resume]

A logistic model learns from generated data with mini-batch SGD and momentum; the batches and
a little gradient noise come from a random.Random generator, as a data loader's shuffling and a
dropout would. Every --checkpoint-every steps it writes DIR/checkpoint.json ATOMICALLY (a temporary
file beside it, flushed and fsync'ed, then os.replace): the model, the optimizer state (the
momentum velocity), the generator's state and the step. A kill at any moment leaves the
previous checkpoint or the new one, never half of one. At the end DIR/final.json holds the
parameters and the generator's next draws, as float.hex strings, for an exact comparison.

--omit optimizer|rng leaves that state out of the checkpoints: a DEMONSTRATION of what goes
wrong, for resume_test.py to catch; never use it for real work.

Standard library only, Python >= 3.8.
"""

import argparse
import json
import math
import os
import random
import sys
import time

DEFAULT_LANGUAGE = "en"  # set by the kit builder
FORMAT = "kernodeck-checkpoint"
FEATURES = 4
SAMPLES = 256
BATCH = 16
LEARNING_RATE = 0.2
MOMENTUM = 0.9
GRADIENT_NOISE = 0.05
NEXT_DRAWS = 5

MESSAGES = {
    "en": {
        "checkpoint": "checkpoint step={step}",
        "resumed": "resumed from step {step} ({path})",
        "no_checkpoint": "no checkpoint in {path}: starting from step 0",
        "lost_optimizer": (
            "WARNING: the checkpoint holds no optimizer state: the momentum restarts from zero"
        ),
        "lost_rng": (
            "WARNING: the checkpoint holds no random-generator state: the generator restarts "
            "from its seed"
        ),
        "bad_checkpoint": "{path} is not a Kernodeck checkpoint: {problem}",
        "finished": "finished: {steps} steps, loss {loss:.6f}, final state in {path}",
    },
    "it": {
        "checkpoint": "checkpoint step={step}",
        "resumed": "ripreso dal passo {step} ({path})",
        "no_checkpoint": "nessun checkpoint in {path}: si parte dal passo 0",
        "lost_optimizer": (
            "ATTENZIONE: il checkpoint non contiene lo stato dell'ottimizzatore: il momento "
            "riparte da zero"
        ),
        "lost_rng": (
            "ATTENZIONE: il checkpoint non contiene lo stato del generatore casuale: il "
            "generatore riparte dal suo seme"
        ),
        "bad_checkpoint": "{path} non è un checkpoint Kernodeck: {problem}",
        "finished": "terminato: {steps} passi, perdita {loss:.6f}, stato finale in {path}",
    },
}


def say(language, key, **values):
    return MESSAGES.get(language, MESSAGES["en"])[key].format(**values)


def atomic_write_json(path, value):
    """Write `value` to `path` so that a reader sees the old file or the new one, whole."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle, sort_keys=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    directory_flag = getattr(os, "O_DIRECTORY", None)
    if directory_flag is not None:
        descriptor = os.open(folder, os.O_RDONLY | directory_flag)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def generate_data(seed):
    """The dataset: fixed by its own seed, regenerated identically by every process."""
    source = random.Random(seed)
    truth = [source.uniform(-2.0, 2.0) for _ in range(FEATURES)]
    rows = []
    for _ in range(SAMPLES):
        features = [source.gauss(0.0, 1.0) for _ in range(FEATURES)]
        logit = sum(w * x for w, x in zip(truth, features)) + source.gauss(0.0, 0.5)
        rows.append((features, 1.0 if logit > 0 else 0.0))
    return rows


def sigmoid(value):
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exponential = math.exp(value)
    return exponential / (1.0 + exponential)


def loss_of(weights, bias, rows):
    total = 0.0
    for features, label in rows:
        p = min(
            max(sigmoid(sum(w * x for w, x in zip(weights, features)) + bias), 1e-12), 1 - 1e-12
        )
        total -= label * math.log(p) + (1.0 - label) * math.log(1.0 - p)
    return total / len(rows)


def train_step(state, rows):
    """One update: a batch drawn by the generator, a noisy gradient, SGD with momentum."""
    generator = state["rng"]
    batch = [rows[generator.randrange(len(rows))] for _ in range(BATCH)]
    gradient = [0.0] * (FEATURES + 1)
    for features, label in batch:
        error = sigmoid(sum(w * x for w, x in zip(state["w"], features)) + state["b"]) - label
        for index, value in enumerate(features):
            gradient[index] += error * value / BATCH
        gradient[FEATURES] += error / BATCH
    gradient = [g + generator.gauss(0.0, GRADIENT_NOISE) for g in gradient]
    velocity = state["velocity"]
    for index in range(FEATURES + 1):
        velocity[index] = MOMENTUM * velocity[index] + gradient[index]
    for index in range(FEATURES):
        state["w"][index] -= LEARNING_RATE * velocity[index]
    state["b"] -= LEARNING_RATE * velocity[FEATURES]
    state["step"] += 1


def rng_state_to_json(generator):
    version, internal, gauss_next = generator.getstate()
    return {
        "version": version,
        "internal": list(internal),
        "gauss_next": None if gauss_next is None else gauss_next.hex(),
    }


def rng_state_from_json(value):
    gauss_next = value["gauss_next"]
    generator = random.Random()
    generator.setstate(
        (
            value["version"],
            tuple(value["internal"]),
            None if gauss_next is None else float.fromhex(gauss_next),
        )
    )
    return generator


def checkpoint_of(state, *, seed, data_seed, omit):
    checkpoint = {
        "format": FORMAT,
        "version": 1,
        "step": state["step"],
        "seed": seed,
        "data": {"seed": data_seed, "samples": SAMPLES},
        "model": {"w": [value.hex() for value in state["w"]], "b": state["b"].hex()},
        "optimizer": {
            "name": "sgd-momentum",
            "learning_rate": LEARNING_RATE.hex(),
            "momentum": MOMENTUM.hex(),
            "velocity": [value.hex() for value in state["velocity"]],
        },
        "rng": rng_state_to_json(state["rng"]),
    }
    if omit:
        del checkpoint[omit]
        checkpoint["omitted"] = [omit]
    return checkpoint


def fresh_state(seed):
    return {
        "step": 0,
        "w": [0.0] * FEATURES,
        "b": 0.0,
        "velocity": [0.0] * (FEATURES + 1),
        "rng": random.Random(seed),
    }


def state_from_checkpoint(checkpoint, *, seed, language, path):
    """Rebuild the training state; a state missing from the checkpoint restarts, and says so."""
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise SystemExit(say(language, "bad_checkpoint", path=path, problem="wrong format"))
    try:
        state = fresh_state(seed)
        state["step"] = int(checkpoint["step"])
        state["w"] = [float.fromhex(value) for value in checkpoint["model"]["w"]]
        state["b"] = float.fromhex(checkpoint["model"]["b"])
        if "optimizer" in checkpoint:
            state["velocity"] = [float.fromhex(v) for v in checkpoint["optimizer"]["velocity"]]
        else:
            print(say(language, "lost_optimizer"), file=sys.stderr)
        if "rng" in checkpoint:
            state["rng"] = rng_state_from_json(checkpoint["rng"])
        else:
            print(say(language, "lost_rng"), file=sys.stderr)
    except (KeyError, TypeError, ValueError) as error:
        raise SystemExit(say(language, "bad_checkpoint", path=path, problem=repr(error))) from None
    return state


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", required=True, help="where checkpoint.json and final.json go")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--data-seed", type=int, default=7)
    parser.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    parser.add_argument(
        "--omit",
        choices=("optimizer", "rng"),
        help="DEMONSTRATION ONLY: leave this state out of the checkpoints",
    )
    parser.add_argument(
        "--step-delay", type=float, default=0.0, help="seconds to wait per step (to be killed)"
    )
    parser.add_argument("--lang", choices=("en", "it"), default=DEFAULT_LANGUAGE)
    arguments = parser.parse_args(argv)
    language = arguments.lang
    if arguments.steps < 1 or arguments.checkpoint_every < 1:
        parser.error("--steps and --checkpoint-every must be at least 1")
    os.makedirs(arguments.workdir, exist_ok=True)
    checkpoint_path = os.path.join(arguments.workdir, "checkpoint.json")
    final_path = os.path.join(arguments.workdir, "final.json")
    rows = generate_data(arguments.data_seed)

    state = fresh_state(arguments.seed)
    if arguments.resume:
        if os.path.exists(checkpoint_path):
            with open(checkpoint_path, encoding="utf-8") as handle:
                checkpoint = json.load(handle)
            state = state_from_checkpoint(
                checkpoint, seed=arguments.seed, language=language, path=checkpoint_path
            )
            print(say(language, "resumed", step=state["step"], path=checkpoint_path))
        else:
            print(say(language, "no_checkpoint", path=checkpoint_path))
    sys.stdout.flush()

    while state["step"] < arguments.steps:
        train_step(state, rows)
        if state["step"] % arguments.checkpoint_every == 0:
            atomic_write_json(
                checkpoint_path,
                checkpoint_of(
                    state, seed=arguments.seed, data_seed=arguments.data_seed, omit=arguments.omit
                ),
            )
            print(say(language, "checkpoint", step=state["step"]))
            sys.stdout.flush()
        if arguments.step_delay:
            time.sleep(arguments.step_delay)

    loss = loss_of(state["w"], state["b"], rows)
    atomic_write_json(
        final_path,
        {
            "steps": state["step"],
            "model": {"w": [value.hex() for value in state["w"]], "b": state["b"].hex()},
            "next_draws": [state["rng"].random().hex() for _ in range(NEXT_DRAWS)],
            "loss": loss.hex(),
        },
    )
    print(say(language, "finished", steps=state["step"], loss=loss, path=final_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
