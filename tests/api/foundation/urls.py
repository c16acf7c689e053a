"""The site's URLs plus test-only API views: a paginated list, an idempotent POST that
creates a row (an API token), so the tests can count what a request created, and one that
holds each request at a gate the test opens (a request still running when its claim goes
stale)."""

import threading
import time
from dataclasses import dataclass, field

from django.urls import path
from rest_framework import serializers
from rest_framework.generics import ListAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from api.idempotency import idempotent
from api.models import ApiToken
from api.tokens import token_create
from config.urls import handler404, handler500  # noqa: F401
from config.urls import urlpatterns as site_urlpatterns


class TokenRowSerializer(serializers.ModelSerializer):
    class Meta:
        model = ApiToken
        fields = ("id", "name", "prefix", "created_at")


class TokenList(ListAPIView):
    required_scopes = {"GET": "read"}
    serializer_class = TokenRowSerializer

    def get_queryset(self):
        return ApiToken.objects.filter(owner=self.request.user)


class TokenCreate(APIView):
    required_scopes = {"POST": "order"}
    pause_seconds = 0.0
    fail_next = []  # statuses to answer with instead of creating (one per request)

    @idempotent
    def post(self, request):
        if self.fail_next:
            return Response({"failed": True}, status=self.fail_next.pop(0))
        name = request.data.get("name")
        if not isinstance(name, str) or not name:
            return Response({"name": "required"}, status=400)
        created = token_create(owner=request.user, name=name, scopes=["read"])
        time.sleep(type(self).pause_seconds)  # keeps the key in flight for parallel requests
        return Response(
            {"id": created.token.pk, "name": created.token.name},
            status=201,
            headers={"Location": f"/api/test/tokens/{created.token.pk}/"},
        )


@dataclass
class Gate:
    """Holds one request after it created its token: `entered` is set then, the request waits
    for `release` and answers `status` (201 with the token, or that failure status)."""

    status: int = 201
    entered: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)


class GatedCreate(APIView):
    required_scopes = {"POST": "order"}
    gates: list[Gate] = []  # taken one per request, in the order they arrive
    lock = threading.Lock()

    @idempotent
    def post(self, request):
        with type(self).lock:
            gate = type(self).gates.pop(0) if type(self).gates else None
        created = token_create(owner=request.user, name=request.data["name"], scopes=["read"])
        if gate is not None:
            gate.entered.set()
            gate.release.wait(timeout=30)
            if gate.status != 201:
                return Response({"failed": True}, status=gate.status)
        return Response({"id": created.token.pk}, status=201)


class Crash(APIView):
    required_scopes = {"POST": "order"}

    @idempotent
    def post(self, request):
        raise RuntimeError("boom")


urlpatterns = [
    path("api/test/tokens/", TokenList.as_view()),
    path("api/test/tokens/new/", TokenCreate.as_view()),
    path("api/test/crash/", Crash.as_view()),
    path("api/test/tokens/gated/", GatedCreate.as_view()),
    *site_urlpatterns,
]
