"""A receipt as a PDF, drawn with fpdf2 (pure Python; its Pillow and fontTools come as wheels,
so it needs no system package).

Fonts: the PDF uses the standard Helvetica of every PDF reader, which carries Latin-1 only.
Italian and the other Western European languages are Latin-1 (à è é ì ò ù, ß, ø...); what is
not — typographic dashes and quotes, the euro sign, letters such as ł or č in a name — is
written in its nearest Latin-1 form here (— as -, č as c), and anything without one as "?".
The HTML receipt shows every character as entered. Embedding a font would mean shipping a
font file with the project; Latin-1 keeps the PDF small and its text extractable as written.

Build it with the receipt's language active (payments.ledger.views.receipts does): the labels, the
amount's separators and the date follow it.
"""

import unicodedata

from django.utils.translation import gettext
from fpdf import FPDF
from fpdf.enums import XPos, YPos

from .selectors.receipts import ReceiptDocument

_NEAREST = str.maketrans(
    {
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2015": "-",
        "\u2212": "-",
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2026": "...",
        "\u2022": "\u00b7",
        "\u20ac": "EUR",
        "\u0141": "L",
        "\u0142": "l",
        "\u0110": "D",
        "\u0111": "d",
        "\u0152": "OE",
        "\u0153": "oe",
        "\u00a0": " ",
        "\u202f": " ",
    }
)


def latin1(text: str) -> str:
    """`text` as Helvetica can write it: Latin-1, the nearest form of anything else."""
    text = str(text).translate(_NEAREST)
    try:
        text.encode("latin-1")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for char in text:
        try:
            char.encode("latin-1")
            out.append(char)
            continue
        except UnicodeEncodeError:
            pass
        base = unicodedata.normalize("NFKD", char).encode("latin-1", "ignore").decode("latin-1")
        base = "".join(c for c in base if not unicodedata.combining(c))
        out.append(base or "?")
    return "".join(out)


class _Receipt(FPDF):
    def __init__(self, footer_text: str):
        super().__init__(format="A4", unit="mm")
        self._footer_text = footer_text
        self.set_margins(20, 20, 20)
        self.set_auto_page_break(auto=True, margin=20)

    def footer(self):
        self.set_y(-15)
        self.set_font("helvetica", size=8)
        self.set_text_color(110)
        self.cell(0, 5, latin1(self._footer_text), align="C")


def receipt_pdf(document: ReceiptDocument) -> bytes:
    """The receipt as PDF bytes."""
    receipt, issuer = document.receipt, document.issuer
    pdf = _Receipt(
        gettext("%(issuer)s · receipt %(reference)s")
        % {"issuer": issuer.name, "reference": receipt.reference}
    )
    pdf.set_title(latin1(document.title))
    pdf.set_author(latin1(issuer.name))
    pdf.set_creator(latin1(issuer.name))
    pdf.set_lang(receipt.language)
    pdf.set_creation_date(receipt.issued_at)
    pdf.add_page()
    width = pdf.epw

    def line(text: str, *, size: float = 10, style: str = "", height: float = 5.5) -> None:
        pdf.set_font("helvetica", style=style, size=size)
        pdf.multi_cell(width, height, latin1(text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def pair(label: str, value: str) -> None:
        pdf.set_font("helvetica", style="B", size=10)
        pdf.cell(45, 6, latin1(label))
        pdf.set_font("helvetica", size=10)
        pdf.multi_cell(width - 45, 6, latin1(value), new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    # The issuer.
    line(issuer.name, size=14, style="B", height=7)
    for address_line in issuer.address_lines:
        line(address_line)
    if issuer.vat_number:
        line(gettext("VAT number: %(number)s") % {"number": issuer.vat_number})
    if issuer.email:
        line(issuer.email)
    pdf.ln(8)

    # The receipt.
    line(document.title, size=16, style="B", height=8)
    if document.reversal_note:
        line(document.reversal_note, style="B")
    pair(gettext("Issued"), document.issued_text)
    pair(gettext("Kind"), document.kind_label)
    pdf.ln(4)

    # The customer.
    line(gettext("Issued to"), size=11, style="B", height=6)
    line(document.customer_name)
    line(document.customer_email)
    for label, value in document.billing:
        pair(label, value)
    pdf.ln(6)

    # What was paid.
    pdf.set_draw_color(160)
    pdf.set_font("helvetica", style="B", size=10)
    pdf.cell(width - 45, 7, latin1(gettext("Description")), border="B")
    pdf.cell(
        45, 7, latin1(gettext("Amount")), border="B", align="R", new_x=XPos.LMARGIN, new_y=YPos.NEXT
    )
    pdf.set_font("helvetica", size=10)
    top = pdf.get_y()
    pdf.multi_cell(width - 45, 6, latin1(receipt.description), new_x=XPos.RIGHT, new_y=YPos.TOP)
    bottom = pdf.get_y()
    pdf.set_xy(pdf.l_margin + width - 45, top)
    pdf.cell(45, 6, latin1(f"{document.amount_text} USD"), align="R")
    pdf.set_y(max(bottom, top + 6) + 1)
    pdf.line(pdf.l_margin, pdf.get_y(), pdf.l_margin + width, pdf.get_y())
    pdf.ln(2)
    pdf.set_font("helvetica", style="B", size=11)
    pdf.cell(width - 45, 7, latin1(gettext("Total")))
    pdf.cell(
        45,
        7,
        latin1(f"{document.amount_text} USD"),
        align="R",
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    pdf.ln(4)
    pair(document.method_label, document.method)
    if document.tx_hash:
        pair(gettext("Transaction"), document.tx_hash)
    pdf.ln(6)
    pdf.set_text_color(90)
    line(document.note, size=9, height=5)
    return bytes(pdf.output())
