"""KernelGenBench Web: Django project package (settings, urls, Celery app, wsgi)."""

from kgbweb.celery import app as celery_app

__all__ = ("celery_app",)
