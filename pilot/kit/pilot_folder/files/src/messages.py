"""The classifier's words, in English and Italian.

The pilot runs on the rented machine, far from the site and its translations, so it carries its
own. The kit builder sets DEFAULT_LANGUAGE from the customer's language; --lang overrides it.
"""

DEFAULT_LANGUAGE = "en"  # set by the kit builder
LANGUAGES = ("en", "it")

MESSAGES = {
    "en": {
        # Rejection reasons written into the results (one per rejected document).
        "reason_empty": "empty document: nothing to classify",
        "reason_too_large": "document of {size} bytes, above the limit of {limit} bytes",
        "reason_not_text": (
            "unreadable: not valid UTF-8 text (byte 0x{byte:02x} at offset {offset})"
        ),
        "reason_control": "unreadable: control character 0x{code:02x} at offset {offset}",
        "reason_no_category": (
            "no allowed category recognised (none of the keywords of {categories})"
        ),
        "reason_ambiguous": "ambiguous: {first} and {second} score equally ({score})",
        # Configuration and input.
        "config_unreadable": "cannot read the configuration {path}: {error}",
        "config_invalid": "configuration {path}: {problem}",
        "config_secret": (
            "configuration {path}: the key '{name}' looks like a credential. Parameters only "
            "in config/pilot.json: provide credentials through environment variables or a "
            "file outside this folder (README, 'Credentials')."
        ),
        "input_missing": "input folder {path} does not exist (paths are relative to {root})",
        "input_duplicate_id": "two input files share the identifier {doc_id}: {first}, {second}",
        "input_count": (
            "{path} holds {found} documents; config/pilot.json expects {expected}. The "
            "criteria are prepared before the launch: change both or neither."
        ),
        # Run folder.
        "run_exists": (
            "{path} already exists: every try needs a new run folder, this one is refused. "
            "Choose another name (or none, for a timestamped one), or finish this try with "
            "--resume {path}."
        ),
        "run_parent_missing": "cannot create {path}: its parent folder does not exist",
        "run_not_a_run": "{path} is not a run folder of this pilot (no readable summary.json)",
        "run_config_changed": (
            "config/pilot.json changed since {path} started: a resumed run keeps its "
            "parameters. Start a new run instead."
        ),
        "run_input_changed": (
            "{doc_id} changed since {path} started (its checksum differs): the pilot input "
            "must stay unchanged. Start a new run instead."
        ),
        "run_unknown_id": (
            "{path} holds a result for {doc_id}, which is not in the input: this folder was "
            "not written by this pilot. Start a new run instead."
        ),
        "run_bad_results": "{path}: {problem}",
        # Progress and end.
        "start": "Run folder: {run_dir}\nInput: {input_dir} ({count} documents)",
        "resume_start": "Resuming {run_dir}: {done} done and kept, {todo} to redo: {todo_ids}",
        "nothing_to_redo": "{run_dir}: all {count} documents have a result, nothing to redo.",
        "line_accepted": "{doc_id}  accepted  {category}",
        "line_rejected": "{doc_id}  rejected  {reason}",
        "done": (
            "Done: {accepted} accepted, {rejected} rejected, {total} in all.\n"
            "Check it from a copy: python3 check_pilot.py {run_dir}"
        ),
        "status_head": "{run_dir}: {state}, {done} of {count} documents done",
        "status_complete": "complete",
        "status_incomplete": "interrupted or still running",
        "status_done": "done:     {ids}",
        "status_todo": "to redo:  {ids}",
        "status_resume": "Resume with: python3 src/classify.py --resume {run_dir}",
        "interrupted": (
            "Interrupted. The documents done so far are kept in {run_dir}: see them with "
            "--status, finish with --resume."
        ),
        "none": "(none)",
    },
    "it": {
        "reason_empty": "documento vuoto: niente da classificare",
        "reason_too_large": "documento di {size} byte, oltre il limite di {limit} byte",
        "reason_not_text": (
            "illeggibile: non è testo UTF-8 valido (byte 0x{byte:02x} alla posizione {offset})"
        ),
        "reason_control": (
            "illeggibile: carattere di controllo 0x{code:02x} alla posizione {offset}"
        ),
        "reason_no_category": (
            "nessuna categoria ammessa riconosciuta (nessuna parola chiave di {categories})"
        ),
        "reason_ambiguous": "ambiguo: {first} e {second} hanno lo stesso punteggio ({score})",
        "config_unreadable": "impossibile leggere la configurazione {path}: {error}",
        "config_invalid": "configurazione {path}: {problem}",
        "config_secret": (
            "configurazione {path}: la chiave '{name}' sembra una credenziale. Solo parametri "
            "in config/pilot.json: fornisci gli accessi con variabili d'ambiente o con un "
            "file fuori da questa cartella (LEGGIMI, «Accessi»)."
        ),
        "input_missing": (
            "la cartella di input {path} non esiste (i percorsi sono relativi a {root})"
        ),
        "input_duplicate_id": (
            "due file di input hanno lo stesso identificatore {doc_id}: {first}, {second}"
        ),
        "input_count": (
            "{path} contiene {found} documenti; config/pilot.json ne prevede {expected}. I "
            "criteri si preparano prima del lancio: cambia entrambi o nessuno."
        ),
        "run_exists": (
            "{path} esiste già: ogni prova richiede una cartella di risultati nuova, questa è "
            "rifiutata. Scegli un altro nome (o nessuno, per uno con data e ora), oppure "
            "completa questa prova con --resume {path}."
        ),
        "run_parent_missing": "impossibile creare {path}: la cartella che la contiene non esiste",
        "run_not_a_run": (
            "{path} non è una cartella di risultati di questo pilota (summary.json assente o "
            "illeggibile)"
        ),
        "run_config_changed": (
            "config/pilot.json è cambiato dall'inizio di {path}: una ripresa mantiene i suoi "
            "parametri. Avvia invece una nuova prova."
        ),
        "run_input_changed": (
            "{doc_id} è cambiato dall'inizio di {path} (il checksum è diverso): l'input pilota "
            "deve restare immutato. Avvia invece una nuova prova."
        ),
        "run_unknown_id": (
            "{path} contiene un risultato per {doc_id}, che non è nell'input: questa cartella "
            "non è stata scritta da questo pilota. Avvia invece una nuova prova."
        ),
        "run_bad_results": "{path}: {problem}",
        "start": "Cartella della prova: {run_dir}\nInput: {input_dir} ({count} documenti)",
        "resume_start": (
            "Ripresa di {run_dir}: {done} completati e conservati, {todo} da rielaborare: "
            "{todo_ids}"
        ),
        "nothing_to_redo": (
            "{run_dir}: tutti i {count} documenti hanno un risultato, niente da rielaborare."
        ),
        "line_accepted": "{doc_id}  accettato  {category}",
        "line_rejected": "{doc_id}  rifiutato  {reason}",
        "done": (
            "Fatto: accettati {accepted}, rifiutati {rejected}, in tutto {total}.\n"
            "Controllalo da una copia: python3 check_pilot.py {run_dir}"
        ),
        "status_head": "{run_dir}: {state}, documenti completati {done} su {count}",
        "status_complete": "completa",
        "status_incomplete": "interrotta o ancora in corso",
        "status_done": "completati:      {ids}",
        "status_todo": "da rielaborare:  {ids}",
        "status_resume": "Riprendi con: python3 src/classify.py --resume {run_dir}",
        "interrupted": (
            "Interrotto. I documenti completati finora restano in {run_dir}: vedili con "
            "--status, completa con --resume."
        ),
        "none": "(nessuno)",
    },
}


def message(language, key, **values):
    """One message in `language` (English when the language is unknown), filled in."""
    table = MESSAGES.get(language, MESSAGES["en"])
    return table[key].format(**values)
