"""`{% layoutcache a b %}...{% endlayoutcache %}`: a part of the layout rendered once per
process for each language and each value of its arguments (the navigation for a role set, the
head's static links), then reused.

Only for what is the same for everyone with those values: links, translated labels, static
paths. Nothing of the visitor (their name, a CSRF token, the current path) may be inside.
The entries are bounded by the arguments' values (a few booleans, a section name).
"""

from django import template
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

register = template.Library()


class LayoutCacheNode(template.Node):
    def __init__(self, nodelist, arguments, name):
        self.nodelist = nodelist
        self.arguments = arguments
        self.name = name
        self.rendered: dict[tuple, str] = {}

    def render(self, context):
        key = (get_language(), *(bool(argument.resolve(context)) for argument in self.arguments))
        html = self.rendered.get(key)
        if html is None:
            html = self.rendered[key] = mark_safe(self.nodelist.render(context))  # noqa: S308
        return html


@register.tag
def layoutcache(parser, token):
    """{% layoutcache "name" flag ... %}: the flags are read as booleans (a role, being logged
    in); the name only labels the part."""
    bits = token.split_contents()
    if len(bits) < 2:
        raise template.TemplateSyntaxError("layoutcache needs a name")
    nodelist = parser.parse(("endlayoutcache",))
    parser.delete_first_token()
    return LayoutCacheNode(nodelist, [parser.compile_filter(bit) for bit in bits[2:]], bits[1])
