"""Writes on API tokens (django-rest-knox): a key is returned once, at creation; only its digest is stored."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from knox.models import AuthToken
from knox.settings import knox_settings


class TokenLimitReached(Exception):
    """The user holds as many live tokens as settings.REST_KNOX allows."""


def api_token_create(*, user: AbstractBaseUser) -> tuple[AuthToken, str]:
    """A new token for ``user`` and its key (never stored: show it now or lose it). Expired ones are dropped
    first; at the per-user limit nothing is created."""
    live = api_tokens_live(user=user)
    limit = knox_settings.TOKEN_LIMIT_PER_USER
    if limit is not None and len(live) >= limit:
        raise TokenLimitReached(f"you already have {len(live)} tokens (the most one account may hold); revoke one")
    return AuthToken.objects.create(user=user)


def api_tokens_live(*, user: AbstractBaseUser) -> list[AuthToken]:
    """The user's tokens that still work, newest first (expired ones are deleted on the way)."""
    from django.utils import timezone

    AuthToken.objects.filter(user=user, expiry__lt=timezone.now()).delete()
    return list(AuthToken.objects.filter(user=user).order_by("-created", "-pk"))


def api_token_revoke(*, user: AbstractBaseUser, token_key: str | None = None) -> int:
    """Revoke one of ``user``'s tokens by its shown prefix, or all of them; how many stopped working."""
    tokens = AuthToken.objects.filter(user=user)
    if token_key is not None:
        tokens = tokens.filter(token_key=token_key)
    deleted, _ = tokens.delete()
    return deleted
