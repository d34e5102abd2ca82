"""KernelGenBench Web: Django project package (settings, urls, Celery app, wsgi).

The Celery app lives in ``kgbweb.celery``; it is imported by ``evaluation.apps`` when Django starts (so every
process that sends tasks has it) and found by ``celery -A kgbweb``. It is deliberately not imported here, so
the ``kgb`` command-line client (``kgbweb.cli``) starts without Django or Celery.
"""
