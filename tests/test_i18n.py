"""Italian and English throughout: complete catalogue, switchable on every page."""

import ast
import re
from pathlib import Path
from urllib.parse import quote

import polib
import pytest
from django.conf import settings
from django.template import engines
from django.template.base import Lexer, TokenType
from django.urls import reverse
from django.utils.translation.template import templatize

PO_PATH = Path(settings.BASE_DIR) / "locale" / "it" / "LC_MESSAGES" / "django.po"
MO_PATH = PO_PATH.with_suffix(".mo")
TEMPLATES_DIR = Path(settings.BASE_DIR) / "templates"


def test_the_italian_catalogue_is_complete():
    catalogue = polib.pofile(str(PO_PATH))
    assert len(catalogue) > 100
    assert [entry.msgid for entry in catalogue.untranslated_entries()] == []
    assert [entry.msgid for entry in catalogue.fuzzy_entries()] == []


def test_the_compiled_catalogue_matches_the_source():
    source = {
        (e.msgctxt, e.msgid): (e.msgstr, tuple(sorted(e.msgstr_plural.items())))
        for e in polib.pofile(str(PO_PATH))
        if not e.obsolete
    }
    compiled = {
        (e.msgctxt, e.msgid): (e.msgstr, tuple(sorted(e.msgstr_plural.items())))
        for e in polib.mofile(str(MO_PATH))
        if e.msgid
    }
    assert compiled == source, "run `make messages` to recompile locale/it"


# Text that is the same in both languages.
UNTRANSLATED_OK = re.compile(r"^(USD|GB|EN|IT|[\W\d_]*)$")


def visible_text_outside_translation(template_source: str) -> list[str]:
    """Words a template prints outside {% translate %} / {% blocktranslate %}."""
    kept, depth = [], 0
    for token in Lexer(template_source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0]
            if name in {"blocktranslate", "blocktrans"}:
                depth += 1
            elif name in {"endblocktranslate", "endblocktrans"}:
                depth -= 1
            kept.append(" ")
        elif token.token_type == TokenType.VAR:
            kept.append("0")  # a value, never a sentence of ours
        elif token.token_type == TokenType.TEXT and depth == 0:
            kept.append(token.contents)
    text = "".join(kept)
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", text)
    return [chunk for chunk in text.split() if not UNTRANSLATED_OK.match(chunk)]


TEMPLATES = sorted(
    path
    for path in TEMPLATES_DIR.rglob("*.html")
    if path.name != "500.html"  # 500 has no context
)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(TEMPLATES_DIR)))
def test_templates_print_no_untranslatable_text(path):
    assert visible_text_outside_translation(path.read_text()) == []


def test_the_500_page_speaks_both_languages():
    html = (TEMPLATES_DIR / "500.html").read_text()
    assert "Something went wrong on our side" in html
    assert "Si è verificato un errore da parte nostra" in html


def italian(msgid: str) -> str:
    for entry in polib.pofile(str(PO_PATH)):
        if entry.msgid == msgid:
            return entry.msgstr
    raise KeyError(msgid)


PAGES = ["rental:catalogue", "rental:configure", "account_login", "account_signup"]


@pytest.mark.parametrize("name", PAGES)
def test_every_page_offers_the_language_switch(client, catalogue, name):
    """Anonymous visitors get links (no CSRF token: the layout is the same for everyone)."""
    response = client.get(reverse(name))
    html = response.content.decode()
    next_path = quote(reverse(name), safe="/")
    assert f'href="{reverse("switch_language", args=["it"])}?next={next_path}"' in html
    assert f'href="{reverse("switch_language", args=["en"])}?next={next_path}"' in html
    assert f'action="{reverse("set_language")}"' not in html
    if name == "rental:catalogue":
        assert "csrfmiddlewaretoken" not in html
        assert "csrftoken" not in response.cookies


def test_logged_in_pages_offer_the_language_form(customer_client, catalogue):
    """A customer's switch is a form: it also stores the language on the account."""
    html = customer_client.get(reverse("rental:catalogue")).content.decode()
    assert f'action="{reverse("set_language")}"' in html
    assert 'name="language" value="it"' in html
    assert 'name="language" value="en"' in html
    assert "switch_language" not in html and 'href="/i18n/it/' not in html


def test_the_language_link_sets_the_cookie_and_goes_back(client, catalogue):
    configure = reverse("rental:configure") + "?gpu_model=mi300x-192gb&lots=2"
    response = client.get(reverse("switch_language", args=["it"]), {"next": configure})
    assert response.status_code == 302
    assert response["Location"] == configure
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "it"
    html = client.get(configure).content.decode()
    assert '<html lang="it">' in html
    assert italian("Configure your rental") in html


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/", "/\\evil.example/", "javascript:1", ""]
)
def test_the_language_link_goes_back_only_within_the_site(client, next_url):
    response = client.get(reverse("switch_language", args=["it"]), {"next": next_url})
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_the_language_link_knows_only_our_languages(client):
    response = client.get("/i18n/de/", {"next": "/"})
    assert response.status_code == 404
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert client.post(reverse("switch_language", args=["it"])).status_code == 405


def test_switching_to_italian_keeps_the_page_and_translates_it(client, catalogue):
    configure = reverse("rental:configure") + "?gpu_model=mi300x-192gb&lots=2"
    response = client.post(reverse("set_language"), {"language": "it", "next": configure})
    assert response.status_code == 302
    assert response["Location"] == configure

    html = client.get(configure).content.decode()
    assert '<html lang="it">' in html
    assert italian("Configure your rental") in html
    assert italian("Review order") in html
    assert "Configure your rental" not in html
    # Amounts follow Italian conventions too.
    assert "638,40 USD" in html


def test_switching_back_to_english(client, catalogue):
    client.post(reverse("set_language"), {"language": "it", "next": "/"})
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert '<html lang="en">' in client.get("/").content.decode()


def test_form_errors_are_translated(customer_client, catalogue):
    customer_client.post(reverse("set_language"), {"language": "it", "next": "/"})
    response = customer_client.post(
        reverse("rental:confirm"),
        {"gpu_model": "h100-80gb", "duration_days": "5", "lots": "11", "preparation": "ubuntu"},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert italian("Enter a whole number of lots from 1 to 10.") in html
    assert italian("Choose a duration of 3, 7 or 30 days.") in html


def test_templates_engine_is_django():
    assert engines["django"]


def _python_msgids(path: Path) -> set[str]:
    names = {"_", "gettext", "gettext_lazy", "ngettext", "ngettext_lazy"}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in names
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return found


def _template_msgids(path: Path) -> set[str]:
    code = templatize(path.read_text(), origin=str(path))
    found = set()
    for call in re.finditer(r"\bn?gettext\(((?:\s*u'(?:[^'\\]|\\.)*'\s*,?)+)", code):
        found.add(ast.literal_eval(re.findall(r"u'(?:[^'\\]|\\.)*'", call.group(1))[0][1:]))
    return found


def test_every_string_marked_for_translation_is_in_the_italian_catalogue():
    base = Path(settings.BASE_DIR)
    marked = set()
    for app in ("accounts", "rental", "payments", "monitoring", "pilot", "config"):
        for path in (base / app).rglob("*.py"):
            # The kits' files run on the customer's machines, with messages of their own.
            shipped = {"files", "kernodeck"} & set(path.parts)
            if "migrations" not in path.parts and not shipped:
                marked |= _python_msgids(path)
    for path in TEMPLATES:
        marked |= _template_msgids(path)
    catalogue = {entry.msgid for entry in polib.pofile(str(PO_PATH)) if not entry.obsolete}
    assert sorted(marked - catalogue) == [], "run `make messages` and translate the new strings"
