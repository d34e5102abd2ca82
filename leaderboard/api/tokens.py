"""API tokens: the page where a signed-in user creates, sees and revokes theirs, and the endpoint ``kgb login``
exchanges a username and password at. Tokens are django-rest-knox's: the database keeps a SHA-512 digest and
the key's first 15 characters, so a key is shown once, when it is made."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from kgbweb.accounts.services import TokenLimitReached, api_token_create, api_token_revoke, api_tokens_live
from leaderboard.api.serializers import TokenSerializer


class CredentialsSerializer(serializers.Serializer):
    """A username and password, checked by the authentication backends (django-axes' lockout first)."""

    username = serializers.CharField(max_length=150, write_only=True)
    password = serializers.CharField(
        max_length=4096, trim_whitespace=False, write_only=True, style={"input_type": "password"}
    )

    def validate(self, attrs: dict) -> dict:
        user = authenticate(request=self.context["request"], username=attrs["username"], password=attrs["password"])
        if user is None:
            raise serializers.ValidationError("Unable to log in with the provided credentials.", code="authorization")
        attrs["user"] = user
        return attrs


@login_required
@require_http_methods(["GET", "POST"])
def token_page(request: HttpRequest) -> HttpResponse:
    """The user's tokens; POST action=create makes one and shows its key on this response only,
    action=revoke with ``token`` (a shown prefix) revokes that one, without it all of them."""
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            try:
                _, new_key = api_token_create(user=request.user)
            except TokenLimitReached as refused:
                messages.error(request, str(refused))
                return redirect("api:token")
        elif action == "revoke":
            prefix = request.POST.get("token") or None
            count = api_token_revoke(user=request.user, token_key=prefix)
            messages.success(
                request,
                f"{count} token{'s' if count != 1 else ''} revoked." if count else "No such token (already revoked?).",
            )
            return redirect("api:token")
        else:
            return redirect("api:token")
    response = render(
        request,
        "api/token.html",
        {
            "tokens": api_tokens_live(user=request.user),
            "new_key": new_key,
            "api_url": request.build_absolute_uri("/").rstrip("/"),
        },
    )
    add_never_cache_headers(response)  # a new key must not stay in any cache
    return response


class ObtainTokenView(APIView):
    """Exchange a username and password for a new API token. Guesses are throttled per address (scope
    ``token_obtain``) and locked out per account and address by django-axes, like the login pages."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token_obtain"
    serializer_class = CredentialsSerializer

    @extend_schema(request=CredentialsSerializer, responses=TokenSerializer)
    def post(self, request: Request, *args, **kwargs) -> Response:
        # The HttpRequest, not DRF's wrapper: django-axes marks a lockout on it for its middleware to answer.
        serializer = CredentialsSerializer(data=request.data, context={"request": request._request})
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        try:
            _, key = api_token_create(user=user)
        except TokenLimitReached as refused:
            return Response({"detail": str(refused)}, status=409)
        return Response({"token": key, "username": user.get_username()})
