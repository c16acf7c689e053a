from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


@require_GET
def docs(request: HttpRequest) -> HttpResponse:
    """Swagger UI over /api/v1/schema/, served from our static files (static/js/api-docs.js
    starts it: the site's CSP allows no inline script)."""
    return render(request, "api/docs.html")
