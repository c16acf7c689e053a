"""config/pilot.json of the pilot folder: the criteria prepared before the launch.

Parameters only. The classifier refuses a parameters file with a key that names a credential,
and the test of the kit checks that none ships.
"""

import json

ALLOWED_CATEGORIES = ("invoice", "contract", "report", "letter")

# Both languages in every kit: a customer's documents are rarely all in one.
KEYWORDS = {
    "invoice": [
        "invoice", "vat", "subtotal", "amount due", "total due", "bill to", "payment terms",
        "due date", "credit note",
        "fattura", "iva", "imponibile", "partita iva", "totale da pagare", "scadenza",
        "nota di credito",
    ],
    "contract": [
        "contract", "agreement", "parties", "party", "clause", "termination", "governing law",
        "hereby", "obligations", "signed",
        "contratto", "parti", "parte", "clausola", "recesso", "foro competente", "obblighi",
        "sottoscritto",
    ],
    "report": [
        "report", "summary", "findings", "results", "analysis", "quarter", "recommendation",
        "recommendations", "conclusions", "measured",
        "relazione", "rapporto", "sintesi", "risultati", "analisi", "trimestre",
        "raccomandazioni", "conclusioni", "misurata", "misurato",
    ],
    "letter": [
        "dear", "sincerely", "kind regards", "best regards", "yours faithfully",
        "gentile", "egregio", "spettabile", "cordiali saluti", "distinti saluti",
        "migliori saluti",
    ],
}  # fmt: skip

# The one input meant to be refused (a PDF saved as text): the check expects it rejected.
EXPECTED_REJECTIONS = ("DOC-09",)
EXPECTED_DOCUMENTS = 12


def pilot_config(*, order) -> dict:
    """The same parameters in both languages: the documents differ, the criteria do not."""
    return {
        "pilot": "gpu-rental document pilot",
        "format_version": 1,
        "order": order.reference,
        "input_dir": "data/pilot",
        "input_extensions": [".txt"],
        "output_root": "runs",
        "expected_documents": EXPECTED_DOCUMENTS,
        "expected_rejections": list(EXPECTED_REJECTIONS),
        "allowed_categories": list(ALLOWED_CATEGORIES),
        "keywords": KEYWORDS,
        "min_score": 2,
        "max_document_bytes": 65536,
    }


def pilot_config_bytes(*, order) -> bytes:
    text = json.dumps(pilot_config(order=order), ensure_ascii=False, indent=2)
    return (text + "\n").encode("utf-8")
