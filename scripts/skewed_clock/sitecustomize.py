"""Skews this Python process's wall clock by ``KGB_SKEW_CLOCK_S`` seconds: what a host whose clock is off
looks like to Django and Celery (``time.time``, ``django.utils.timezone.now``), while the monotonic clock,
which NTP never steps, stays true. scripts/soak.py starts a worker with this folder first on PYTHONPATH.

(libfaketime cannot do this: with the monotonic clock left true, 0.9.10 fails every ``time.sleep`` with
EINVAL; with it shifted too, ``threading.Event.wait`` sleeps for the shift, and heartbeats stop.)
"""

from __future__ import annotations

import os
import time
from datetime import timedelta

_offset = float(os.environ.get("KGB_SKEW_CLOCK_S", "0") or 0)
if _offset:
    import django.utils.timezone  # needs no settings; Django's own code reads the clock through it

    _real_time, _real_time_ns, _real_now = time.time, time.time_ns, django.utils.timezone.now
    time.time = lambda: _real_time() + _offset
    time.time_ns = lambda: _real_time_ns() + int(_offset * 1e9)
    django.utils.timezone.now = lambda: _real_now() + timedelta(seconds=_offset)
