"""A logged-in page's layout around its content, rendered once per state of what it shows and
kept in the worker.

The layout (templates/base.html and the page's own blocks around `{{ content }}`) shows, for a
logged-in customer: the language, the staff roles (the navigation), the current path (the
language form's `next`), the CSRF token of its forms, the messages, and what the page passes
itself (its title's values). The key is all of that but the token and the messages, read on
every request, so a change is a new key on the very next request; the token goes into its slot
per response (one masked token for the whole page, content included: `csrf_token_once`), and a
request with a message to show renders as usual (a message is shown once).
"""

import secrets

from django.contrib.messages import get_messages
from django.core.signals import setting_changed
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from .kept import Kept
from .roles import FINANCE, OPERATORS, has_role

# Random per process: no text on a page can hold them by chance or by design.
_CONTENT_SLOT = mark_safe(f"kept-content-{secrets.token_hex(16)}")  # noqa: S308
_TOKEN_SLOT = f"kept-token-{secrets.token_hex(16)}"
# Layouts kept per worker process, the least recently used dropped first (~4 kB each).
CACHE_SIZE = 256
_kept = Kept(CACHE_SIZE)


def csrf_token_once(request: HttpRequest) -> str:
    """The request's masked CSRF token, masked once for the whole response (Django masks anew
    on every `get_token`, which costs as much as the rest of a small fragment)."""
    token = getattr(request, "_csrf_token_once", None)
    if token is None:
        token = request._csrf_token_once = get_token(request)
    return token


def render_in_kept_layout(
    request: HttpRequest, template_name: str, context: dict, content: SafeString, key: tuple
) -> HttpResponse:
    """`template_name` rendered with `context` and `content` (its `{{ content }}`, with this
    request's token already in), the rest from this worker's copy when the layout's state is
    the same; `key`: what the page's own blocks show beside the content (a title's values)."""
    token = csrf_token_once(request)
    if len(get_messages(request)):
        return render(request, template_name, {**context, "content": content, "csrf_token": token})
    user = request.user
    layout_key = (
        template_name,
        get_language(),
        user.is_authenticated,
        has_role(user, FINANCE),
        has_role(user, OPERATORS),
        request.get_full_path(),
        key,
    )
    parts = _kept.get(layout_key)
    if parts is None:
        html = render_to_string(
            template_name,
            {**context, "content": _CONTENT_SLOT, "csrf_token": _TOKEN_SLOT},
            request,
        )
        before, slot, after = html.partition(_CONTENT_SLOT)
        if not slot or _CONTENT_SLOT in after:  # a page that shows its content other than once
            return render(
                request, template_name, {**context, "content": content, "csrf_token": token}
            )
        parts = _kept.put(layout_key, (before, after))
    before, after = parts
    return HttpResponse(
        before.replace(_TOKEN_SLOT, token) + content + after.replace(_TOKEN_SLOT, token)
    )


def forget(**kwargs) -> None:
    """Drop every kept layout (tests; settings that the layout reads changed)."""
    _kept.clear()


setting_changed.connect(forget)
