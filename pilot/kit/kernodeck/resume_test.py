#!/usr/bin/env python3
"""Kernodeck's resume test: does a training killed mid-way, resumed in a NEW process, end
exactly where the uninterrupted one ends?

    python3 resume_test.py [--steps 300] [--lang it|en] [--keep]
    python3 resume_test.py --omit optimizer     DEMONSTRATION: a checkpoint without it fails
    python3 resume_test.py --omit rng           DEMONSTRATION: a checkpoint without it fails

1. train.py runs once without interruption;
2. train.py runs again and is killed without warning (SIGKILL) after a checkpoint has been
   written, well before the end;
3. a new process resumes from that checkpoint and finishes.
The final parameters and the generator's next draws of 1 and 3 are compared bit for bit
(float.hex). Exit status: 0 identical, 1 different (the missing state is named), 2 the test
could not run (the training failed, or ended before it could be interrupted).

Standard library only, Python >= 3.8.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

DEFAULT_LANGUAGE = "en"  # set by the kit builder
TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train.py")
REQUIRED_STATES = ("model", "optimizer", "rng", "step")
TIMEOUT_SECONDS = 300
ATTEMPTS = 3

MESSAGES = {
    "en": {
        "work": "Working folder: {path}",
        "run_a": "1/3 uninterrupted run: {steps} steps, final state recorded.",
        "run_b": (
            "2/3 second run killed without warning (SIGKILL) after the checkpoint of step "
            "{killed_at} of {steps}; the last checkpoint on disk is step {step}."
        ),
        "run_c": "3/3 resumed in a new process from step {step}, finished and recorded.",
        "train_failed": "the training failed ({what}, exit status {status}):\n{output}",
        "not_interrupted": (
            "the second run ended before it could be killed: nothing was tested. Run again, "
            "or slow it down with --step-delay (now {delay} s per step)."
        ),
        "no_checkpoint": "the killed run left no checkpoint: nothing to resume from",
        "same_params": "final parameters: identical bit for bit ({count} values)",
        "same_draws": "next {count} random draws: identical bit for bit",
        "diff_params": "final parameters: DIFFERENT ({count} of {total} values), e.g. {example}",
        "diff_draws": "next random draws: DIFFERENT, e.g. {example}",
        "ok": (
            "Verdict: OK. Resumed in a new process from its checkpoint, the training ends "
            "exactly as without the interruption."
        ),
        "failed_missing": "Verdict: FAILED. The checkpoint leaves out {states}.",
        "missing_optimizer": (
            "- the optimizer state (the momentum velocity): after the resume it restarted from "
            "zero, so the updates, and the final parameters, differ."
        ),
        "missing_rng": (
            "- the random-generator state: after the resume the generator restarted from its "
            "seed, so the batches, the noise, the parameters and the next draws differ."
        ),
        "missing_model": "- the model parameters.",
        "missing_step": "- the step counter.",
        "failed_other": (
            "Verdict: FAILED. The checkpoint holds {states}, yet the resumed run differs: "
            "some other state changes during training and is not saved."
        ),
        "qualify": (
            "This shows a method, on CPU, for this small loop. Your application must still "
            "qualify:\n"
            "- its own states: learning-rate scheduler, gradient scaler, EMA weights, "
            "early-stopping counters, anything that changes while it trains;\n"
            "- precision: GPU kernels, mixed precision (float16/bfloat16) and non-deterministic "
            "algorithms may not repeat bit for bit; enable deterministic modes or decide, and "
            "justify, the tolerance you compare with;\n"
            "- data: the loader's position and shuffling (sampler epoch, workers' seeds), and "
            "the data itself unchanged since the checkpoint;\n"
            "- distributed state: every process's generator, data shard and share of the "
            "optimizer."
        ),
        "kept": "The working folder stays in {path}.",
        "and": " and ",
    },
    "it": {
        "work": "Cartella di lavoro: {path}",
        "run_a": "1/3 esecuzione senza interruzione: {steps} passi, stato finale registrato.",
        "run_b": (
            "2/3 seconda esecuzione interrotta senza preavviso (SIGKILL) dopo il checkpoint del "
            "passo {killed_at} su {steps}; l'ultimo checkpoint sul disco è del passo {step}."
        ),
        "run_c": ("3/3 ripresa in un nuovo processo dal passo {step}, terminata e registrata."),
        "train_failed": (
            "l'addestramento non è riuscito ({what}, codice di uscita {status}):\n{output}"
        ),
        "not_interrupted": (
            "la seconda esecuzione è terminata prima di poter essere interrotta: nulla è stato "
            "verificato. Riprova, oppure rallentala con --step-delay (ora {delay} s per passo)."
        ),
        "no_checkpoint": "l'esecuzione interrotta non ha lasciato checkpoint: niente da riprendere",
        "same_params": "parametri finali: identici bit per bit ({count} valori)",
        "same_draws": "prossime {count} estrazioni casuali: identiche bit per bit",
        "diff_params": (
            "parametri finali: DIVERSI ({count} valori su {total}), ad esempio {example}"
        ),
        "diff_draws": "prossime estrazioni casuali: DIVERSE, ad esempio {example}",
        "ok": (
            "Esito: OK. Ripreso in un nuovo processo dal suo checkpoint, l'addestramento "
            "termina esattamente come senza interruzione."
        ),
        "failed_missing": "Esito: NON SUPERATO. Il checkpoint non contiene {states}.",
        "missing_optimizer": (
            "- lo stato dell'ottimizzatore (la velocità del momento): dopo la ripresa è "
            "ripartito da zero, quindi gli aggiornamenti, e i parametri finali, sono diversi."
        ),
        "missing_rng": (
            "- lo stato del generatore casuale: dopo la ripresa il generatore è ripartito dal "
            "suo seme, quindi i batch, il rumore, i parametri e le estrazioni successive sono "
            "diversi."
        ),
        "missing_model": "- i parametri del modello.",
        "missing_step": "- il contatore dei passi.",
        "failed_other": (
            "Esito: NON SUPERATO. Il checkpoint contiene {states}, eppure la ripresa è diversa: "
            "un altro stato cambia durante l'addestramento e non viene salvato."
        ),
        "qualify": (
            "Questo dimostra un metodo, su CPU, per questo piccolo ciclo. La tua applicazione "
            "deve ancora qualificare:\n"
            "- i propri stati: scheduler del learning rate, gradient scaler, pesi EMA, "
            "contatori di early stopping, tutto ciò che cambia durante l'addestramento;\n"
            "- la precisione: kernel GPU, precisione mista (float16/bfloat16) e algoritmi non "
            "deterministici possono non ripetersi bit per bit; attiva le modalità "
            "deterministiche oppure decidi, e giustifica, la tolleranza del confronto;\n"
            "- i dati: la posizione del caricatore e il mescolamento (epoca del sampler, semi "
            "dei worker), e i dati stessi invariati dal checkpoint;\n"
            "- lo stato distribuito: il generatore, la porzione di dati e la parte "
            "dell'ottimizzatore di ogni processo."
        ),
        "kept": "La cartella di lavoro resta in {path}.",
        "and": " e ",
    },
}

STATE_NAMES = {
    "en": {"model": "the model", "optimizer": "the optimizer state", "rng": "the RNG state",
           "step": "the step"},
    "it": {"model": "il modello", "optimizer": "lo stato dell'ottimizzatore",
           "rng": "lo stato del generatore casuale", "step": "il passo"},
}  # fmt: skip


class CannotTest(Exception):
    pass


def train_command(workdir, arguments, *extra):
    command = [
        sys.executable,
        TRAIN,
        "--workdir",
        workdir,
        "--steps",
        str(arguments.steps),
        "--checkpoint-every",
        str(arguments.checkpoint_every),
        "--lang",
        arguments.lang,
    ]
    if arguments.omit:
        command += ["--omit", arguments.omit]
    return command + list(extra)


def run_to_end(command, what, say):
    finished = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT_SECONDS
    )
    if finished.returncode != 0:
        raise CannotTest(
            say(
                "train_failed",
                what=what,
                status=finished.returncode,
                output=finished.stdout.decode("utf-8", "replace"),
            )
        )
    return finished.stdout.decode("utf-8", "replace")


def run_and_kill(command, kill_at, delay, say):
    """Start the training, kill it (SIGKILL on POSIX) once a checkpoint of step >= kill_at
    is reported; returns the step of that report."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    killed_at = None
    try:
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if line.startswith("checkpoint step="):
                step = int(line.split("=", 1)[1])
                if step >= kill_at:
                    process.kill()
                    killed_at = step
                    break
    finally:
        process.stdout.close()
        process.wait(timeout=TIMEOUT_SECONDS)
    if killed_at is None or process.returncode == 0:
        raise CannotTest(say("not_interrupted", delay=delay))
    return killed_at


def interrupt(workdir, arguments, kill_at, say):
    """Run 2: kill the training mid-way. On a machine so busy that the run ended before the
    kill, try again slower (twice at most) rather than test nothing."""
    delay = arguments.step_delay
    for attempt in range(ATTEMPTS):
        shutil.rmtree(workdir, ignore_errors=True)
        command = train_command(workdir, arguments, "--step-delay", str(delay))
        try:
            return run_and_kill(command, kill_at, delay, say)
        except CannotTest as error:
            if attempt == ATTEMPTS - 1:
                raise
            print(str(error), file=sys.stderr)
            delay = max(delay, 0.002) * 4
    raise AssertionError("unreachable")


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def flat_parameters(final):
    return list(final["model"]["w"]) + [final["model"]["b"]]


def compare(reference, resumed, say):
    """Lines describing the comparison, and whether everything is identical."""
    lines = []
    expected, got = flat_parameters(reference), flat_parameters(resumed)
    different = [index for index, pair in enumerate(zip(expected, got)) if pair[0] != pair[1]]
    if different or len(expected) != len(got):
        index = different[0] if different else 0
        lines.append(
            say(
                "diff_params",
                count=len(different),
                total=len(expected),
                example=f"{expected[index]} != {got[index]}",
            )
        )
    else:
        lines.append(say("same_params", count=len(expected)))
    draws_a, draws_c = reference["next_draws"], resumed["next_draws"]
    if draws_a != draws_c:
        lines.append(say("diff_draws", example=f"{draws_a[0]} != {draws_c[0]}"))
    else:
        lines.append(say("same_draws", count=len(draws_a)))
    return lines, not different and draws_a == draws_c


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument(
        "--step-delay",
        type=float,
        default=0.004,
        help="seconds per step of the run that is killed, so the kill lands mid-way",
    )
    parser.add_argument(
        "--omit",
        choices=("optimizer", "rng"),
        help="DEMONSTRATION: checkpoints without this state, to see the test fail",
    )
    parser.add_argument("--workdir", help="keep the runs here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--lang", choices=("en", "it"), default=DEFAULT_LANGUAGE)
    arguments = parser.parse_args(argv)
    if arguments.steps < 3 * arguments.checkpoint_every:
        parser.error("--steps must be at least three times --checkpoint-every")
    table = MESSAGES.get(arguments.lang, MESSAGES["en"])

    def say(key, **values):
        return table[key].format(**values)

    workdir = arguments.workdir or tempfile.mkdtemp(prefix="kernodeck-")
    os.makedirs(workdir, exist_ok=True)
    print(say("work", path=workdir))
    uninterrupted = os.path.join(workdir, "uninterrupted")
    interrupted = os.path.join(workdir, "interrupted")
    for folder in (uninterrupted, interrupted):
        shutil.rmtree(folder, ignore_errors=True)
    every = arguments.checkpoint_every
    # A third of the way, on a checkpoint: after one has been written, well before the end.
    kill_at = max(every, (arguments.steps // 3) // every * every)
    try:
        run_to_end(train_command(uninterrupted, arguments), "1/3", say)
        reference = read_json(os.path.join(uninterrupted, "final.json"))
        print(say("run_a", steps=arguments.steps))

        killed_at = interrupt(interrupted, arguments, kill_at, say)
        checkpoint_path = os.path.join(interrupted, "checkpoint.json")
        if not os.path.exists(checkpoint_path) or os.path.exists(
            os.path.join(interrupted, "final.json")
        ):
            raise CannotTest(say("no_checkpoint"))
        checkpoint = read_json(checkpoint_path)
        print(say("run_b", killed_at=killed_at, steps=arguments.steps, step=checkpoint["step"]))

        run_to_end(train_command(interrupted, arguments, "--resume"), "3/3", say)
        resumed = read_json(os.path.join(interrupted, "final.json"))
        print(say("run_c", step=checkpoint["step"]))
    except CannotTest as error:
        print(str(error), file=sys.stderr)
        return 2
    finally:
        if arguments.workdir or arguments.keep:
            print(say("kept", path=workdir))
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    lines, identical = compare(reference, resumed, say)
    for line in lines:
        print(line)
    names = STATE_NAMES.get(arguments.lang, STATE_NAMES["en"])
    missing = [state for state in REQUIRED_STATES if state not in checkpoint]
    if identical and not missing:
        print(say("ok"))
        status = 0
    elif missing:
        print(say("failed_missing", states=say("and").join(names[state] for state in missing)))
        for state in missing:
            print(say("missing_" + state))
        status = 1
    else:
        held = say("and").join(names[state] for state in REQUIRED_STATES)
        print(say("failed_other", states=held))
        status = 1
    print()
    print(say("qualify"))
    return status


if __name__ == "__main__":
    sys.exit(main())
