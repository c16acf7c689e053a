"""How one document is classified: the part of the pilot your own application replaces.

Deliberately plain (keywords counted per allowed category) so that the pilot tests the path —
input, parameters, results, rejections, re-reading — and not a model. Every refusal carries a
reason code and the values of its message, so that no document disappears silently.
"""

import re
import unicodedata
from collections import namedtuple

# status: "accepted" or "rejected"; category: for an accepted one; reason: (code, values) for a
# rejected one, rendered into words by messages.py in the run's language.
Outcome = namedtuple("Outcome", "status category reason")

# Characters a text document may hold below the space: tab, line feed, carriage return, form feed.
ALLOWED_CONTROL = {0x09, 0x0A, 0x0D, 0x0C}


def normalise(text):
    """Lower case without accents, so that 'Attività' and 'attivita' count alike."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def _keyword_pattern(keyword):
    words = normalise(keyword).split()
    return re.compile(r"\b" + r"\s+".join(re.escape(word) for word in words) + r"\b")


class Classifier:
    """Built once per run from the configuration's categories and keywords."""

    def __init__(self, *, allowed_categories, keywords, min_score, max_document_bytes):
        self.allowed = list(allowed_categories)
        self.min_score = min_score
        self.max_bytes = max_document_bytes
        self.patterns = {
            category: [_keyword_pattern(keyword) for keyword in keywords[category]]
            for category in self.allowed
        }

    def classify(self, raw):
        """The outcome for a document's bytes: an allowed category, or a reason to refuse it."""
        if len(raw) > self.max_bytes:
            return _rejected("too_large", size=len(raw), limit=self.max_bytes)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            return _rejected("not_text", byte=raw[error.start], offset=error.start)
        if text.startswith("\ufeff"):
            text = text[1:]
        for offset, char in enumerate(text):
            code = ord(char)
            if (code < 0x20 and code not in ALLOWED_CONTROL) or code == 0x7F:
                return _rejected("control", code=code, offset=offset)
        if not text.strip():
            return _rejected("empty")
        plain = normalise(text)
        scores = {
            category: sum(len(pattern.findall(plain)) for pattern in patterns)
            for category, patterns in self.patterns.items()
        }
        ranked = sorted(self.allowed, key=lambda category: -scores[category])
        best = ranked[0]
        if scores[best] < self.min_score:
            return _rejected("no_category", categories=", ".join(self.allowed))
        if len(ranked) > 1 and scores[ranked[1]] == scores[best]:
            return _rejected("ambiguous", first=best, second=ranked[1], score=scores[best])
        return Outcome("accepted", best, None)


def _rejected(code, **values):
    return Outcome("rejected", None, (code, values))
