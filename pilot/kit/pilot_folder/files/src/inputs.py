"""The pilot's parameters and its immutable input, both read from the project folder.

Paths in config/pilot.json are relative to the folder itself (not to the current directory, not
to a home directory), so the folder behaves the same after it is copied to another machine.
"""

import hashlib
import json
import os
import re

# Words that name a credential: such a key has no place in the parameters file ("access_token",
# "apiKey", "db-password" are refused; "tokenizer" is not).
SECRET_WORDS = {"password", "passwd", "secret", "token", "apikey", "credential", "credentials"}
SECRET_PAIRS = {("api", "key"), ("private", "key"), ("access", "key")}


def looks_like_credential(key):
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(key)).lower()
    words = [word for word in re.split(r"[^a-z0-9]+", words) if word]
    if SECRET_WORDS.intersection(words):
        return True
    return any(pair in SECRET_PAIRS for pair in zip(words, words[1:]))


class PilotError(Exception):
    """A refusal with a message key of messages.py and its values; `exit_status` for the shell."""

    def __init__(self, message_key, exit_status=2, **values):
        super().__init__(message_key)
        self.key = message_key
        self.exit_status = exit_status
        self.values = values


def project_root():
    """The folder that holds src/, config/ and data/: paths are resolved from here."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sha256_of(data):
    return hashlib.sha256(data).hexdigest()


def load_config(path):
    """The parameters, checked: a bad file stops the run before any document is read."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
        config = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError) as error:
        raise PilotError("config_unreadable", path=path, error=error) from error

    def invalid(problem):
        return PilotError("config_invalid", path=path, problem=problem)

    if not isinstance(config, dict):
        raise invalid("the file must hold a JSON object")
    secret = _secret_key(config)
    if secret:
        raise PilotError("config_secret", path=path, name=secret)
    categories = config.get("allowed_categories")
    if (
        not isinstance(categories, list)
        or not categories
        or not all(isinstance(item, str) and item.strip() for item in categories)
        or len(set(categories)) != len(categories)
    ):
        raise invalid("allowed_categories must be a list of distinct, non-empty names")
    keywords = config.get("keywords")
    if not isinstance(keywords, dict) or set(keywords) != set(categories):
        raise invalid("keywords must give a list of keywords for each allowed category, no other")
    for category, words in keywords.items():
        if (
            not isinstance(words, list)
            or not words
            or not all(isinstance(word, str) and word.strip() for word in words)
        ):
            raise invalid(f"keywords of {category}: a non-empty list of words")
    for key in ("input_dir", "output_root"):
        value = config.get(key)
        if not isinstance(value, str) or not value.strip():
            raise invalid(f"{key} must be a folder name")
        if (
            os.path.isabs(value)
            or value.startswith("~")
            or ".." in value.replace("\\", "/").split("/")
        ):
            raise invalid(
                f"{key} = {value!r} must be relative to the project folder: a path into a home "
                "directory does not travel with the folder"
            )
    for key in ("expected_documents", "min_score", "max_document_bytes"):
        value = config.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise invalid(f"{key} must be a whole number above zero")
    extensions = config.get("input_extensions")
    if (
        not isinstance(extensions, list)
        or not extensions
        or not all(isinstance(item, str) and item.startswith(".") for item in extensions)
    ):
        raise invalid('input_extensions must be a list like [".txt"]')
    rejections = config.get("expected_rejections", [])
    if not isinstance(rejections, list) or not all(isinstance(item, str) for item in rejections):
        raise invalid("expected_rejections must be a list of identifiers")
    return config, sha256_of(raw)


def _secret_key(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            if looks_like_credential(key):
                return key
            found = _secret_key(inner)
            if found:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = _secret_key(inner)
            if found:
                return found
    return None


def list_inputs(config, root):
    """[(identifier, path relative to root)] of the input folder, in identifier order.

    The identifier is the file name without its extension (DOC-01.txt -> DOC-01); hidden files
    and other extensions are not inputs.
    """
    folder = os.path.join(root, config["input_dir"])
    if not os.path.isdir(folder):
        raise PilotError("input_missing", path=folder, root=root)
    found = {}
    for name in sorted(os.listdir(folder)):
        stem, extension = os.path.splitext(name)
        if name.startswith(".") or extension not in config["input_extensions"]:
            continue
        if not os.path.isfile(os.path.join(folder, name)):
            continue
        relative = "/".join((config["input_dir"].rstrip("/"), name))
        if stem in found:
            raise PilotError("input_duplicate_id", doc_id=stem, first=found[stem], second=relative)
        found[stem] = relative
    if len(found) != config["expected_documents"]:
        raise PilotError(
            "input_count",
            path=config["input_dir"],
            found=len(found),
            expected=config["expected_documents"],
        )
    return sorted(found.items())
