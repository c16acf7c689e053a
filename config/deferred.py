"""Web workers import only what the pages they serve use (issue 24).

`deferred_include(route, module, namespace)`: a namespaced URLconf (the API under /api/) whose
module is imported by the first request under its prefix or the first `reverse()` in its namespace,
not when the root URLconf is populated for the first `{% url %}` of a page: Django's resolver
populates every included URLconf, namespaced or not, on the first reverse. A worker that serves
only pages never imports Django REST framework's views, drf-spectacular's schema generator,
PyYAML or Pygments (measured with `bench/http_pages.py --memory`).

`DjangoTemplates`: Django's template backend without the template tag libraries no template
loads: Django imports every installed app's libraries when the engine starts, and DRF's
(`rest_framework`, for the browsable API, which is off: REST_FRAMEWORK renders JSON only)
imports DRF with PyYAML, Pygments and requests.

fido2 and cryptography: config/lazy_modules.py.
"""

from importlib import import_module

from django.apps import apps
from django.forms.renderers import DjangoTemplates as DjangoTemplatesFormRenderer
from django.template.backends.django import DjangoTemplates as DjangoTemplatesBackend
from django.template.backends.django import get_package_libraries
from django.urls import URLResolver
from django.urls.resolvers import RoutePattern
from django.utils.translation import get_language


class DeferredURLResolver(URLResolver):
    """A namespaced URLResolver populated by its own lookups only. The root resolver's
    `_populate()` calls every child's `_populate()` but uses only the namespace and app name
    of a namespaced child, which this one knows without importing its module."""

    def _populate(self):
        # Called by the root resolver: nothing it needs from this child's patterns.
        return

    def _populate_own(self):
        if get_language() not in self._reverse_dict:
            URLResolver._populate(self)

    @property
    def reverse_dict(self):
        self._populate_own()
        return self._reverse_dict[get_language()]

    @property
    def namespace_dict(self):
        self._populate_own()
        return self._namespace_dict[get_language()]

    @property
    def app_dict(self):
        self._populate_own()
        return self._app_dict[get_language()]


def deferred_include(route: str, module: str, namespace: str) -> DeferredURLResolver:
    """`path(route, include(module))` for a URLconf module whose `app_name` is `namespace`,
    imported on first use (`urlconf_module` is a cached property that imports a dotted name)."""
    return DeferredURLResolver(
        RoutePattern(route, is_endpoint=False),
        module,
        app_name=namespace,
        namespace=namespace,
    )


class DjangoTemplates(DjangoTemplatesBackend):
    """TEMPLATES' backend: Django's, without the tag libraries of the apps in UNUSED_TAG_APPS
    (Django's own collation, django.template.backends.django.get_template_tag_modules, imports
    every module of every app's templatetags package to find them)."""

    UNUSED_TAG_APPS = frozenset({"rest_framework"})

    def get_templatetag_libraries(self, custom_libraries):
        candidates = ["django.templatetags"] + [
            f"{app.name}.templatetags"
            for app in apps.get_app_configs()
            if app.name not in self.UNUSED_TAG_APPS
        ]
        libraries = {}
        for candidate in candidates:
            try:
                package = import_module(candidate)
            except ImportError:  # no templatetags package: as Django does
                continue
            if hasattr(package, "__path__"):
                for name in get_package_libraries(package):
                    libraries[name.removeprefix(candidate).lstrip(".")] = name
        return {**libraries, **custom_libraries}


class FormRenderer(DjangoTemplatesFormRenderer):
    """FORM_RENDERER: Django's default, on the backend above (Django's builds its own engine
    with every installed tag library)."""

    backend = DjangoTemplates
