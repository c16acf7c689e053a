"""Cursor pagination: {"results": [...], "next": url|null, "previous": url|null}."""

from rest_framework import pagination

from accounts.fields import ascii_int

PAGE_SIZE = 50
MAX_PAGE_SIZE = 100


class CursorPagination(pagination.CursorPagination):
    """Newest first; a view over rows with another creation field sets `ordering` on a
    subclass. `?page_size=` up to 100."""

    ordering = ("-created_at", "-pk")
    page_size = PAGE_SIZE
    max_page_size = MAX_PAGE_SIZE
    page_size_query_param = "page_size"

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

    def get_page_size(self, request):
        # DRF reads the number with int(), which takes "٥" or " 5"; ASCII digits only here.
        size = ascii_int(request.query_params.get(self.page_size_query_param))
        if size is None or size < 1:
            return self.page_size
        return min(size, self.max_page_size)
