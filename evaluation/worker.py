"""What a Celery worker does besides judging: announce its chip, heartbeat, and re-queue orphaned runs.

Installed as a worker bootstep from ``evaluation.apps``. The chip comes from ``KGB_CHIP`` or from the
device the judge detects (``evaluation.judge.backends.detect_chip``); the worker must consume that chip's
queue (``make worker`` and the README's commands pass ``-Q chip.<slug>``).
"""

from __future__ import annotations

import logging
import platform
import threading
import time
from datetime import timedelta
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)


def worker_software() -> dict[str, Any]:
    import importlib.metadata as metadata

    versions = {"python": platform.python_version(), "host": platform.node()}
    for package in ("torch", "triton", "celery", "django"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def worker_chip() -> tuple[str, str]:
    from evaluation.judge.backends import detect_chip

    return detect_chip()


class HeartbeatStep(bootsteps.StartStopStep):
    """Every KGB_HEARTBEAT_INTERVAL_S: record this worker as alive and re-queue runs of dead workers."""

    # Start after the pool: the prefork pool forks its children from this process, and a thread already
    # running here (holding a lock at the moment of a fork) can leave a child deadlocked before its first task.
    requires = {"celery.worker.components:Pool"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Taken before the pool can claim anything: runs claimed under this name earlier are a dead
        # predecessor's (see services.runs_reclaim_from_earlier_incarnation). Claims carry the database's
        # time, not this host's (evaluation.clock), so the birth is kept on the monotonic clock and turned
        # into database time at the first beat: no query here, before the pool forks, and no skew.
        self._born_monotonic = time.monotonic()

    def start(self, worker: Any) -> None:
        from django.conf import settings

        chip_slug, device_type = worker_chip()
        software = worker_software()
        hostname = worker.hostname
        interval = settings.KGB_HEARTBEAT_INTERVAL_S

        def beat() -> None:
            from django.db import close_old_connections

            from evaluation import services
            from evaluation.clock import database_now

            reclaimed = False
            while not self._stop.is_set():
                try:
                    close_old_connections()
                    services.worker_heartbeat(
                        hostname=hostname, chip_slug=chip_slug, software=software, device_type=device_type
                    )
                    if not reclaimed:
                        born = database_now() - timedelta(seconds=time.monotonic() - self._born_monotonic)
                        counts = services.runs_reclaim_from_earlier_incarnation(hostname=hostname, started_before=born)
                        # A stop (judge errors in a row) of an earlier process under this name ends with it:
                        # this one consumes its queues afresh, and stops again if its judge still fails.
                        if services.worker_take_runs_again(hostname=hostname, stopped_before=born):
                            logger.warning("worker %s takes runs again after a restart", hostname)
                        reclaimed = True
                        if any(counts.values()):
                            logger.warning("runs of this worker's previous process: %s", counts)
                    queue = services.worker_stopped_for_stalled_heartbeat(hostname=hostname)
                    if queue:
                        # judge_run stopped this worker while its beats were stale (a peer would have taken
                        # back any run it claimed); they land again, so it consumes its chip's queue again.
                        # The stop is lifted once the broker took the request: if it cannot, the next beat
                        # asks again.
                        from evaluation.tasks import take_runs_again

                        take_runs_again(hostname, queue)
                        services.worker_resume_after_stalled_heartbeat(hostname=hostname)
                        logger.warning("worker %s takes runs again: its heartbeat landed", hostname)
                    counts = services.runs_requeue_stale()
                    if any(counts.values()):
                        logger.warning("stale runs: %s", counts)
                except Exception:  # a database hiccup must not kill the heartbeat
                    logger.exception("heartbeat failed")
                finally:
                    # Hold no connection between beats: the pool forks children from this process, and a
                    # database connection must never be shared across a fork.
                    close_old_connections()
                    from django.db import connections

                    connections.close_all()
                self._stop.wait(interval)

        self._thread = threading.Thread(target=beat, name="kgb-heartbeat", daemon=True)
        self._thread.start()
        logger.info("worker %s serves chip %s (%s)", hostname, chip_slug, device_type)

    def stop(self, worker: Any) -> None:
        self._stop.set()


def record_measured_peaks() -> None:
    """On a GPU host whose chip has no peaks of its own or on the datasheet (the roofline floor needs them):
    measure copy bandwidth and matmul rates with the device held alone, once per host and device (a file next
    to the device lock caches it for the other pool children), and fill them into the chip."""
    import json
    import time

    from django.db import close_old_connections

    from evaluation import services
    from evaluation.judge.backends import measure_peaks
    from evaluation.judge.device_lock import DeviceLock

    chip_slug, device_type = worker_chip()
    if device_type == "cpu":
        return
    close_old_connections()
    services.chip_ensure(slug=chip_slug, device_type=device_type)  # the heartbeat may not have registered it yet
    if not services.chip_wants_measured_peaks(slug=chip_slug):
        close_old_connections()
        return  # a datasheet or an admin gave it peaks: no need to take the device away from judgements
    lock = DeviceLock(device_type)
    cache = lock.paths[1].with_suffix(".peaks.json")
    try:
        with lock.exclusive(time.monotonic() + 600):
            if not cache.exists():
                cache.write_text(json.dumps(measure_peaks(device_type)))
    finally:
        lock.close()
    measured = json.loads(cache.read_text())
    logger.info(
        "measured peaks of %s: %.3g B/s, %s FLOP/s",
        chip_slug,
        measured["bandwidth_bytes_per_s"],
        {name: f"{value:.3g}" for name, value in measured["flops_by_dtype"].items()},
    )
    close_old_connections()
    if services.chip_record_measured_peaks(slug=chip_slug, measured=measured):
        logger.info(
            "chip %s had no peaks: filled from the measurement (+%d%% headroom)",
            chip_slug,
            round((services.MEASURED_PEAK_HEADROOM - 1) * 100),
        )
    close_old_connections()


def warm_judge_in_background() -> None:
    """In each prefork child: import the judge (torch) and start its sandbox fork server ahead of the first
    run. In a thread, because Celery kills a child whose init takes longer than a few seconds."""

    def warm() -> None:
        try:
            from evaluation.judge.forkserver import warm_forkserver

            seconds = warm_forkserver(worker_chip()[1])
            logger.info("judge fork server ready in %.1f s", seconds)
        except Exception:  # the first run then starts it itself; never take the worker down
            logger.exception("warming the judge failed")
        try:
            record_measured_peaks()
        except Exception:  # no roofline for an unknown chip until it works; never take the worker down
            logger.exception("measuring the device's peaks failed")

    threading.Thread(target=warm, name="kgb-warm-judge", daemon=True).start()
