"""The sandbox's command loop: load the candidate, run calls (real and ghost), time cases on a GPU.

Runs in the untrusted process (see sandbox_main). Requests and replies are evaluation.judge.protocol's
messages; every reply carries the run token the trusted side sent first, and holds raw outputs and
observations, never verdicts. The timing requests are in harness_timing.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import time
from typing import Any

import torch

from evaluation.judge import protocol, wire
from evaluation.judge.backends import backend_for
from evaluation.judge.compare import flat_tensors
from evaluation.judge.untrusted import audit_hook, guard, interpreter_bounds, interpreter_mends
from evaluation.judge.untrusted.gpu_gate import COMPILES, LAUNCHER_SECONDS, CompileWindows, GpuGate
from evaluation.judge.untrusted.harness_timing import TimingRequests, format_error
from evaluation.judge.untrusted.timing_sets import host_snapshot

# Device memory earlier cases' inputs and outputs may hold (Harness._trim_keep_alive), unless the judge says
# less (start's keep_alive_bytes: context.device_memory_budget, from the judges sharing the GPU).
KEEP_ALIVE_BYTES = 4 << 30


class Harness(TimingRequests):
    def __init__(self, cmd_fd: int, res_fd: int, hooks: dict[str, Any]) -> None:
        self.cmd_fd = cmd_fd
        self.res_fd = res_fd
        self.hooks = hooks
        self.token = ""
        self.device = torch.device("cpu")
        self.module: Any = None
        self.integrity: guard.Integrity | None = None
        # Inputs and outputs stay alive, so no address is recycled within a case (_trim_keep_alive: across cases).
        self.keep_alive: list[Any] = []
        self.flush_buffer: torch.Tensor | None = None
        self.backend = backend_for("cpu")  # replaced at start by the device's family
        self.memory_cap = "address-space rlimit (host memory)"
        self.host_wait = "auto"  # Start.host_wait: how the host waits for the device outside timed loops
        self.host_wait_applied = ""
        self.released_hold: Any = None  # Start.stream_hold "released" on a GPU: untrusted/released_hold.py
        self.stream_hold = ""
        self.keep_alive_bytes = KEEP_ALIVE_BYTES
        self.compile_windows = CompileWindows(self)
        self.gate = GpuGate(self)
        # Rotating input sets sent ahead of a timing stage (time_load), by key: moving them to the device is
        # done before the judge takes the GPU alone, so the exclusive hold covers the timed loops only.
        self.timing_sets: dict[str, tuple[list[Any], list[Any]]] = {}
        # Spot-checked timed calls, copied on the device, by key: shipped by time_spots once the judge no
        # longer holds the GPU alone (encoding them is host work the other judges need not wait for).
        self.pending_spots: dict[str, list[Any]] = {}

    def reply(self, message: protocol.Reply, blobs: list[bytes] = ()) -> None:
        wire.send(self.res_fd, dict(message.to_header(), token=self.token), list(blobs))

    def report_and_wait(self, event: str) -> None:
        """Tell the trusted side ``event`` and wait for its ``resume`` (sent once it holds the GPU for us)."""
        self.reply(protocol.GpuEvent(event=event))
        header, _ = wire.receive(self.cmd_fd)
        try:
            request = protocol.decode_request(header)
        except wire.WireError as error:
            raise RuntimeError(f"harness: expected resume: {error}") from None
        if not isinstance(request, protocol.Resume):
            raise RuntimeError(f"harness: expected resume, got {request.OP!r}")

    def answer(self, message: protocol.Reply, blobs: list[bytes] = ()) -> None:
        """The reply that ends a request: a gated request's device work is declared over first."""
        self.gate.close()
        self.reply(message, blobs)

    def serve(self) -> None:
        while True:
            header, blobs = wire.receive(self.cmd_fd)
            try:
                request = protocol.decode_request(header)
            except wire.WireError as error:  # an unknown op or a malformed request: say which, and go on
                self.reply(protocol.HarnessFailure(error=str(error)))
                continue
            if isinstance(request, protocol.Start):
                self.token = request.token
                self.start(request)
            elif isinstance(request, protocol.Load):
                self.load(request)
            elif isinstance(request, protocol.CallCase):
                self.call(request, blobs)
            elif isinstance(request, protocol.LoadTimingSets):
                self.load_timing_sets(request, blobs)
            elif isinstance(request, protocol.TimeCase):
                self.time_case(request)
            elif isinstance(request, protocol.FetchSpots):
                self.send_spots(request)
            elif isinstance(request, protocol.Exit):
                self.reply(protocol.Bye())
                return
            else:
                self.reply(protocol.HarnessFailure(error=f"unexpected op {request.OP!r} between requests"))

    # ------------------------------------------------------------------ load

    def start(self, request: protocol.Start) -> None:
        self.device = torch.device(request.device)
        self.backend = backend_for(self.device.type)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        if self.device.type != "cpu":
            self.backend.init()
            self.keep_alive_bytes = min(KEEP_ALIVE_BYTES, request.keep_alive_bytes)
            fraction = request.memory_fraction
            capped = self.backend.set_memory_fraction(fraction, self.device)
            self.memory_cap = f"{fraction:g} of device memory" if capped else "none: the family has no such cap"
            torch.empty(1, device=self.device).zero_()
            # After the context exists (a prewarmed spare's already does): the driver takes the new flags for
            # the waits that follow. Timed loops spin regardless (harness_timing.time_case).
            self.host_wait = request.host_wait
            self.host_wait_applied = self.backend.set_host_wait(request.host_wait)[:300]
            if request.timing:
                self.flush_buffer = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=self.device)
                if request.stream_hold == "released":
                    from evaluation.judge.untrusted.released_hold import build_released_hold

                    self.released_hold, self.stream_hold = build_released_hold(self.backend.synchronize)
                else:
                    self.stream_hold = "spin"
        else:
            torch.set_num_threads(1)
            guard.install_interpreter_autotune_shim()
            interpreter_bounds.install()
            interpreter_mends.install()
            guard.STATE.on_tensor = interpreter_bounds.allocated
        torch.ones(4096).add_(1)  # start the intra-op machinery before the thread baseline
        from triton import knobs

        knobs.runtime.jit_cache_hook = self.compile_windows.before
        knobs.runtime.jit_post_compile_hook = self.compile_windows.after
        guard.STATE.before_launch = self.compile_windows.take_back
        from evaluation.judge.untrusted import audit_rules, harness_timing, timing_sets

        guard.remember_builtin_operators()
        prepare_the_judges_own_ctypes_calls(self.device)
        harness = sys.modules[__name__]
        own_modules = (guard, audit_rules, audit_hook, harness, harness_timing, timing_sets, wire, protocol)
        self.integrity = guard.Integrity(
            self.hooks,
            self.backend.module(),
            judge_modules=own_modules,
            wrapped=audit_hook.install_thread_event() + audit_hook.install_library_event(),
            native_threads_fixed=self.device.type == "cpu",
        )
        self.reply(
            protocol.Started(
                python=sys.version.split()[0],
                torch=torch.__version__,
                triton=__import__("triton").__version__,
                native_threads_before=guard.native_thread_count(),
                device_memory_cap=self.memory_cap,
                device_name=None if self.device.type == "cpu" else self.backend.device_name(self.device.index or 0),
                host_wait=None if self.device.type == "cpu" else self.host_wait_applied,
                stream_hold=self.stream_hold or None,
            )
        )

    def load(self, request: protocol.Load) -> None:
        """Import the candidate: from here on the process runs untrusted code (``start`` never does, so a
        failure the trusted side sees there is the judge's own, and any later one may be the kernel's)."""
        started = time.perf_counter()
        try:
            # The source arrives on the pipe and is written into this sandbox's own work dir (its private
            # tmpfs when contained): Triton reads a kernel's source back from its file.
            path = os.path.join(os.getcwd(), "candidate_kernel.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(request.source)
            # For the rest of this process's life: it runs the candidate's code from here on.
            audit_hook.arm(audit_hook.trusted_code(JUDGE_PACKAGE_DIR))
            spec = importlib.util.spec_from_file_location("candidate_kernel", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["candidate_kernel"] = module
            spec.loader.exec_module(module)
        except BaseException:
            self.reply(protocol.Loaded(ok=False, error=format_error()))
            return
        missing = tuple(name for name in request.entry_points if not callable(getattr(module, name, None)))
        self.module = module
        self.reply(
            protocol.Loaded(
                ok=not missing,
                missing=missing,
                error=f"missing entry point(s): {', '.join(missing)}" if missing else "",
                import_seconds=time.perf_counter() - started,
                integrity=tuple(self.integrity.violations()),
            )
        )

    # ------------------------------------------------------------------ calls

    def _writes(self, args: Any, kwargs: Any, twins: Any = ()) -> Any:
        """On the CPU interpreter, the memory this call may write (interpreter_bounds; a twin replay's twins
        too); elsewhere nothing."""
        if self.device.type == "cpu":
            twin_views = [torch.empty(0, dtype=torch.uint8).set_(storage) for storage in twins]
            return interpreter_bounds.call_writes((args, twin_views), kwargs)
        return contextlib.nullcontext()

    def _sync(self) -> None:
        self.backend.synchronize()

    def _run_once(
        self,
        entry_point: str,
        payload: Any,
        blobs: list[bytes],
        ghost: bool,
        variant: int = 0,
        poison_keys: list[Any] = (),
        keep: list[Any] | None = None,
        twin_payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One call of the candidate. ``keep``: send back only these arguments (None: all of them).
        ``twin_payload``: a twin replay (guard.Twins), whose second tree twins the call's storages."""
        started = time.perf_counter()
        compiles, launchers_s = COMPILES[0], LAUNCHER_SECONDS[0]
        decoded = wire.Decoder(blobs, self.device).decode(payload)
        twins = None
        if twin_payload is not None:
            twin_tree = wire.Decoder(blobs, self.device).decode(twin_payload)
            self.keep_alive.append(twin_tree)
            twins = guard.Twins(time_shared=self.device.type == "cpu")
            for real, twin in zip(flat_tensors(decoded), flat_tensors(twin_tree), strict=True):
                twins.add(real, twin)
        self._sync()  # the copies to the device belong to decoding, not to the call
        decoded_at = time.perf_counter()
        args, kwargs = decoded["args"], decoded["kwargs"]
        self.keep_alive.append(decoded)
        for key in poison_keys:  # output buffers arrive poisoned with variant 0; other variants re-poison
            target = args[key] if isinstance(key, int) else kwargs.get(key)
            if variant:
                guard.poison_tree(target, variant)
        function = getattr(self.module, entry_point)
        guard.STATE.reset(ghost=ghost)
        guard.STATE.poison_variant = variant
        stale = guard.STATE.stale = guard.StaleBuffers((args, kwargs), variant) if ghost else None
        outcome: dict[str, Any] = {}
        writable = (args, kwargs) if twins is None else (args, kwargs, list(twins.by_storage.values()))
        try:
            with guard.audited(), self._writes(*writable):
                guard.STATE.twins = twins
                returned = function(*args, **kwargs)
            self.compile_windows.take_back()  # a compilation that raised inside a caught exception
            self._sync()
        except BaseException:
            outcome["error"] = format_error()
            returned = None
        finally:
            guard.STATE.ghost = False
            guard.STATE.twins = None
        if twins is not None:  # what the kernels wrote, where they wrote it: the twins of twinned memory
            returned, args, kwargs = twins.swapped(returned), twins.swapped(args), twins.swapped(kwargs)
        self.compile_windows.take_back()  # before any more GPU work (the encode's copies, ghost replays)
        called_at = time.perf_counter()
        self.keep_alive.append(returned)
        outcome["launches"] = guard.STATE.launches
        outcome["compute_ops"] = sorted(set(guard.STATE.compute_ops))
        outcome["not_plain"] = guard.not_plain(returned)
        safe_return = None if outcome["not_plain"] else returned
        if keep is not None:  # a ghost replay: only the compared outputs travel back
            args = [value if index in keep else None for index, value in enumerate(args)]
            kwargs = {key: value for key, value in kwargs.items() if key in keep}
        # Copied to the host now (device work: inside the GPU hold); turned into bytes by _encode_outcome once
        # the hold is given up (host work: a waiting timer need not wait for it).
        try:
            outcome["_host"] = host_snapshot({"returned": safe_return, "args": args, "kwargs": kwargs})
        except BaseException:
            # A device fault the call left behind surfaces at the first copy (the context is poisoned):
            # it is the call's failure, reported as such, with nothing to compare.
            outcome["error"] = outcome.get("error", "") + format_error()
            outcome["_host"] = {"returned": None, "args": [], "kwargs": {}}
        # Where the sandbox's time went (reported by untrusted code: for the stage breakdown, never a verdict).
        outcome["phase_s"] = {
            "decode": decoded_at - started,
            "call": called_at - decoded_at,
            "encode": time.perf_counter() - called_at,
        }
        if stale is not None:  # after the outputs' host copies: a kept buffer returned as is reads poisoned
            guard.STATE.stale = None
            stale.restore()
        outcome["compiles"] = COMPILES[0] - compiles
        if LAUNCHER_SECONDS[0] > launchers_s:  # part of "call": the launchers it built while the GPU was lent
            outcome["phase_s"]["launchers_lent"] = LAUNCHER_SECONDS[0] - launchers_s
        return outcome

    @staticmethod
    def _encode_outcome(outcome: dict[str, Any]) -> tuple[protocol.CallOutcome, list[bytes]]:
        """A run's host copies as a wire value, in the run's reply, and its blobs."""
        started = time.perf_counter()
        encoder = wire.Encoder()
        value = encoder.encode(outcome.pop("_host"))
        outcome["phase_s"]["encode"] += time.perf_counter() - started
        reply = protocol.CallOutcome(
            launches=outcome["launches"],
            compute_ops=tuple(outcome["compute_ops"]),
            not_plain=tuple(outcome["not_plain"]),
            value=value,
            error=outcome.get("error"),
            phase_s=outcome["phase_s"],
            compiles=outcome["compiles"],
        )
        return reply, encoder.blobs

    def _trim_keep_alive(self) -> None:
        """Between cases, let earlier cases' tensors go once they hold over KEEP_ALIVE_BYTES of the device.

        Within a case (real call, ghost replays, repeat) nothing is freed, so a ghost's fresh buffers can
        never be the real call's old ones. Across cases a recycled address holds another case's answer to
        other inputs: useless to a kernel that reads stale memory. Keeping everything alive, sandboxes grew to
        several GiB (9.1 GiB seen) and 16 judges at once ran an H200 out of memory. The allocator's cache is
        handed back too once it outgrows the allowance: freed tensors alone leave their blocks reserved."""
        if self.device.type == "cpu":
            return
        module = self.backend.module()
        allocated, reserved = getattr(module, "memory_allocated", None), getattr(module, "memory_reserved", None)
        if allocated is None or reserved is None:
            return
        if allocated(self.device) > self.keep_alive_bytes:
            self.keep_alive.clear()
        if reserved(self.device) - allocated(self.device) > self.keep_alive_bytes // 2:
            self.backend.release_cached_memory()

    def call(self, request: protocol.CallCase, blobs: list[bytes]) -> None:
        self.gate.open(request.gate_gpu)
        self._trim_keep_alive()
        self.compile_windows.enabled = request.lend_gpu
        try:
            self._call(request, blobs)
        finally:
            self.compile_windows.enabled = False
            self.gate.close()

    def _call(self, request: protocol.CallCase, blobs: list[bytes]) -> None:
        entry_point, payload = request.entry_point, request.payload
        real = self._run_once(entry_point, payload, blobs, ghost=False)
        integrity = self.integrity.violations() if self.integrity else []
        keep = list(request.ghost_keep)
        repeat = None
        ghosts = []
        if request.repeat and "error" not in real:
            # Random operators: the same inputs once more, in fresh buffers; the outputs must differ.
            repeat = self._run_once(entry_point, payload, blobs, ghost=False, keep=keep)
        if request.ghost and "error" not in real:
            for variant in range(request.ghost_variants):
                ghosts.append(
                    self._run_once(
                        entry_point,
                        payload,
                        blobs,
                        ghost=True,
                        variant=variant,
                        poison_keys=list(request.poison_keys),
                        keep=keep,
                    )
                )
                integrity += self.integrity.violations() if self.integrity else []
        twin = None
        if request.twin_payload is not None and "error" not in real:
            # After the ghosts, which read back what the real call read (guard.HostReads), not the twins.
            twin_payload = request.twin_payload
            twin = self._run_once(entry_point, payload, blobs, ghost=False, keep=keep, twin_payload=twin_payload)
            integrity += self.integrity.violations() if self.integrity else []
        self.gate.close()  # every output is on the host: the rest is host work
        real_outcome, out_blobs = self._encode_outcome(real)
        repeat_outcome = repeat_offset = None
        if repeat is not None:
            repeat_offset = len(out_blobs)
            repeat_outcome, repeat_blobs = self._encode_outcome(repeat)
            out_blobs = out_blobs + repeat_blobs
        ghost_outcomes, ghost_offsets = [], []
        for ghost in ghosts:
            ghost_offsets.append(len(out_blobs))
            outcome, ghost_blobs = self._encode_outcome(ghost)
            ghost_outcomes.append(outcome)
            out_blobs = out_blobs + ghost_blobs
        twin_outcome = twin_offset = None
        if twin is not None:
            twin_offset = len(out_blobs)
            twin_outcome, twin_blobs = self._encode_outcome(twin)
            out_blobs = out_blobs + twin_blobs
        reply = protocol.Called(
            real=real_outcome,
            twin=twin_outcome,
            twin_blob_offset=twin_offset,
            ghosts=tuple(ghost_outcomes),
            ghost_blob_offsets=tuple(ghost_offsets),
            repeat=repeat_outcome,
            repeat_blob_offset=repeat_offset,
            integrity=tuple(sorted(set(integrity))),
            native_threads=guard.native_thread_count(),
        )
        self.answer(reply, out_blobs)


# Code loaded from here before the audit hook is armed is the judge's own (audit_hook.trusted_code).
JUDGE_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


# Every module on the stack of the judge's own ctypes calls (the timing loops and the cuBLAS baseline they
# time): imported before the audit hook is armed, so that it knows their code (audit_hook.trusted_code). The
# zygote imports them too (forkserver_main): a sandbox's view may not show the package to import it later.
JUDGES_OWN_CTYPES_CALLERS = (
    "evaluation.catalog.cublas.cublas_baseline",
    "evaluation.judge.inputs",
    "evaluation.judge.records",
    "evaluation.judge.untrusted.clock",
    "evaluation.judge.untrusted.gpu_gate",
    "evaluation.judge.untrusted.harness_timing",
    "evaluation.judge.untrusted.released_hold",
    "evaluation.judge.untrusted.timing",
    "evaluation.judge.untrusted.timing_back_to_back",
    "evaluation.judge.untrusted.timing_do_bench",
    "evaluation.judge.untrusted.timing_sets",
)


def import_the_judges_own_ctypes_callers() -> None:
    for name in JUDGES_OWN_CTYPES_CALLERS:
        importlib.import_module(name)


def prepare_the_judges_own_ctypes_calls(device: torch.device) -> None:
    """Before the candidate loads: those modules imported, and on a CUDA device libcublas opened (the hook
    would refuse the dlopen later)."""
    import_the_judges_own_ctypes_callers()
    if device.type == "cuda":
        from evaluation.catalog.cublas import cublas_baseline

        cublas_baseline.load_cublas()
