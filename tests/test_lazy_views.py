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

    # The customer's, the operators', finance's pages and the kit's endpoints.
    assert len(patterns) > 70
    for pattern in patterns:
        assert isinstance(pattern, LazyViewURLPattern)
        view = pattern.callback.resolve()
        assert callable(view), pattern.lookup_str
        assert not isinstance(view, LazyView)
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
