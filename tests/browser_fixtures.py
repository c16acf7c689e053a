"""Browser tests: Playwright drives the distribution's Chromium against a live server."""

import os
import shutil

import pytest

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still
# synchronous, so Django's async-safety guard must be told so.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import sync_playwright  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if CHROMIUM is None:
        pytest.fail("Chromium is missing: `make test` installs the distribution's package.")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser, live_server):
    """A fresh browser context (no cookies) per call, as a new visitor or another device."""
    contexts = []

    def make(**options):
        options.setdefault("viewport", {"width": 1280, "height": 900})
        options.setdefault("locale", "en-US")
        context = browser.new_context(base_url=live_server.url, **options)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.csp_violations = []
        page.on(
            "console",
            lambda message: (
                "Content Security Policy" in message.text
                and page.csp_violations.append(message.text)
            ),
        )
        return page

    yield make
    for context in contexts:
        context.close()
