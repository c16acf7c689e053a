"""Views imported by the first request they answer, not by the URLconf (issue 24).

Django's resolver imports every URLconf on the first `{% url %}` of a page, and a URLconf that
names its views imports their modules, with their forms, services and selectors: a web worker
that serves the customer pages held the operators', finance and withdrawal views too. A
URLconf that names its views through `views_in("package.module")` imports nothing more:

    customer = views_in("rental.views.customer")
    urlpatterns = [path("", customer.catalogue, name="catalogue")]

`customer.catalogue` is a `LazyView`: the first request the pattern answers imports the module
and calls the view, and every attribute Django asks of the view before calling it (CSRF's
`csrf_exempt`, `view_class`, `__name__` and `__module__` for `resolver_match`) is the view's own,
so the request goes as it would with the view itself. `path` is Django's, with the pattern's
`lookup_str` (the view's dotted path, which Django's resolver reads for every pattern when it
populates) taken from the name instead of the view. tests/test_lazy_views.py imports every view
the URLconf names, so a misspelt one fails there rather than on its first request.
"""

from importlib import import_module

from django.urls import URLPattern
from django.urls import path as django_path
from django.urls.resolvers import RoutePattern
from django.utils.functional import cached_property


class LazyView:
    """The view `name` of `module`, imported on first use."""

    def __init__(self, module: str, name: str):
        self._module_name = module
        self._name = name
        self._view = None

    def resolve(self):
        if self._view is None:
            self._view = getattr(import_module(self._module_name), self._name)
        return self._view

    def __call__(self, request, *args, **kwargs):
        return self.resolve()(request, *args, **kwargs)

    def __getattr__(self, attribute):
        # Only attributes this object lacks: csrf_exempt, view_class, __name__, __wrapped__...
        if attribute in ("_module_name", "_name", "_view"):  # not set yet (a copy being made)
            raise AttributeError(attribute)
        return getattr(self.resolve(), attribute)

    @property
    def __module__(self):  # the class's own would answer ResolverMatch's _func_path
        return self.resolve().__module__

    @property
    def dotted_path(self) -> str:
        return f"{self._module_name}.{self._name}"

    def __repr__(self):
        return f"<LazyView {self.dotted_path}>"


class views_in:  # noqa: N801 - reads as a module in a URLconf
    """`views_in("app.views").name` is the LazyView of `app.views.name`."""

    def __init__(self, module: str):
        self._module_name = module

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return LazyView(self._module_name, name)


class LazyViewURLPattern(URLPattern):
    @cached_property
    def lookup_str(self):
        return self.callback.dotted_path


def path(route, view, kwargs=None, name=None):
    """django.urls.path; a LazyView's pattern knows its lookup string without importing it."""
    if not isinstance(view, LazyView):
        return django_path(route, view, kwargs, name)
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs argument must be a dict, but got {kwargs.__class__.__name__}.")
    return LazyViewURLPattern(RoutePattern(route, name=name, is_endpoint=True), view, kwargs, name)
