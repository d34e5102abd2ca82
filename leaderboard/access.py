"""Who may see what: methods and submissions listed to a user, and whose code a user may read.

A private submission's results and code are its owner's and staff's; everyone sees public ones. Boards never
read these: they rank public work only, from the summary (``leaderboard.selectors``).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from leaderboard.models import Method, Submission, Visibility


def method_submissions(*, method: Method, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Submission]:
    return visible_submissions(user=user).filter(method=method)


def visible_methods(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Method]:
    """Public methods, plus the user's own (all, for staff)."""
    if user.is_authenticated and user.is_staff:
        return Method.objects.all()
    if user.is_authenticated:
        return Method.objects.filter(Q(public=True) | Q(owner=user))
    return Method.objects.filter(public=True)


def can_view_code(*, user: AbstractBaseUser | AnonymousUser, submission: Submission) -> bool:
    """Public code is for everyone; private code for its owner and staff only."""
    if submission.visibility == Visibility.PUBLIC:
        return True
    return bool(user.is_authenticated and (user.is_staff or submission.owner_id == user.pk))


def visible_submissions(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Submission]:
    """Submissions a user may see listed: public ones, plus their own (all, for staff).

    A private submission's results are its owner's business: it is neither listed nor ranked for others.
    """
    submissions = Submission.objects.select_related("method", "owner", "target_chip")
    if user.is_authenticated and user.is_staff:
        return submissions
    if user.is_authenticated:
        return submissions.filter(Q(visibility=Visibility.PUBLIC) | Q(owner=user))
    return submissions.filter(visibility=Visibility.PUBLIC)
