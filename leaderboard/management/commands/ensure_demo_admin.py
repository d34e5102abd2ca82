"""``manage.py ensure_demo_admin``: a staff account for a local demo, printed so a new user can log in."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the demo admin account if it does not exist, and print its credentials."

    def handle(self, *args, **options) -> None:
        username = os.environ.get("KGB_DEMO_ADMIN_USER", "admin")
        # A password of this installation's own (printed once), never one every clone shares.
        password = os.environ.get("KGB_DEMO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        user_model = get_user_model()
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            user.set_password(password)
            user.save()
            self.stdout.write(f"demo admin created: username {username!r}, password {password!r}")
        else:
            self.stdout.write(
                f"demo admin exists: username {username!r} (password as first printed; "
                f"`manage.py changepassword {username}` sets a new one)"
            )
