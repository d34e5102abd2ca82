"""``manage.py worker [--chip SLUG] [--all-gpus | --gpus 0,1]``: evaluation workers on this machine's chip queue.

The chip is detected from the device (or KGB_CHIP / --chip); a worker consumes ``chip.<slug>`` only,
prefetches one message and acknowledges it after the run is recorded.

``--all-gpus`` (or ``--gpus LIST``) starts one worker per GPU, each in its own process group bound to its
device through the family's visibility variable (``CUDA_VISIBLE_DEVICES``...): each registers as its own
worker of the chip, holds its own GPU's timing lock (device_lock keys it by the visible device), and draws
its sandbox identities from the host's one pool of slots (evaluation.judge.isolation), so no two sandboxes
of the host share a uid whichever worker started them. This process supervises them: a worker that dies is
started again (its runs are re-queued by the heartbeat's re-queuer as for any dead worker) and the others go
on; SIGTERM or SIGINT stops them all: each gets SIGTERM (Celery's warm shutdown: it finishes its runs), and
whatever is still running ``KGB_WORKER_STOP_GRACE_S`` later (default 300) is killed with all it started,
its runs re-queued like any dead worker's. A worker dies with its supervisor however that ends (SIGTERM on
the supervisor's death, ``PR_SET_PDEATHSIG``): killed, the supervisor leaves no worker polling on its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

from django.core.management.base import BaseCommand, CommandError

RESTART_BACKOFF_S = (1, 2, 5, 10, 30)
# Set by the supervisor in each worker it starts: the worker arms SIGTERM on this process's death.
SUPERVISOR_ENV = "KGB_WORKER_SUPERVISOR_PID"


class Command(BaseCommand):
    help = "Start an evaluation worker for this machine's chip; --all-gpus starts one per GPU."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--chip", default=None, help="Chip slug; default: detected from the device")
        parser.add_argument("--concurrency", type=int, default=1, help="Parallel judgements per worker")
        parser.add_argument("--name", default=None, help="Celery node name (default: <chip>@<host>-<pid>)")
        parser.add_argument("--loglevel", default="INFO")
        devices = parser.add_mutually_exclusive_group()
        devices.add_argument("--all-gpus", action="store_true", help="one worker per visible GPU of this host")
        devices.add_argument("--gpus", default=None, help="one worker per listed device index, e.g. 0,1")

    def handle(self, *args, **options) -> None:
        from evaluation.judge.backends import detect_chip_isolated
        from evaluation.judge.isolation import sweep_host

        os.umask(0o077)  # files this worker writes (broker messages, logs) are its own
        if options["chip"]:
            os.environ["KGB_CHIP"] = options["chip"]
        supervisor = os.environ.pop(SUPERVISOR_ENV, "")
        if supervisor.isdigit():
            from evaluation.judge.untrusted.lifeline import die_with_parent

            die_with_parent(int(supervisor), signal.SIGTERM)  # warm shutdown if the supervisor is gone
        # Detected in a child interpreter: this process forks the pool, and a device it had initialised
        # would be unusable in every child. The answer is handed down, so nobody here touches the device.
        chip_slug, device_type, device_bytes = detect_chip_isolated()
        os.environ["KGB_CHIP"], os.environ["KGB_DEVICE_TYPE"] = chip_slug, device_type
        if options["all_gpus"] or options["gpus"]:
            self.supervise(chip_slug, device_type, options)
            return
        # What a killed worker of this host left behind: processes of free sandbox slots, their cgroups, the
        # temp folders of judging processes that are gone (never another live worker's).
        cleaned = sweep_host()
        if any(cleaned.values()):
            self.stdout.write(f"swept what dead judgements left: {cleaned}")
        # Judgements at once on this worker's GPU: no more than its memory holds (an H100 asked for 16 ran
        # three out of memory), and each keeps less device memory cached when there are many.
        from evaluation.judge.context import judges_for_device

        concurrency = judges_for_device(options["concurrency"], device_bytes)
        if concurrency < options["concurrency"]:
            self.stdout.write(
                f"{options['concurrency']} judgements at once asked for; {concurrency} fit this device's "
                f"{device_bytes / 1024**3:.0f} GiB (KGB_DEVICE_BYTES_PER_JUDGE)"
            )
        os.environ.setdefault("KGB_JUDGES_PER_DEVICE", str(concurrency))
        name = options["name"] or f"{chip_slug}@{os.uname().nodename}-{os.getpid()}"
        argv = [
            "celery",
            "-A",
            "kgbweb",
            "worker",
            "-Q",
            f"chip.{chip_slug}",
            "-n",
            name,
            "--concurrency",
            str(concurrency),
            "--prefetch-multiplier",
            "1",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            options["loglevel"],
        ]
        self.stdout.write(f"worker {name} on queue chip.{chip_slug}")
        self.stdout.flush()
        from celery.__main__ import main as celery_main

        sys.argv = argv
        celery_main()

    # ------------------------------------------------------------------------------------ one per GPU

    def supervise(self, chip_slug: str, device_type: str, options: dict) -> None:
        from django.conf import settings

        from evaluation.judge.backends import BACKENDS

        devices = self.devices(device_type, options)
        backend = BACKENDS.get(device_type)
        variable = backend.visible_devices_env if backend else "CUDA_VISIBLE_DEVICES"
        host = os.uname().nodename
        base_name = options["name"] or f"{chip_slug}@{host}"
        children: dict[str, subprocess.Popen] = {}
        restarts: dict[str, int] = {}
        stopping = False

        def start(device: str) -> None:
            env = dict(os.environ, **{variable: device}, KGB_CHIP=chip_slug, KGB_DEVICE_TYPE=device_type)
            env[SUPERVISOR_ENV] = str(os.getpid())
            command = [
                sys.executable,
                str(settings.BASE_DIR / "manage.py"),
                "worker",
                "--chip",
                chip_slug,
                "--concurrency",
                str(options["concurrency"]),
                "--loglevel",
                options["loglevel"],
                "--name",
                f"{base_name}-gpu{device}",
            ]
            children[device] = subprocess.Popen(command, env=env, start_new_session=True)
            self.stdout.write(f"worker for {variable}={device}: pid {children[device].pid}")
            self.stdout.flush()

        stop_deadline: float | None = None

        def signal_all(number: int) -> None:
            for child in children.values():
                if child.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, number)

        def stop(*_: object) -> None:
            nonlocal stopping, stop_deadline
            stopping = True
            if stop_deadline is None:
                stop_deadline = time.monotonic() + settings.KGB_WORKER_STOP_GRACE_S
            signal_all(signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        for device in devices:
            start(device)
        while children:
            time.sleep(0.5)
            if stop_deadline is not None and time.monotonic() > stop_deadline:
                self.stderr.write("workers still running after the stop grace period: killing them")
                signal_all(signal.SIGKILL)
                stop_deadline = float("inf")
            for device, child in list(children.items()):
                code = child.poll()
                if code is None:
                    continue
                if stopping:
                    children.pop(device)
                    continue
                restarts[device] = restarts.get(device, 0) + 1
                delay = RESTART_BACKOFF_S[min(restarts[device], len(RESTART_BACKOFF_S)) - 1]
                self.stderr.write(f"worker for {variable}={device} exited ({code}); starting it again in {delay} s")
                time.sleep(delay)
                if not stopping:
                    start(device)
        self.stdout.write("all workers stopped")

    @staticmethod
    def devices(device_type: str, options: dict) -> list[str]:
        if options["gpus"]:
            devices = [item.strip() for item in options["gpus"].split(",") if item.strip()]
            if not devices:
                raise CommandError("--gpus needs at least one device index, e.g. --gpus 0,1")
            return devices
        if device_type == "cpu":
            raise CommandError(
                "--all-gpus: no GPU is visible on this host (the chip is the CPU interpreter); "
                "start one worker without it"
            )
        from evaluation.judge.backends import BACKENDS

        visible = BACKENDS[device_type].visible_devices()
        if visible:
            return [item.strip() for item in visible.split(",") if item.strip()]
        code = f"import torch; print(getattr(torch, {device_type!r}).device_count())"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
        count = int(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else 0
        if count < 1:
            raise CommandError(f"--all-gpus: torch sees no {device_type} device: {done.stderr[-300:]}")
        return [str(index) for index in range(count)]
