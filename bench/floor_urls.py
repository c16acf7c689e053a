"""URLs of bench/http_floor.py: the application's own, plus two empty pages that measure what
every logged-in page pays before it does anything (never served outside the bench)."""

from django.http import HttpResponse
from django.template import engines
from django.urls import include, path

EMPTY_PAGE = '{% extends "base.html" %}{% block content %}x{% endblock %}'


def empty_response(request):
    """The middleware stack, the session and the logged-in user; no template."""
    assert request.user.is_authenticated or "anonymous" in request.GET
    return HttpResponse("x")


_empty_page = []


def empty_page(request):
    """The same with the site's layout (navigation, language switch, messages) around nothing;
    compiled once, as the cached loader keeps a page's template."""
    if not _empty_page:
        _empty_page.append(engines["django"].from_string(EMPTY_PAGE))
    return HttpResponse(_empty_page[0].render({}, request))


urlpatterns = [
    path("_floor/response/", empty_response),
    path("_floor/page/", empty_page),
    path("", include("config.urls")),
]
