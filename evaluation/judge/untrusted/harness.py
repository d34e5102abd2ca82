"""The sandbox's command loop: load the candidate, run calls (real and ghost), time cases on a GPU.

Runs in the untrusted process (see sandbox_main). Every reply carries the run token the trusted side sent
first; replies hold raw outputs and observations, never verdicts.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import random
import sys
import time
import traceback
from typing import Any

import torch

from evaluation.judge import wire
from evaluation.judge.backends import backend_for
from evaluation.judge.untrusted import guard

PLAIN_TENSOR = torch.Tensor
# Device memory earlier cases' inputs and outputs may hold (Harness._trim_keep_alive), unless the judge says
# less (start's keep_alive_bytes: context.device_memory_budget, from the judges sharing the GPU).
KEEP_ALIVE_BYTES = 4 << 30


def host_snapshot(value: Any) -> Any:
    """``value`` with its plain tensors copied to the host (aliases kept: untrusted.timing.device_snapshot)."""
    from evaluation.judge.untrusted.timing import device_snapshot

    return device_snapshot(value, torch.device("cpu"))


def _format_error(limit: int = 6000) -> str:
    return traceback.format_exc()[-limit:]


def _not_plain(value: Any, path: str = "return") -> list[str]:
    """Names of outputs that are not plain dense tensors with real storage (EXPLOITS 10)."""
    problems: list[str] = []
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            problems += _not_plain(item, f"{path}[{index}]")
    elif isinstance(value, torch.Tensor):
        if type(value) is not PLAIN_TENSOR:
            problems.append(f"{path} is a {type(value).__qualname__}, not a plain torch.Tensor")
        elif value.layout != torch.strided or value.device.type == "meta":
            problems.append(f"{path} has no dense storage ({value.layout}, {value.device})")
    elif value is not None and not isinstance(value, (bool, int, float, complex)):
        problems.append(f"{path} is a {type(value).__qualname__}")
    return problems


# Triton compilations in this sandbox (diagnostics: a first call per specialisation pays for one).
_COMPILES = [0]
# Seconds spent building Triton's C launchers while the GPU was lent (diagnostics: prebuild_launcher).
_LAUNCHER_SECONDS = [0.0]


def prebuild_launcher(hook_kwargs: dict[str, Any]) -> bool:
    """Build the C launcher of the kernel Triton just compiled (``jit_post_compile_hook``'s arguments), now.

    Triton builds one launcher per kernel signature with the host's C compiler (gcc: 0.13-0.2 s each on an
    idle 2-core box, more on a loaded host) when the kernel is first launched, which is after the
    compilation, inside the GPU hold the sandbox has taken back. On the H200 the holds that followed a
    compilation were 426 s in all for a 110-kernel submission (run k, NOTES.md), and timers queued behind
    them. Built here while the GPU is still lent, the launch finds it in the run's own Triton cache and only
    loads it. Pure host work: the launcher module's initialisation makes no CUDA call. False (nothing done;
    the launch builds it, as before) when this Triton is laid out differently or the build fails."""
    try:
        from triton.runtime.driver import driver

        device = hook_kwargs["compile"]["device"]
        kernel = hook_kwargs["fn"].jit_function.device_caches[device][0][hook_kwargs["key"]]
        started = time.perf_counter()
        driver.active.launcher_cls(kernel.src, kernel.metadata)
    except Exception:  # noqa: BLE001 - an optimisation only: any failure leaves Triton's own path
        return False
    _LAUNCHER_SECONDS[0] += time.perf_counter() - started
    return True


class CompileWindows:
    """Tell the trusted side when Triton compiles, so it can lend the GPU to other judges meanwhile.

    A correctness call holds the GPU shared (device_lock), and a timing judge waiting for it alone must
    wait for every such hold to end. A candidate's first calls spend most of their time compiling (on the
    H200, 917 of 922 s of sandbox call time over the whole catalog, 16 judges at once), which is CPU work:
    holding the GPU through it stalled every judge behind each waiting timer (NOTES.md). Around each
    compilation this process sends ``compiling`` / ``compiled`` on the result pipe, and after ``compiled``
    waits for the trusted side's ``resume``, sent once it holds the GPU again: no kernel of this process
    runs while the GPU is lent. Only for calls whose request asked for it (``lend_gpu``).

    Untrusted like everything here: a process that lies can only delay itself or disturb other judges' GPU
    use, never forge its own result (docs/judge.md)."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.enabled = False
        self.lent = False

    def before(self, *args: Any, **kwargs: Any) -> bool:
        if self.enabled and not self.lent:
            # Kernels this call launched before the compilation must not run on into another judge's timed
            # loop once the GPU is lent out.
            self.harness.backend.synchronize()
            self.harness.reply({"event": "compiling"})
            self.lent = True
        return False  # falsy: Triton goes on and compiles

    def after(self, *args: Any, **kwargs: Any) -> None:
        _COMPILES[0] += 1
        if self.lent:
            prebuild_launcher(kwargs)  # host work: before the GPU is taken back, not inside the hold
        self.take_back()

    def take_back(self) -> None:
        """Wait until the GPU is ours again (also after a compilation that raised: no ``after`` then)."""
        if not self.lent:
            return
        self.lent = False
        self.harness.report_and_wait("compiled")


class GpuGate:
    """The device part of a gated request (``gate_gpu``: correctness calls, loading timing sets, spot copies).

    The trusted side holds the GPU shared for such requests, but only while this process uses it: ``open``
    says ``want_gpu`` and waits for ``resume`` before the first device copy, ``close`` waits for this
    process's device work to end and says ``gpu_done`` before the reply is written, so a large request or
    reply crossing the pipe, and the host-side encoding, never keep another judge's timer waiting."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.open_now = False

    def open(self, header: dict[str, Any]) -> None:
        if not header.get("gate_gpu") or self.open_now:
            return
        self.harness.report_and_wait("want_gpu")
        self.open_now = True

    def close(self) -> None:
        if not self.open_now:
            return
        self.open_now = False
        # Every stream: nothing of ours still runs once we say so. A device the kernel broke raises here: the
        # reply says so, and the hold ends anyway.
        with contextlib.suppress(Exception):
            self.harness.backend.synchronize()
        self.harness.reply({"event": "gpu_done"})


class Harness:
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
        self.keep_alive_bytes = KEEP_ALIVE_BYTES
        self.compile_windows = CompileWindows(self)
        self.gate = GpuGate(self)
        # Rotating input sets sent ahead of a timing stage (time_load), by key: moving them to the device is
        # done before the judge takes the GPU alone, so the exclusive hold covers the timed loops only.
        self.timing_sets: dict[str, tuple[list[Any], list[Any]]] = {}
        # Spot-checked timed calls, copied on the device, by key: shipped by time_spots once the judge no
        # longer holds the GPU alone (encoding them is host work the other judges need not wait for).
        self.pending_spots: dict[str, list[Any]] = {}

    def reply(self, header: dict[str, Any], blobs: list[bytes] = ()) -> None:
        wire.send(self.res_fd, dict(header, token=self.token), list(blobs))

    def report_and_wait(self, event: str) -> None:
        """Tell the trusted side ``event`` and wait for its ``resume`` (sent once it holds the GPU for us)."""
        self.reply({"event": event})
        header, _ = wire.receive(self.cmd_fd)
        if header.get("op") != "resume":
            raise RuntimeError(f"harness: expected resume, got {header.get('op')!r}")

    def answer(self, header: dict[str, Any], blobs: list[bytes] = ()) -> None:
        """The reply that ends a request: a gated request's device work is declared over first."""
        self.gate.close()
        self.reply(header, blobs)

    def serve(self) -> None:
        while True:
            header, blobs = wire.receive(self.cmd_fd)
            op = header.get("op")
            if op == "start":
                self.token = str(header["token"])
                self.start(header)
            elif op == "call":
                self.call(header, blobs)
            elif op == "time_load":
                self.load_timing_sets(header, blobs)
            elif op == "time":
                self.time_case(header, blobs)
            elif op == "time_spots":
                self.send_spots(header)
            elif op == "exit":
                self.reply({"event": "bye"})
                return
            else:
                self.reply({"event": "harness_error", "error": f"unknown op {op!r}"})

    # ------------------------------------------------------------------ load

    def start(self, header: dict[str, Any]) -> None:
        self.device = torch.device(header["device"])
        self.backend = backend_for(self.device.type)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        if self.device.type != "cpu":
            self.backend.init()
            self.keep_alive_bytes = min(KEEP_ALIVE_BYTES, int(header.get("keep_alive_bytes", KEEP_ALIVE_BYTES)))
            fraction = float(header["memory_fraction"])
            capped = self.backend.set_memory_fraction(fraction, self.device)
            self.memory_cap = f"{fraction:g} of device memory" if capped else "none: the family has no such cap"
            torch.empty(1, device=self.device).zero_()
            if header.get("timing"):
                self.flush_buffer = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=self.device)
        else:
            torch.set_num_threads(1)
            guard.install_interpreter_autotune_shim()
        torch.ones(4096).add_(1)  # start the intra-op machinery before the thread baseline
        from triton import knobs

        knobs.runtime.jit_cache_hook = self.compile_windows.before
        knobs.runtime.jit_post_compile_hook = self.compile_windows.after
        guard.STATE.before_launch = self.compile_windows.take_back
        self.integrity = guard.Integrity(self.hooks, self.backend.module())
        environment = {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "triton": __import__("triton").__version__,
            "native_threads_before": guard.native_thread_count(),
        }
        if self.device.type != "cpu":
            environment["device_name"] = self.backend.device_name(self.device.index or 0)
        environment["device_memory_cap"] = self.memory_cap
        started = time.perf_counter()
        try:
            # The source arrives on the pipe and is written into this sandbox's own work dir (its private
            # tmpfs when contained): Triton reads a kernel's source back from its file.
            path = os.path.join(os.getcwd(), "candidate_kernel.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(str(header["source"]))
            spec = importlib.util.spec_from_file_location("candidate_kernel", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules["candidate_kernel"] = module
            spec.loader.exec_module(module)
        except BaseException:
            self.reply({"event": "loaded", "ok": False, "error": _format_error(), "environment": environment})
            return
        missing = [name for name in header["entry_points"] if not callable(getattr(module, name, None))]
        self.module = module
        self.reply(
            {
                "event": "loaded",
                "ok": not missing,
                "missing": missing,
                "error": f"missing entry point(s): {', '.join(missing)}" if missing else "",
                "import_seconds": time.perf_counter() - started,
                "integrity": self.integrity.violations(),
                "environment": environment,
            }
        )

    # ------------------------------------------------------------------ calls

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
    ) -> dict[str, Any]:
        """One call of the candidate. ``keep``: send back only these arguments (None: all of them)."""
        started = time.perf_counter()
        compiles, launchers_s = _COMPILES[0], _LAUNCHER_SECONDS[0]
        decoded = wire.Decoder(blobs, self.device).decode(payload)
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
        outcome: dict[str, Any] = {}
        try:
            with guard.audited():
                returned = function(*args, **kwargs)
            self.compile_windows.take_back()  # a compilation that raised inside a caught exception
            self._sync()
        except BaseException:
            outcome["error"] = _format_error()
            returned = None
        finally:
            guard.STATE.ghost = False
        self.compile_windows.take_back()  # before any more GPU work (the encode's copies, ghost replays)
        called_at = time.perf_counter()
        self.keep_alive.append(returned)
        outcome["launches"] = guard.STATE.launches
        outcome["compute_ops"] = sorted(set(guard.STATE.compute_ops))
        outcome["not_plain"] = _not_plain(returned)
        safe_return = None if outcome["not_plain"] else returned
        if keep is not None:  # a ghost replay: only the compared outputs travel back
            args = [value if index in keep else None for index, value in enumerate(args)]
            kwargs = {key: value for key, value in kwargs.items() if key in keep}
        # Copied to the host now (device work: inside the GPU hold); turned into bytes by _encode_outcome once
        # the hold is given up (host work: a waiting timer need not wait for it).
        outcome["_host"] = host_snapshot({"returned": safe_return, "args": args, "kwargs": kwargs})
        # Where the sandbox's time went (reported by untrusted code: for the stage breakdown, never a verdict).
        outcome["phase_s"] = {
            "decode": decoded_at - started,
            "call": called_at - decoded_at,
            "encode": time.perf_counter() - called_at,
        }
        outcome["compiles"] = _COMPILES[0] - compiles
        if _LAUNCHER_SECONDS[0] > launchers_s:  # part of "call": the launchers it built while the GPU was lent
            outcome["phase_s"]["launchers_lent"] = _LAUNCHER_SECONDS[0] - launchers_s
        return outcome

    @staticmethod
    def _encode_outcome(outcome: dict[str, Any]) -> list[bytes]:
        """A run's host copies as a wire value (into ``outcome``) and its blobs (returned)."""
        started = time.perf_counter()
        encoder = wire.Encoder()
        outcome["value"] = encoder.encode(outcome.pop("_host"))
        outcome["phase_s"]["encode"] += time.perf_counter() - started
        return encoder.blobs

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

    def call(self, header: dict[str, Any], blobs: list[bytes]) -> None:
        self.gate.open(header)
        self._trim_keep_alive()
        self.compile_windows.enabled = bool(header.get("lend_gpu"))
        try:
            self._call(header, blobs)
        finally:
            self.compile_windows.enabled = False
            self.gate.close()

    def _call(self, header: dict[str, Any], blobs: list[bytes]) -> None:
        real = self._run_once(header["entry_point"], header["payload"], blobs, ghost=False)
        integrity = self.integrity.violations() if self.integrity else []
        reply: dict[str, Any] = {"event": "called", "real": real, "ghosts": [], "ghost_blob_offsets": []}
        keep = header.get("ghost_keep")
        keep = list(keep) if isinstance(keep, list) else None
        repeat = None
        if header.get("repeat") and "error" not in real:
            # Random operators: the same inputs once more, in fresh buffers; the outputs must differ.
            repeat = reply["repeat"] = self._run_once(
                header["entry_point"], header["payload"], blobs, ghost=False, keep=keep
            )
        if header.get("ghost") and "error" not in real:
            for variant in range(int(header.get("ghost_variants", 1))):
                ghost = self._run_once(
                    header["entry_point"],
                    header["payload"],
                    blobs,
                    ghost=True,
                    variant=variant,
                    poison_keys=list(header.get("poison_keys", [])),
                    keep=keep,
                )
                integrity += self.integrity.violations() if self.integrity else []
                reply["ghosts"].append(ghost)
        self.gate.close()  # every output is on the host: the rest is host work
        out_blobs = self._encode_outcome(real)
        if repeat is not None:
            reply["repeat_blob_offset"] = len(out_blobs)
            out_blobs = out_blobs + self._encode_outcome(repeat)
        for ghost in reply["ghosts"]:
            reply["ghost_blob_offsets"].append(len(out_blobs))
            out_blobs = out_blobs + self._encode_outcome(ghost)
        reply["integrity"] = sorted(set(integrity))
        reply["native_threads"] = guard.native_thread_count()
        self.answer(reply, out_blobs)

    # ------------------------------------------------------------------ timing (GPU)

    def load_timing_sets(self, header: dict[str, Any], blobs: list[bytes]) -> None:
        try:
            self.gate.open(header)
            decoder = wire.Decoder(blobs, self.device)
            sets = (
                [decoder.decode(item) for item in header["candidate_sets"]],
                [decoder.decode(item) for item in header["reference_sets"]],
            )
            self._sync()
        except BaseException:
            self.answer({"event": "sets_loaded", "ok": False, "error": _format_error()})
            return
        self.timing_sets[str(header["key"])] = sets
        self.keep_alive.extend(sets[0] + sets[1])
        self.answer({"event": "sets_loaded", "ok": True})

    def time_case(self, header: dict[str, Any], blobs: list[bytes]) -> None:
        """Interleaved candidate / reference timing with CUDA events, L2 flush and rotating input sets."""
        try:
            result = self._time_case(header, blobs)
        except BaseException:
            self.reply({"event": "timed", "ok": False, "error": _format_error()})
            return
        self.pending_spots[str(header["sets_key"])] = result.pop("_spots")
        self.reply(dict(result, event="timed", ok=True, integrity=self.integrity.violations()))

    def send_spots(self, header: dict[str, Any]) -> None:
        from evaluation.judge.untrusted.timing import encode_spots

        try:
            self.gate.open(header)
            # Copied to the host under the GPU hold, turned into bytes after it.
            on_host = {
                str(key): [host_snapshot(spot) for spot in self.pending_spots.pop(str(key), [])]
                for key in header["keys"]
            }
            self.gate.close()
            by_key, blobs = {}, []
            for key, pending in on_host.items():
                spots, spot_blobs = encode_spots(pending)
                for spot in spots:
                    spot["blob_offset"] += len(blobs)
                by_key[key] = spots
                blobs += spot_blobs
        except BaseException:
            self.answer({"event": "spots", "ok": False, "error": _format_error()})
            return
        self.answer({"event": "spots", "ok": True, "spots": by_key, "integrity": self.integrity.violations()}, blobs)

    def _time_case(self, header: dict[str, Any], blobs: list[bytes]) -> dict[str, Any]:
        from evaluation.judge.untrusted.timing import time_interleaved

        candidate_sets, reference_sets = self.timing_sets.pop(str(header["sets_key"]))  # from time_load
        function = getattr(self.module, header["entry_point"])
        reference = _reference_callable(header)
        rng = random.Random(header["spot_seed"])
        return time_interleaved(
            candidate=function,
            reference=reference,
            candidate_sets=candidate_sets,
            reference_sets=reference_sets,
            flush_buffer=self.flush_buffer,
            budget_s=float(header["budget_s"]),
            rse_target=float(header["rse_target"]),
            min_iterations=int(header["min_iterations"]),
            max_iterations=int(header["max_iterations"]),
            spot_checks=int(header["spot_checks"]),
            rng=rng,
            keep_alive=self.keep_alive,
            min_launches=1,
            math_isfinite=math.isfinite,
            poison_keys=list(header.get("poison_keys", [])),
            restore_keys=list(header.get("restore_keys", [])),
            host_clock=self.device.type == "cpu",
            event_class=self.backend.event_class(),
            synchronize=self.backend.synchronize,
            spin=self.backend.stream_spin(),
            clock_warmup_s=float(header["clock_warmup_s"]) if "clock_warmup_s" in header else None,
            stream_of=self.backend.current_stream_reader(),
        )


def _reference_callable(header: dict[str, Any]) -> Any:
    """The timing baseline: the operator's ``baseline`` when the worker has it, else its reference."""
    from evaluation.catalog.spec import Call, Case
    from evaluation.judge.records import find_operator

    spec = find_operator(header["operator_id"])
    case = Case(**{key: value for key, value in header["case"].items() if key != "case_id"})

    def run(args: list[Any], kwargs: dict[str, Any]) -> Any:
        return spec.reference(case, Call(args=list(args), kwargs=dict(kwargs)))

    if spec.baseline is not None:
        run.baseline = (spec, case)  # type: ignore[attr-defined]
    return run
