"""Who may do what through the API. Reads of private data are limited by the querysets (selectors), not here:
a private object someone may not see is a 404 for them, never a 403 that confirms it exists."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request


class IsStaff(BasePermission):
    """Curators only: re-runs and offline job bundles."""

    message = "Only staff may do this."

    def has_permission(self, request: Request, view) -> bool:
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


class ReadOnlyOrAuthenticatedCreate(BasePermission):
    """Anyone reads (what the queryset shows them); a signed-in user creates; nobody edits through here."""

    def has_permission(self, request: Request, view) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return bool(request.user and request.user.is_authenticated)
