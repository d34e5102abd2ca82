"""What a locked-out login attempt gets (django-axes' AXES_LOCKOUT_CALLABLE): the API a JSON 429 that `kgb`
prints as is, the pages an HTML 429 with the wait in words. Both say when to try again (Retry-After)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict | None = None) -> HttpResponse:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    wait = f"{seconds // 60} minutes" if seconds >= 120 else f"{seconds} seconds"
    message = (f"Too many failed logins for this account from your address: try again in {wait}, "
               "or reset your password.")
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": message}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(seconds)
    return response
