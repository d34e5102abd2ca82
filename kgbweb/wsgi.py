"""WSGI entry point for gunicorn: ``gunicorn kgbweb.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

from kgbweb.data_dir import restrict_umask

restrict_umask()  # what the site writes (database, broker messages) is its owner's only
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgbweb.settings")
application = get_wsgi_application()
