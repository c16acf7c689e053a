"""URLconfs name their views through config/lazy_views.py: a view's module is imported by the
first request the view answers, and until then Django sees the view as it would the view
itself (what it reads before calling it, what `resolve()` reports)."""

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

from config.deferred import DeferredURLResolver
from config.lazy_views import LazyView, LazyViewURLPattern, path, views_in


def lazy_patterns(resolver: URLResolver):
    for entry in resolver.url_patterns:
        if isinstance(entry, DeferredURLResolver):  # the API: its own URLconf, imported apart
            continue
        if isinstance(entry, URLResolver):
            yield from lazy_patterns(entry)
        elif isinstance(entry, URLPattern) and isinstance(entry.callback, LazyView):
            yield entry


def test_every_view_the_urlconfs_name_exists():
    patterns = list(lazy_patterns(get_resolver()))

    # The customer's, the operators', finance's pages, the kit's endpoints and allauth's.
    assert len(patterns) > 90
    for pattern in patterns:
        assert isinstance(pattern, LazyViewURLPattern)
        view = pattern.callback.resolve()
        assert callable(view), pattern.lookup_str
        assert not isinstance(view, LazyView)
        if not pattern.lookup_str.startswith("allauth."):  # allauth's: as_view() functions
            assert pattern.lookup_str == f"{view.__module__}.{view.__name__}", pattern.name


def test_resolve_reports_the_view_itself():
    from rental.views import customer

    match = resolve(reverse("rental:order_list"))

    assert match.func.resolve() is customer.order_list
    assert match._func_path == "rental.views.customer.order_list"
    assert match.view_name == "rental:order_list"
    assert match.func.__name__ == "order_list"
    assert match.func.__module__ == "rental.views.customer"


def test_what_the_view_carries_is_read_through():
    """The kit's upload endpoint is csrf_exempt (no session, its token is the credential):
    CsrfViewMiddleware reads that from the pattern's callback before calling it."""
    match = resolve(reverse("pilot:report_upload_api", kwargs={"order_id": 1}))

    assert match.func.csrf_exempt is True
    assert getattr(resolve(reverse("rental:catalogue")).func, "csrf_exempt", False) is False


@pytest.mark.django_db
def test_a_post_without_a_token_to_a_lazy_view_is_refused_and_one_that_is_exempt_is_not():
    client = Client(enforce_csrf_checks=True)

    assert client.post(reverse("rental:confirm")).status_code == 403
    # Past CSRF: the kit's endpoint answers for itself (no token: 401/403 of its own, not CSRF).
    response = client.post(reverse("pilot:report_upload_api", kwargs={"order_id": 1}))
    assert b"CSRF" not in response.content


def test_a_module_is_imported_by_the_first_call_only(tmp_path, monkeypatch):
    (tmp_path / "lazy_views_sample.py").write_text(
        "CALLS = []\n"
        "def hello(request, name):\n"
        "    CALLS.append(name)\n"
        "    return f'hello {name}'\n"
        "hello.flag = 'set'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import sys

    sample = views_in("lazy_views_sample")
    pattern = path("hello/<str:name>/", sample.hello, name="hello")

    assert pattern.lookup_str == "lazy_views_sample.hello"
    assert "lazy_views_sample" not in sys.modules
    assert pattern.resolve("hello/you/").func("request", name="you") == "hello you"
    assert sys.modules["lazy_views_sample"].CALLS == ["you"]
    assert pattern.callback.flag == "set"
    with pytest.raises(TypeError):
        path("x/", sample.hello, kwargs=["not", "a", "dict"])


# Runs in a fresh interpreter: the root URLconf (allauth's URLconfs imported with their views
# stood in for), then allauth's URLconfs imported again the usual way.
ALLAUTH_SCRIPT = r"""
import json, sys
import django
django.setup()
from django.urls import URLPattern, URLResolver

def walk(patterns, prefix=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, route)
        else:
            callback = entry.callback
            view = callback.resolve() if hasattr(type(callback), "resolve") else callback
            yield [route, entry.name, f"{view.__module__}.{view.__qualname__}", entry.lookup_str]

import config.urls
loaded_after_urlconf = sorted(
    name for name in sys.modules if name.startswith("allauth.") and name.endswith(".views")
)
accounts = next(e for e in config.urls.urlpatterns if str(e.pattern) == "accounts/")
lazy = list(walk(accounts.url_patterns))
for name in [name for name in sys.modules if name.startswith("allauth.") and name.endswith("urls")]:
    del sys.modules[name]
import allauth.urls
usual = list(walk(allauth.urls.urlpatterns))
print(json.dumps({"loaded": loaded_after_urlconf, "lazy": lazy, "usual": usual}))
"""


def test_allauths_urlconf_with_lazy_views_is_allauths():
    """The same routes, names and views as allauth's URLconf imported the usual way (a new
    allauth that changes them fails here), and importing it imported none of the view modules
    (config/urls.py's ALLAUTH_VIEW_MODULES)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from config.urls import ALLAUTH_VIEW_MODULES

    result = subprocess.run(
        [sys.executable, "-c", ALLAUTH_SCRIPT],
        cwd=Path(__file__).resolve().parent.parent,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])

    assert not set(report["loaded"]) & set(ALLAUTH_VIEW_MODULES)
    assert len(report["usual"]) > 20
    assert [entry[:3] for entry in report["lazy"]] == [entry[:3] for entry in report["usual"]]
