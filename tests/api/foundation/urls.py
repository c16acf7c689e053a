"""The site's URLs plus two test-only API views: a paginated list and an idempotent POST that
creates a row (an API token), so the tests can count what a request created."""

import time

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


class Crash(APIView):
    required_scopes = {"POST": "order"}

    @idempotent
    def post(self, request):
        raise RuntimeError("boom")


urlpatterns = [
    path("api/test/tokens/", TokenList.as_view()),
    path("api/test/tokens/new/", TokenCreate.as_view()),
    path("api/test/crash/", Crash.as_view()),
    *site_urlpatterns,
]
