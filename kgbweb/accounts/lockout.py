"""What a locked-out login attempt gets (django-axes' AXES_LOCKOUT_CALLABLE): the API a JSON 429 that `kgb`
prints as is, the pages an HTML 429 with the wait in words. Both say when to try again (Retry-After)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def client_address(request: HttpRequest) -> str:
    """The address lockouts count by, as DRF's throttles find it (REST_FRAMEWORK["NUM_PROXIES"]): the peer
    itself, or behind N proxies the N-th address from the right of X-Forwarded-For (the ones to its left are
    the client's to forge)."""
    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        addresses = [part.strip() for part in forwarded.split(",") if part.strip()]
        return addresses[-min(proxies, len(addresses))]
    return request.META.get("REMOTE_ADDR", "")


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    wait = f"{seconds // 60} minutes" if seconds >= 120 else f"{seconds} seconds"
    message = f"Too many failed logins for this account from your address: try again in {wait}, or reset your password."
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(seconds)
    return response
