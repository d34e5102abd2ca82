"""The Celery application. Workers take one chip's queue each: ``chip.<slug>`` (see evaluation.queues)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgbweb.settings")

app = Celery("kgbweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
