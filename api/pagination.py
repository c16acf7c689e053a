"""Cursor pagination: {"results": [...], "next": url|null, "previous": url|null}.

`page_size` is a whole number of ASCII digits from 1 to MAX_PAGE_SIZE and the cursor one this
API handed out (signed, so a tampered one cannot reach the query); anything else is a 400
problem naming the parameter (issue 23 F4: a bad cursor was an undocumented 404, a bad size
silently the default). The schema documents both, with the bounds.
"""

import binascii
from base64 import urlsafe_b64decode, urlsafe_b64encode
from urllib import parse

from django.core import signing
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import pagination
from rest_framework.utils.urls import replace_query_param

from accounts.fields import ascii_int

from .problems import validation_problem

PAGE_SIZE = 50
MAX_PAGE_SIZE = 100
CURSOR_SALT = "api.pagination.cursor"


def _bad_parameter(name: str, message) -> Exception:
    return validation_problem(
        [{"field": name, "message": message}],
        detail=_("The query parameter “%(name)s” is not valid: %(message)s")
        % {"name": name, "message": message},
    )


class CursorPagination(pagination.CursorPagination):
    """Newest first; a view over rows with another creation field sets `ordering` on a
    subclass."""

    ordering = ("-created_at", "-pk")
    page_size = PAGE_SIZE
    max_page_size = MAX_PAGE_SIZE
    page_size_query_param = "page_size"
    cursor_query_description = gettext_lazy(
        "Where the page starts: the `next` or `previous` link of the page before, as given."
    )
    page_size_query_description = gettext_lazy("How many results a page holds.")

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["results", "next", "previous"],
            "properties": {
                "results": schema,
                "next": {"type": ["string", "null"], "format": "uri"},
                "previous": {"type": ["string", "null"], "format": "uri"},
            },
        }

    def get_schema_operation_parameters(self, view):
        cursor, size = super().get_schema_operation_parameters(view)
        size["schema"] = {
            "type": "integer",
            "minimum": 1,
            "maximum": self.max_page_size,
            "default": self.page_size,
        }
        return [cursor, size]

    def get_page_size(self, request):
        text = request.query_params.get(self.page_size_query_param)
        if text is None:
            return self.page_size
        # DRF reads the number with int(), which takes "٥" or " 5"; ASCII digits only here.
        size = ascii_int(text)
        if size is None or not 1 <= size <= self.max_page_size:
            raise _bad_parameter(
                self.page_size_query_param,
                _("Give a whole number from 1 to %(max)d.") % {"max": self.max_page_size},
            )
        return size

    def encode_cursor(self, cursor):
        tokens = {}
        if cursor.offset != 0:
            tokens["o"] = str(cursor.offset)
        if cursor.reverse:
            tokens["r"] = "1"
        if cursor.position is not None:
            tokens["p"] = cursor.position
        signed = signing.Signer(salt=CURSOR_SALT).sign(parse.urlencode(tokens, doseq=True))
        encoded = urlsafe_b64encode(signed.encode()).decode("ascii")
        return replace_query_param(self.base_url, self.cursor_query_param, encoded)

    def decode_cursor(self, request):
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is None:
            return None
        try:
            signed = urlsafe_b64decode(encoded.encode("ascii")).decode("ascii")
            querystring = signing.Signer(salt=CURSOR_SALT).unsign(signed)
            tokens = parse.parse_qs(querystring, keep_blank_values=True)
            offset = pagination._positive_int(tokens.get("o", ["0"])[0], cutoff=self.offset_cutoff)
            reverse = tokens.get("r", ["0"])[0] == "1"
            position = tokens.get("p", [None])[0]
        except (TypeError, ValueError, UnicodeError, binascii.Error, signing.BadSignature):
            raise _bad_parameter(
                self.cursor_query_param,
                _("Use the next or previous link of a page, unchanged."),
            ) from None
        return pagination.Cursor(offset=offset, reverse=reverse, position=position)
