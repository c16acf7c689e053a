"""API tokens from a script: list, create (the secret answered once) and revoke.

The account page's form checks the body and api.tokens' services do the work, as on the page.
A token creates only tokens within itself (its scopes, its expiry: token_create's
`granted_by`); everything here needs the "tokens" scope, which no token without it can grant.
"""

import json

from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.exceptions import AuthenticationFailed, NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.authentication import REFUSALS
from api.forms import MAX_EXPIRY_DAYS, ApiTokenForm
from api.idempotency import idempotent
from api.models import SCOPE_ORDER, ApiToken, Scope
from api.pagination import CursorPagination
from api.problems import problem
from api.tokens import TokenEscalation, TokenRefused, owner_tokens, token_create, token_revoke

from .input import bind

# The request attribute carrying a new token from its creation to its answer.
NEW_SECRET = "_api_token_new_secret"
NO_TOKEN = gettext_lazy("No such API token in your account.")
SCOPE = "tokens"


class TokenState:
    ACTIVE = "active"
    EXPIRED = "expired"
    REVOKED = "revoked"
    CHOICES = (ACTIVE, EXPIRED, REVOKED)


class TokenRequest(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="What the token is for.")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices),
        min_length=1,
        help_text="Only scopes the calling token has itself.",
    )
    expires_on = serializers.DateField(
        required=False,
        allow_null=True,
        help_text=(
            f"YYYY-MM-DD, today to {MAX_EXPIRY_DAYS} days ahead: the token stops at the end of "
            "this day (UTC). Omitted or null: no expiry, only when the calling token has none; "
            "never later than the calling token's expiry."
        ),
    )


class TokenSerializer(serializers.Serializer):
    """A token as the account page lists it: never its secret."""

    id = serializers.IntegerField(source="pk")
    name = serializers.CharField()
    prefix = serializers.CharField(
        source="display_prefix", help_text="The token's public start, as gr_<prefix>_…"
    )
    scopes = serializers.SerializerMethodField()
    status = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    last_used_at = serializers.DateTimeField(allow_null=True)

    @extend_schema_field(
        serializers.ListField(child=serializers.ChoiceField(choices=Scope.choices))
    )
    def get_scopes(self, token) -> list[str]:
        return [scope for scope in SCOPE_ORDER if scope in token.scope_set]

    @extend_schema_field(serializers.ChoiceField(choices=TokenState.CHOICES))
    def get_status(self, token) -> str:
        if token.revoked_at is not None:
            return TokenState.REVOKED
        return TokenState.EXPIRED if token.is_expired else TokenState.ACTIVE


class CreatedTokenSerializer(TokenSerializer):
    token = serializers.CharField(
        allow_null=True,
        help_text=(
            "The whole token, gr_<prefix>_<secret>: answered this once, never again. A replay "
            "(the same Idempotency-Key) answers null: the secret is not stored; revoke that "
            "token and create another."
        ),
    )


def _escalation(exc: TokenEscalation):
    return problem(403, _("Beyond this token"), exc.message, "token-escalation")


class TokenListCreate(generics.ListAPIView):
    required_scopes = {"GET": SCOPE, "POST": SCOPE}
    serializer_class = TokenSerializer
    pagination_class = CursorPagination

    def get_queryset(self):
        return owner_tokens(owner=self.request.user)

    @extend_schema(
        operation_id="tokens_list",
        summary="The account's API tokens, newest first, revoked and expired ones too (no secret)",
        responses={200: TokenSerializer(many=True)},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(
        operation_id="tokens_create",
        summary="Create a token within the calling one's scopes and expiry; its secret once",
        description=(
            "The new token has only scopes the calling token has, and expires no later than "
            "it: anything beyond answers 403 (`token-escalation`) and creates nothing. The "
            "answer is the only place the whole token appears; store it at once."
        ),
        request=TokenRequest,
        responses={
            201: OpenApiResponse(CreatedTokenSerializer, description="The token, with its secret.")
        },
    )
    def post(self, request, *args, **kwargs):
        response = self._create(request)
        raw = getattr(request, NEW_SECRET, None)  # set only when the creation ran now
        if raw is None or response.status_code != status.HTTP_201_CREATED:
            return response
        if isinstance(response, Response):  # no Idempotency-Key: not rendered yet
            response.data["token"] = raw
            return response
        body = json.loads(response.content)
        body["token"] = raw
        response.content = JSONRenderer().render(body)
        return response

    post.idempotent = True

    @idempotent
    def _create(self, request):
        """The creation; its answer (what an Idempotency-Key stores and replays) has the token
        null, `post` adds it to this request's answer only (as webhook_endpoints_create)."""
        form = bind(TokenRequest, request.data, ApiTokenForm)
        try:
            created = token_create(
                owner=request.user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                expires_at=form.expires_at(),
                granted_by=request.auth,
            )
        except TokenEscalation as exc:
            raise _escalation(exc) from None
        except TokenRefused as refused:  # the calling token was revoked meanwhile
            raise AuthenticationFailed(REFUSALS[refused.reason]) from None
        setattr(request, NEW_SECRET, created.raw)
        body = {**TokenSerializer(created.token).data, "token": None}
        response = Response(body, status=status.HTTP_201_CREATED)
        response["Location"] = reverse("api:token_detail", kwargs={"token_id": created.token.pk})
        return response


class TokenDetail(APIView):
    required_scopes = {"GET": SCOPE, "DELETE": SCOPE}

    @extend_schema(
        operation_id="tokens_retrieve",
        summary="One of the account's API tokens (no secret)",
        responses={200: TokenSerializer},
    )
    def get(self, request, token_id: int):
        token = owner_tokens(owner=request.user).filter(pk=token_id).first()
        if token is None:
            raise NotFound(detail=NO_TOKEN)
        return Response(TokenSerializer(token).data)

    @extend_schema(
        operation_id="tokens_revoke",
        summary="Revoke a token (the calling one too); revoking again changes nothing",
        responses={204: OpenApiResponse(description="Revoked: the token answers 401 from now on.")},
    )
    def delete(self, request, token_id: int):
        try:
            token_revoke(owner=request.user, token_id=token_id)
        except ApiToken.DoesNotExist:
            raise NotFound(detail=NO_TOKEN) from None
        return Response(status=status.HTTP_204_NO_CONTENT)
