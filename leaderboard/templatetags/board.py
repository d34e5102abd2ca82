"""Small template helpers for the leaderboard pages."""

from typing import Any

from django import template

register = template.Library()


@register.filter
def dictget(mapping: dict, key: str) -> Any:
    """``{{ row.summaries|dictget:view }}``: a dict lookup with a variable key."""
    return mapping.get(key) if mapping else None
