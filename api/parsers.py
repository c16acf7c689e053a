"""The API's JSON parser: DRF's, with a bound on nesting.

A body nested deeper than Python's recursion limit made `json.load` raise RecursionError,
which DRF does not catch (a 500, issue 23 F2). Our bodies are flat objects of a few fields, so
the parser refuses anything nested deeper than MAX_JSON_DEPTH with a 400, whether or not
Python could have read it: what reaches a view can be walked, hashed and rendered safely.
"""

from django.utils.translation import gettext as _
from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_JSON_DEPTH = 32


def nested_too_deeply() -> ParseError:
    return ParseError(
        _("The JSON body is nested too deeply: at most %(depth)d levels of objects and lists.")
        % {"depth": MAX_JSON_DEPTH}
    )


def json_depth(value) -> int:
    """How many objects and lists deep `value` is (0 for a string or number), read without
    recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


class JSONParser(parsers.JSONParser):
    """REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]: a body nested too deeply is a ParseError (the
    400 "Malformed request body" problem), never a RecursionError."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise nested_too_deeply() from None
        if json_depth(data) > MAX_JSON_DEPTH:
            raise nested_too_deeply()
        return data
