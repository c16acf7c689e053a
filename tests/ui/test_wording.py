"""The account pages say what the header says: "Log in", "Sign up", "Log out" (Italian:
"Accedi", "Registrati", "Esci"), never allauth's "Sign In" / "Signup"; a network's label has
one pair of brackets."""

import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from payments.chain.networks import all_networks

WORDS = {
    "en": {"login": "Log in", "signup": "Sign up", "logout": "Log out", "site": "GPU rental"},
    "it": {"login": "Accedi", "signup": "Registrati", "logout": "Esci", "site": "Noleggio GPU"},
}
ALLAUTH_WORDS = re.compile(r"sign[ -]?in\b|signup\b|sign out|sign-out|registrazione", re.I)


def speak(client, language):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language


def main_text(html: str) -> str:
    main = html[html.index("<main") : html.index("</main>")]
    return " ".join(re.sub(r"<[^>]+>", " ", main).split())


def title(html: str) -> str:
    return " ".join(re.search(r"<title>(.*?)</title>", html, re.S).group(1).split())


def main_link_text(html: str, path: str) -> str | None:
    link = re.search(rf'<a href="{path}[^"]*">([^<]+)</a>', html.split("<main")[1])
    return link and link.group(1)


def buttons(html: str) -> list[str]:
    main = html[html.index("<main") : html.index("</main>")]
    found = re.findall(r"<button[^>]*>(.*?)</button>", main, re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", b).split()) for b in found]


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_signup_page_says_sign_up_and_log_in_like_the_header(client, db, language):
    words = WORDS[language]
    speak(client, language)
    html = client.get(reverse("account_signup")).content.decode()
    assert title(html) == f"{words['signup']} · {words['site']}"
    assert re.search(rf"<h1[^>]*>\s*{words['signup']}\s*</h1>", html)
    assert buttons(html) == [words["signup"]]
    assert main_link_text(html, reverse("account_login")) == words["login"]
    assert not ALLAUTH_WORDS.search(main_text(html)), main_text(html)


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_login_page_says_log_in_like_the_header(client, db, language):
    words = WORDS[language]
    speak(client, language)
    html = client.get(reverse("account_login")).content.decode()
    assert title(html) == f"{words['login']} · {words['site']}"
    assert re.search(rf"<h1[^>]*>\s*{words['login']}\s*</h1>", html)
    assert buttons(html) == [words["login"]]
    assert main_link_text(html, reverse("account_signup")) == words["signup"]
    assert not ALLAUTH_WORDS.search(main_text(html)), main_text(html)


@pytest.mark.parametrize("language", ["en", "it"])
def test_logging_in_and_out_say_log_in_and_log_out(client, customer, language):
    words = WORDS[language]
    speak(client, language)
    logged_in = client.post(
        reverse("account_login"),
        {"login": customer.email, "password": "correct-horse-battery"},
        follow=True,
    ).content.decode()
    assert not ALLAUTH_WORDS.search(main_text(logged_in)), main_text(logged_in)
    page = client.get(reverse("account_logout")).content.decode()
    assert title(page) == f"{words['logout']} · {words['site']}"
    assert buttons(page) == [words["logout"]]
    assert not ALLAUTH_WORDS.search(main_text(page)), main_text(page)
    logged_out = client.post(reverse("account_logout"), follow=True).content.decode()
    assert not ALLAUTH_WORDS.search(main_text(logged_out)), main_text(logged_out)


@pytest.mark.parametrize("language", ["en", "it"])
def test_network_names_carry_no_brackets_of_their_own(language):
    # Pages write "<name> (chain id <n>)": a name in brackets would double them.
    with translation.override(language):
        names = [str(network.name) for network in all_networks().values()]
    assert all("(" not in name and ")" not in name for name in names), names
    with translation.override("en"):
        assert str(all_networks()["local"].name) == "Local test chain"
