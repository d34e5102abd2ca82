"""API tokens: the page where a signed-in user sees, creates and revokes theirs, and the endpoint ``kgb login``
exchanges a username and password at. Tokens are DRF's (rest_framework.authtoken): one per user."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from drf_spectacular.utils import extend_schema
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response

from leaderboard.api.serializers import TokenSerializer


@login_required
@require_http_methods(["GET", "POST"])
def token_page(request: HttpRequest) -> HttpResponse:
    """Show the user's token; POST action=create makes a new one (the old stops working), action=revoke drops it."""
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "create":
            Token.objects.filter(user=request.user).delete()
            Token.objects.create(user=request.user)
            messages.success(request, "New token created: the previous one no longer works.")
        elif action == "revoke":
            Token.objects.filter(user=request.user).delete()
            messages.success(request, "Token revoked.")
        return redirect("api:token")
    token = Token.objects.filter(user=request.user).first()
    return render(request, "api/token.html", {"token": token, "api_url": request.build_absolute_uri("/")})


class ObtainTokenView(ObtainAuthToken):
    """Exchange a username and password for the user's API token (created on first use)."""

    @extend_schema(request=ObtainAuthToken.serializer_class, responses=TokenSerializer)
    def post(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key, "username": user.get_username()})
