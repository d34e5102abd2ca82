"""Run-time guards installed inside the sandbox before the candidate is imported (EXPLOITS 1, 2, 9, 11).

* Launch hooks: ``JITFunction.run``, the interpreter's ``InterpretedFunction.run`` and a compiled handle's
  runner (``CompiledKernel.__getitem__``) are wrapped at class level, so every Triton launch (autotuned or
  not) is counted, and in ghost mode turned into a no-op; in a
  probe call (``GuardState.launch_windows``) each launch is also bracketed by two events, recorded by
  Triton's launcher hooks right around the driver's launch (``launcher_windows``). The protocol stage's
  loops count compiled launches through Triton's own launcher hook instead (``bare_launches``).
* ``AuditMode``: a TorchDispatchMode around each candidate call, applying ``audit_rules``. Allocation, views,
  same-dtype copies, fills and metadata pass; host reads pass within their budget; any other aten op is
  recorded (and the call rejected by the judge). While a compiled Triton launch runs the audit is paused
  (Triton's launcher is not the candidate); an interpreted launch stays audited, since its body is plain
  Python.
* ``Integrity``: identities of the harness's functions captured before the candidate loads, compared after
  its import and after every call, plus the thread count.

This module runs in the untrusted process: it can only report, and the candidate can reach it. The trusted
side treats whatever arrives as evidence, not as a verdict; what a tampered guard could hide, ghost replay,
the integrity checks and the comparison outside the sandbox still see.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from evaluation.judge.compare import flat_tensors, map_tensors
from evaluation.judge.untrusted.audit_rules import (
    ALLOCATING_ATEN,
    ALLOWED_ATEN,
    DTYPE_CHANGING_COPIES,
    HOST_READ_BUDGET,
    SCALAR_READS,
    SEED_DRAW_MAX_ELEMENTS,
    SEED_DRAWS,
)


def poison_(tensor: torch.Tensor, variant: int = 0) -> torch.Tensor:
    """Fill with a value no honest kernel leaves behind: NaN for floats, a sentinel for integers.

    Integers and bools have no value that can never be right, so there are two variants (bool: True /
    False; integers: max / min); ghost replay only convicts when the output is right under both.
    """
    if tensor.numel() == 0:
        return tensor
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        tensor.fill_(float("nan"))
    elif tensor.dtype == torch.bool:
        tensor.fill_(variant == 0)
    elif tensor.dtype == torch.uint8:
        tensor.fill_(0xA5 if variant == 0 else 0x5A)
    else:
        info = torch.iinfo(tensor.dtype)
        tensor.fill_(info.max if variant == 0 else info.min)
    return tensor


def poison_tree(value: Any, variant: int = 0) -> Any:
    """``poison_`` every tensor of a value, walking lists and tuples (cuBLAS pointer arrays, per-layer caches)."""
    if isinstance(value, torch.Tensor):
        poison_(value, variant)
    elif isinstance(value, (list, tuple)):
        for item in value:
            poison_tree(item, variant)
    return value


class HostReadBudgetExceeded(RuntimeError):
    """A call read more tensor data back to the host than HOST_READ_BUDGET allows."""


class HostReads:
    """The values a real call reads back to the host, which its ghost replays read again in their place.

    A ghost replay turns every launch into a no-op; a kernel that could tell would compute its answer some
    way the dispatch audit misses only when watched, and poison it in the replay. The simplest way to tell is
    to launch a kernel that writes a known value and read it back: in a replay that read returns what the
    real call read (the same inputs, the same order of reads), so the replay looks like the real call. Reads
    in another order or of another shape than recorded return what is there."""

    def __init__(self) -> None:
        self.recorded: list[Any] = []
        self.replaying: list[Any] | None = None
        self.position = 0

    def record(self) -> None:
        self.recorded, self.replaying, self.position = [], None, 0

    def replay(self) -> None:
        self.replaying, self.position = self.recorded, 0

    def seen(self, actual: Any) -> Any:
        """The value a read gives the kernel: ``actual`` in a real call (kept), the recorded one in a replay."""
        if self.replaying is None:
            self.recorded.append(_detached_copy(actual))
            return actual
        if self.position >= len(self.replaying):
            return actual
        recorded = self.replaying[self.position]
        self.position += 1
        return _detached_copy(recorded) if _same_kind(recorded, actual) else actual


def _detached_copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if hasattr(value, "__array_interface__") and hasattr(value, "copy"):  # a numpy array
        return value.copy()
    if isinstance(value, list):
        return [_detached_copy(item) for item in value]
    return value


def _same_kind(recorded: Any, actual: Any) -> bool:
    if type(recorded) is not type(actual):
        return False
    if isinstance(actual, torch.Tensor) or hasattr(actual, "__array_interface__"):
        return recorded.shape == actual.shape and recorded.dtype == actual.dtype
    if isinstance(actual, list):
        return len(recorded) == len(actual) and all(map(_same_kind, recorded, actual))
    return True


class StaleBuffers:
    """A ghost replay's memory that outlives calls: a buffer the wrapper keeps between calls (a module-level
    scratch or workspace) still holds what the real call's kernels wrote, so a wrapper that copies its answer
    from there (``out.copy_(scratch)``) would look right with every launch a no-op. Each no-op launch poisons
    the memory it would have written (every tensor argument that is neither the call's own nor fresh, which
    allocation already poisoned), and the replay puts it back as it was when it ends: a cache that no launch
    of the replay touches still holds the real call's answer, which convicts."""

    def __init__(self, call: Any, variant: int) -> None:
        self.variant = variant
        self.call = {storage_address(t.untyped_storage()) for t in flat_tensors(call) if t.device.type != "meta"}
        self.new: set[int] = set()
        self.saved: dict[int, tuple[torch.UntypedStorage, torch.UntypedStorage]] = {}

    def fresh(self, tensor: torch.Tensor) -> None:
        self.new.add(storage_address(tensor.untyped_storage()))

    def poison_launched(self, args: Any, kwargs: Any) -> None:
        with paused():
            for tensor in flat_tensors((args, kwargs)):
                storage = tensor.untyped_storage()
                address = storage_address(storage)
                if tensor.device.type == "meta" or not storage.nbytes() or not tensor.element_size():
                    continue
                if address in self.call or address in self.new or address in self.saved:
                    continue
                self.saved[address] = (storage, storage.clone())
                count = storage.nbytes() // tensor.element_size()
                poison_(
                    torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(storage, 0, (count,)), self.variant
                )

    def restore(self) -> None:
        with paused():
            for storage, copy in self.saved.values():
                storage.copy_(copy)
        self.saved.clear()


class Twins:
    """A twin replay's second world of memory (docs/judge.md, "Twin replay"). The call sees the real call's
    inputs; each storage holding them has a twin of the same size holding another draw of the case's inputs.
    Triton works only on twins: a tensor's ``data_ptr()`` (which Triton's launchers and the interpreter take a
    kernel's pointers from, and pointer tables are built from) points into its storage's twin, made on first
    use for memory that has none (a copy of what it holds), and so does its storage's ``data_ptr()``: every
    address the call can learn, from the wrapper or from a kernel that stores its own pointers, is a twin's,
    so none tells the replay apart. Host reads the budget allows read the twins; copies the wrapper makes of
    twinned memory (``contiguous``, ``clone``, ``copy_``) are made of the twins too, and fills reach them.
    So an honest call's outputs are the answer for the twins' values, while work done anywhere Triton is not
    (torch outside the audit's reach, numpy on ``TensorBase.numpy()``, a subprocess) sees only the call's own
    inputs and none of what Triton wrote, and gives another answer, which the judge tells apart. Memory
    built on a raw address (``refuse_raw_memory``) is refused, since at a twin's address it would follow.

    ``time_shared`` (the CPU interpreter, where host code reaches memory by its address through numpy's
    ``__array_interface__``, which torch cannot refuse): no address is a twin's. Each interpreted launch
    runs twice: first with every twinned storage holding its twin (what the kernel writes there goes back
    to the twin), then on the real memory as the call left it. Between launches the call's memory holds what
    the real call would hold, Triton's writes included, so nothing at any address tells the replay apart,
    and host math there reads the call's own inputs and never reaches the twins, as on a GPU, whose memory
    host code cannot read at all."""

    def __init__(self, *, time_shared: bool = False) -> None:
        self.by_storage: dict[int, torch.UntypedStorage] = {}  # real storage's address -> its twin
        self.twin_addresses: set[int] = set()  # a twin's own memory has no twin: Triton works on it as it is
        self.time_shared = time_shared
        self._pairs: list[tuple[torch.UntypedStorage, torch.UntypedStorage]] = []
        self._alive: list[Any] = []

    def add(self, real: torch.Tensor, twin: torch.Tensor) -> None:
        """``twin``'s storage is the twin of ``real``'s (same bytes, same layout of views into them)."""
        self._pair(real.untyped_storage(), twin)

    def _pair(self, storage: torch.UntypedStorage, twin: torch.Tensor) -> None:
        if storage.nbytes() and storage_address(storage) not in self.by_storage:
            self.by_storage[storage_address(storage)] = twin.untyped_storage()
            self.twin_addresses.add(storage_address(twin.untyped_storage()))
            self._pairs.append((storage, twin.untyped_storage()))
            self._alive += [storage, twin]
            if STATE.on_tensor is not None:  # the interpreter's bounds: kernels write the twin instead
                STATE.on_tensor(twin)

    def has(self, tensor: Any) -> bool:
        return (
            isinstance(tensor, torch.Tensor)
            and tensor.device.type != "meta"
            and storage_address(tensor.untyped_storage()) in self.by_storage
        )

    def view(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor``'s geometry on its storage's twin."""
        twin = self.by_storage[storage_address(tensor.untyped_storage())]
        with paused():
            return torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
                twin, tensor.storage_offset(), tensor.size(), tensor.stride()
            )

    def swapped(self, value: Any) -> Any:
        """``value`` with every twinned tensor in it (lists, tuples, dicts) replaced by its twin view."""
        return map_tensors(value, lambda tensor: self.view(tensor) if self.has(tensor) else tensor)

    def twin_of(self, storage: torch.UntypedStorage) -> torch.UntypedStorage:
        """The twin of ``storage`` (not empty); memory without one yet (a buffer the wrapper allocated, filled
        or computed) gets one now, a copy of what it holds."""
        if storage_address(storage) not in self.by_storage:
            with paused():
                self._pair(storage, torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage.clone()))
        return self.by_storage[storage_address(storage)]

    def pointer(self, tensor: torch.Tensor, real_pointer: int) -> int:
        """Where ``tensor``'s data is in the twins (``Tensor.data_ptr`` during a twin replay)."""
        storage = tensor.untyped_storage()
        base = storage_address(storage)
        if not storage.nbytes() or not base <= real_pointer < base + storage.nbytes() or base in self.twin_addresses:
            return real_pointer  # no memory behind it (an empty tensor's pointer is null), or a twin's own
        twin = self.twin_of(storage)  # memory whose address the call learns may reach a kernel: it gets a twin
        return real_pointer if self.time_shared else storage_address(twin) + (real_pointer - base)

    def storage_pointer(self, storage: torch.UntypedStorage) -> int:
        """Where ``storage`` is in the twins (``UntypedStorage.data_ptr`` during a twin replay)."""
        if not storage.nbytes() or storage.device.type == "meta" or storage_address(storage) in self.twin_addresses:
            return storage_address(storage)
        twin = self.twin_of(storage)
        return storage_address(storage) if self.time_shared else storage_address(twin)

    @contextlib.contextmanager
    def twin_world(self, launch_arguments: Any) -> Any:
        """Meanwhile (a time-shared launch's first run) every twinned storage holds its twin; afterwards the
        twin holds what the kernel left there and the storage its own bytes again. The launch's tensor
        arguments get twins first, so that none is left out of the swap."""
        for tensor in flat_tensors(launch_arguments):
            if tensor.device.type != "meta" and tensor.untyped_storage().nbytes():
                self.twin_of(tensor.untyped_storage())
        swapped = []
        with paused():
            for real, twin in self._pairs:
                swapped.append((real, twin, real.clone()))
                real.copy_(twin)
        try:
            yield
        finally:
            with paused():
                for real, twin, own in swapped:
                    twin.copy_(real)
                    real.copy_(own)

    def follow(self, func: Any, args: tuple, kwargs: dict, result: Any) -> None:
        """After an allowed op ran on real memory: the same op on the twins, where its inputs have any.
        Allocations and fills from scalars hold nothing of the inputs' values (no twin needed)."""
        if not any(self.has(item) for item in flat_tensors((args, kwargs))):
            return
        schema = func._schema
        written = [
            index
            for index, argument in enumerate(schema.arguments)
            if argument.alias_info is not None and argument.alias_info.is_write
        ]
        if written:
            targets = [
                args[index] if index < len(args) else kwargs.get(schema.arguments[index].name) for index in written
            ]
            for target in targets:  # copy_ into a fresh buffer from twinned memory: the buffer gets a twin
                if isinstance(target, torch.Tensor) and target.numel() and target.untyped_storage().nbytes():
                    self.twin_of(target.untyped_storage())
            with paused():
                func(*self.swapped(args), **self.swapped(kwargs))
            return
        with paused():
            twin_result = func(*self.swapped(args), **self.swapped(kwargs))
        for real, twin in zip(flat_tensors(result), flat_tensors(twin_result), strict=False):
            if real.numel():
                self.add(real, twin)


def _unwrapped(method: Any) -> Any:
    original = getattr(method, "__kgb_wrapped__", None)
    return original if callable(original) else method


# The judge's own bookkeeping keys storages by their real address; the candidate's UntypedStorage.data_ptr
# points into twins during a twin replay (install_host_read_counters).
_STORAGE_ADDRESS = _unwrapped(torch.UntypedStorage.data_ptr)


def storage_address(storage: Any) -> int:
    """``storage``'s real address, whatever its data_ptr says during a twin replay."""
    return _STORAGE_ADDRESS(storage)


class GuardState:
    """Counters and switches shared by the launch hooks and the audit mode."""

    def __init__(self) -> None:
        self.launches = 0
        self.ghost = False
        self.poison_variant = 0
        self.paused = 0
        # Inside a launch under the CPU interpreter the kernel's body is plain Python: torch called there
        # would really run. Such launches stay audited (the interpreter itself only allocates and copies).
        self.interpreted_launch = 0
        self.auditing = False
        # Called with every tensor an audited call's ops return (None: nobody asked): the CPU interpreter's
        # bounds check lets a kernel write what its call allocated (interpreter_bounds).
        self.on_tensor: Any = None
        self.compute_ops: list[str] = []
        self.host_read_elements = 0
        self.host_reads = HostReads()
        self.twins: Twins | None = None  # a twin replay's (Twins), None in every other call
        self.stale: StaleBuffers | None = None  # a ghost replay's (StaleBuffers), None in every other call
        # Timed calls: the stream the timing loop records its events on, how to read the current one, and
        # how many launches / tensor ops this call issued on any other stream (work the events never see).
        self.timed_stream: Any = None
        self.stream_of: Any = None
        self.foreign_stream_work = 0
        # Called before every launch (the sandbox takes the GPU back if a compilation that raised left it lent).
        self.before_launch: Any = None
        # The device-time loop's probe call (timing.kernel_time_probe): a list, and each launch appends the
        # (start, end) events recorded around it with ``event_class``, so the call's kernels can be timed
        # without its host time. None: nothing recorded (every other call).
        self.launch_windows: list[tuple[Any, Any]] | None = None
        self.event_class: Any = None
        # In a probe call with the launcher's own hooks on (open_launcher_windows), a compiled launch's window
        # is opened and closed by Triton's launcher right around the driver's launch, not around
        # JITFunction.run: ``launcher_windows`` says they are on, ``launch_in_window`` that a counted launch is
        # under way, ``window_start`` holds its start event, ``window_missed`` that a launch made no window.
        self.launcher_windows = False
        self.launch_in_window = False
        self.window_start: Any = None
        self.window_missed = False
        # In a probe call, a device-side hold enqueued just before each window's start event (a callable of no
        # arguments; None: none), so that the start event and the launch queue behind it and the window holds
        # the kernel alone: a launch on an idle device (after a readback's wait) would otherwise count the
        # host's launch path as well, which on a loaded host is many times the kernel.
        self.window_hold: Any = None
        # Inside bare_launches (the protocol stage's loops): Triton's launcher hook counts compiled launches.
        self.bare_launches = False

    def reset(self, *, ghost: bool) -> None:
        self.launches = 0
        self.ghost = ghost
        # What a call reads back to the host, in order; a ghost replay reads the last real call's instead
        # (HostReads).
        if ghost:
            self.host_reads.replay()
        else:
            self.host_reads.record()
        self.compute_ops = []
        self.host_read_elements = 0
        self.foreign_stream_work = 0

    def watch_stream(self, stream: Any, stream_of: Any) -> None:
        """Count work issued on any stream but ``stream`` (``stream_of()`` reads the current one); None: stop."""
        self.timed_stream, self.stream_of = stream, stream_of

    def off_timed_stream(self) -> bool:
        return self.timed_stream is not None and self.stream_of() != self.timed_stream


STATE = GuardState()


class AuditMode(TorchDispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if STATE.auditing and not STATE.paused and getattr(func, "namespace", "aten") != "aten":
            return _outside_aten(func, args, kwargs)
        result = func(*args, **kwargs)
        if STATE.paused:
            return result
        if STATE.off_timed_stream():
            STATE.foreign_stream_work += 1
        if not STATE.auditing:
            return result
        packet = func._overloadpacket.__name__
        if STATE.on_tensor is not None and isinstance(result, torch.Tensor):
            STATE.on_tensor(result)
        if STATE.interpreted_launch:
            if packet not in ALLOWED_ATEN:
                STATE.compute_ops.append(f"{func.name()} (inside a kernel, under the CPU interpreter)")
            return result
        read = _host_read_elements(packet, args, result)
        twins = STATE.twins
        if read:
            _add_host_reads(read)
            if twins is not None and any(twins.has(item) for item in flat_tensors((args, kwargs))):
                with paused():  # a read of twinned memory reads the twins, as the kernels do
                    result = func(*twins.swapped(args), **twins.swapped(kwargs))
            if packet == "copy_" and isinstance(result, torch.Tensor):
                seen = STATE.host_reads.seen(result)
                if seen is not result:
                    with paused():
                        result.copy_(seen)
                return result
            return STATE.host_reads.seen(result)
        elif packet in SEED_DRAWS and _seed_draw(result):
            pass
        elif packet not in ALLOWED_ATEN:
            STATE.compute_ops.append(str(func.name()))
        elif packet in DTYPE_CHANGING_COPIES and _changes_dtype(packet, args, kwargs, result):
            STATE.compute_ops.append(f"{func.name()} (dtype conversion)")
        elif STATE.ghost and packet in ALLOCATING_ATEN and isinstance(result, torch.Tensor):
            # Ghost replay: fresh memory must not hold the real call's answer (allocator reuse).
            poison_(result, STATE.poison_variant)
            if STATE.stale is not None:
                STATE.stale.fresh(result)
        elif twins is not None and packet not in ALLOCATING_ATEN and packet not in FROM_SCALARS:
            twins.follow(func, args, kwargs, result)
        return result


# Allowed ops whose results hold nothing of their tensor arguments' values (a twin replay need not follow
# them): shapes, dtypes and scalars only.
FROM_SCALARS = frozenset(
    {"zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "arange"}
    | {"scalar_tensor", "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "is_same_size"}
    | {"promote_types", "result_type", "can_cast", "_has_compatible_shallow_copy_type"}
)


# Operators that existed before the candidate loaded (guard.remember_builtin_operators): outside ATen, their
# kernels are C++ (quantized::, _c10d_functional::...), whose work the audit cannot follow.
BUILTIN_OPERATORS: set[str] = set()
# The dispatch keys whose kernel an operator the candidate defined (torch.library.custom_op, triton_op) is
# called through, its body then audited like the call's own code: the device's own key first.
FOLLOWED_KEYS = ("CPU", "CUDA", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


def remember_builtin_operators() -> None:
    BUILTIN_OPERATORS.update(torch._C._dispatch_get_all_op_names())


def _outside_aten(func: Any, args: tuple, kwargs: dict) -> Any:
    """An operator registered outside ATen. Its kernel runs while the dispatch mode is popped for this
    handler, where nothing audits it (redteam::clone, computing a cosine, passed as the allowed "clone"). One
    the candidate defined in Python (a custom_op or triton_op wrapping its launch, a documented style) is
    called through its kernel's own dispatch key under a mode of its own, so that its body is audited as
    the call's code is; one that existed before (a C++ kernel) is work outside Triton."""
    name = func.name()
    keys = [key for key in FOLLOWED_KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(name, key)]
    if name in BUILTIN_OPERATORS or not keys:
        STATE.compute_ops.append(f"{name} (an operator outside ATen, whose kernel the audit cannot see)")
        return func(*args, **kwargs)
    devices = {arg.device.type.upper() for arg in args if isinstance(arg, torch.Tensor)}
    key = next((key for key in keys if key in devices), None)
    key = key or next((key for key in keys if key.startswith("Composite")), keys[0])
    with AuditMode():
        return func._op_dk(getattr(torch._C.DispatchKey, key), *args, **kwargs)


@contextlib.contextmanager
def paused() -> Any:
    """The judge's own tensor work inside an audited call: not audited, not counted."""
    STATE.paused += 1
    try:
        yield
    finally:
        STATE.paused -= 1


@contextlib.contextmanager
def audited() -> Any:
    """Around a candidate's call: the dispatch audit on, and off again however the call ends."""
    STATE.auditing = True
    try:
        with AuditMode():
            yield
    finally:
        STATE.auditing = False


def _seed_draw(result: Any) -> bool:
    return (
        isinstance(result, torch.Tensor)
        and not result.dtype.is_floating_point
        and result.numel() <= SEED_DRAW_MAX_ELEMENTS
    )


def _host_read_elements(packet: str, args: tuple, result: Any) -> int:
    """How many elements of tensor data this op brings to the host (0: none)."""
    if packet in SCALAR_READS:
        return 1
    tensors = [arg for arg in args[:2] if isinstance(arg, torch.Tensor)]
    if packet == "_to_copy" and tensors and isinstance(result, torch.Tensor):
        to_host = tensors[0].device.type != "cpu" and result.device.type == "cpu"
        return tensors[0].numel() if to_host else 0
    if packet == "copy_" and len(tensors) == 2:
        to_host = tensors[0].device.type == "cpu" and tensors[1].device.type != "cpu"
        return tensors[1].numel() if to_host else 0
    return 0


def _changes_dtype(packet: str, args: tuple, kwargs: dict, result: Any) -> bool:
    if packet == "copy_" and len(args) >= 2 and isinstance(args[1], torch.Tensor):
        return args[0].dtype != args[1].dtype
    if packet == "_to_copy" and args and isinstance(args[0], torch.Tensor) and isinstance(result, torch.Tensor):
        return args[0].dtype != result.dtype
    return False


# A probe call records the windows of at most this many launches (a lower bound of its kernels' time).
LAUNCH_WINDOWS_CAP = 256


def _counted_launch_skipped(args: Any, kwargs: Any) -> bool:
    """Count one launch (not a warm-up); True when it must not run: a ghost replay's launches are no-ops, and
    the buffers they would have written are poisoned as stale instead."""
    STATE.launches += 1
    if STATE.off_timed_stream():
        STATE.foreign_stream_work += 1
    if STATE.ghost:
        if STATE.stale is not None:
            STATE.stale.poison_launched(args, kwargs)
        return True
    return False


def _windowed(launch: Any, launch_args: tuple, *, launcher_hooks: bool) -> Any:
    """``launch(*launch_args)``, in a probe call bracketed by a window of two events (GuardState.launch_windows).
    ``launcher_hooks``: the launch goes through Triton's C launcher, whose hooks can bracket the driver's call
    itself (launcher_windows); an interpreted launch cannot."""
    windows = STATE.launch_windows
    if windows is None or len(windows) >= LAUNCH_WINDOWS_CAP:
        return launch(*launch_args)
    if STATE.launcher_windows and launcher_hooks:
        # The launcher opens and closes the window (_open_window, _close_window): JITFunction.run's own
        # host work (binding, the cache key, the grid) stays out of it, which on an idle device (a launch
        # after a readback's wait) it would not: on the H200 an honest readback's probe read 96 us for
        # two kernels of a few microseconds.
        STATE.launch_in_window, STATE.window_start = True, None
        before = len(windows)
        try:
            return launch(*launch_args)
        finally:
            STATE.launch_in_window, STATE.window_start = False, None
            if len(windows) == before:
                STATE.window_missed = True
    start, end = STATE.event_class(enable_timing=True), STATE.event_class(enable_timing=True)
    _hold_before_window()
    start.record()
    try:
        return launch(*launch_args)
    finally:
        end.record()
        windows.append((start, end))


def _wrap_run(original: Any, owner: type, interpreted: bool = False) -> Any:
    def launch(self: Any, args: tuple, grid: Any, warmup: bool, kwargs: dict) -> Any:
        if interpreted:
            twins = STATE.twins if not STATE.interpreted_launch else None
            STATE.interpreted_launch += 1
            try:
                if twins is not None and twins.time_shared:  # the twins' run, then the real memory's
                    with twins.twin_world((args, kwargs)):
                        original(self, *args, grid=grid, warmup=warmup, **kwargs)
                return original(self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                STATE.interpreted_launch -= 1
        STATE.paused += 1
        try:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            STATE.paused -= 1

    def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        if not isinstance(self, owner):
            # Only a real kernel's launch is counted and runs with the audit paused: a stand-in ``self``
            # called through the class would run its own Python (a property Triton reads) unaudited.
            raise TypeError(f"{owner.__name__}.run called on a {type(self).__name__}, not a Triton kernel")
        if STATE.before_launch is not None:
            STATE.before_launch()
        if warmup:
            return launch(self, args, grid, warmup, kwargs)
        if _counted_launch_skipped(args, kwargs):
            return None
        return _windowed(launch, (self, args, grid, warmup, kwargs), launcher_hooks=not interpreted)

    run.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return run


def _wrap_compiled_getitem(original: Any) -> Any:
    """``CompiledKernel.__getitem__``: ``compiled = kernel.warmup(..., grid=...)`` then ``compiled[grid](...)``
    launches through the C launcher without ``JITFunction.run`` (a style that saves Triton's launch path).
    Its runner is counted, ghosted and windowed as a ``JITFunction.run`` launch is; inside ``bare_launches``
    Triton's launcher hook counts it instead. Calling the launcher itself (``compiled.run``) is not a
    launch the judge sees: a ghost replay then finds outputs it did not expect."""

    def getitem(self: Any, grid: Any) -> Any:
        runner = original(self, grid)

        def launch(*args: Any, stream: Any = None) -> Any:
            if STATE.bare_launches:
                return runner(*args, stream=stream)
            if STATE.before_launch is not None:
                STATE.before_launch()
            if _counted_launch_skipped(args, {}):
                return None
            return _windowed(_run_paused, (runner, args, stream), launcher_hooks=True)

        return launch

    getitem.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return getitem


def _run_paused(runner: Any, args: tuple, stream: Any) -> Any:
    """A compiled handle's runner with the audit paused: Triton's launcher is not the candidate."""
    STATE.paused += 1
    try:
        return runner(*args, stream=stream)
    finally:
        STATE.paused -= 1


def _hold_before_window() -> None:
    """The probe's hold before a window (GuardState.window_hold): the judge's own device work, not audited."""
    if STATE.window_hold is None:
        return
    STATE.paused += 1
    try:
        STATE.window_hold()
    finally:
        STATE.paused -= 1


def _open_window(metadata: Any = None) -> None:
    """Triton's launch_enter_hook: the start event of a counted launch's window, just before the driver call."""
    if STATE.launch_in_window and STATE.launch_windows is not None:
        _hold_before_window()
        STATE.window_start = STATE.event_class(enable_timing=True)
        STATE.window_start.record()


def _close_window(metadata: Any = None) -> None:
    """Triton's launch_exit_hook: the end event, just after the driver call."""
    start = STATE.window_start
    if start is not None and STATE.launch_windows is not None:
        end = STATE.event_class(enable_timing=True)
        end.record()
        STATE.launch_windows.append((start, end))
    STATE.window_start = None


@contextlib.contextmanager
def launcher_windows() -> Any:
    """Meanwhile, a probe call's compiled launches are bracketed by Triton's launcher hooks (right around the
    driver's launch) instead of around JITFunction.run. Only for the probe: on every other call the hooks
    would add host time. Where this Triton has no hook chains, the brackets stay around JITFunction.run."""
    from triton import knobs

    enter, leave = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
    chains = hasattr(enter, "add") and hasattr(leave, "add")
    if chains:
        enter.add(_open_window)
        leave.add(_close_window)
    STATE.launcher_windows, STATE.window_missed = chains, False
    try:
        yield
    finally:
        STATE.launcher_windows = False
        if chains:
            enter.remove(_open_window)
            leave.remove(_close_window)


def _count_launch(metadata: Any = None) -> None:
    """Triton's launch_enter_hook inside ``bare_launches``: one compiled launch, counted by its launcher."""
    STATE.launches += 1


@contextlib.contextmanager
def bare_launches() -> Any:
    """Meanwhile ``JITFunction.run`` and ``CompiledKernel.__getitem__`` are Triton's own again, and compiled
    launches are counted by Triton's launcher hook (``_count_launch``) instead of the wrappers: for the
    protocol stage's loops, which time the latency a caller sees and audit nothing (no dispatch mode, no
    ghost, no compile lending), so the wrappers' only work there, counting, is done the cheapest way Triton
    offers. A plain process calls a kernel through the same path (Triton's launcher already calls its hook
    chain on every launch, empty or not); the wrapper's Python frames cost 0.7 us a launch on an idle CPU
    core, more on a loaded judge host, which on a launch-bound call of 10-20 us read as the kernel's. A
    compiled handle's runner made before (``compiled[grid]`` kept by the candidate) stays wrapped but steps
    aside. The interpreter's launches stay wrapped (it has no launcher hooks). A candidate that replaces
    either entry point meanwhile keeps its own: ``Integrity`` then names the replacement, as it would have at
    any other time."""
    from triton import knobs
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.jit import JITFunction

    chain = knobs.runtime.launch_enter_hook
    if not (hasattr(chain, "add") and hasattr(chain, "remove")):
        yield  # a Triton without hook chains: the wrappers count, as elsewhere
        return
    restored = []
    for owner, attribute in ((JITFunction, "run"), (CompiledKernel, "__getitem__")):
        wrapped = owner.__dict__.get(attribute)
        original = getattr(wrapped, "__kgb_wrapped__", None)
        if original is not None:
            setattr(owner, attribute, original)
            restored.append((owner, attribute, wrapped, original))
    if not restored:
        yield  # not wrapped here
        return
    chain.add(_count_launch)
    STATE.bare_launches = True
    try:
        yield
    finally:
        STATE.bare_launches = False
        chain.remove(_count_launch)
        for owner, attribute, wrapped, original in restored:
            if owner.__dict__.get(attribute) is original:
                setattr(owner, attribute, wrapped)


def install_launch_hooks() -> dict[str, Any]:
    """Wrap the Triton launch entry points at class level; returns the wrappers for identity checks, keyed by
    ``Class.attribute``."""
    from triton.compiler.compiler import CompiledKernel
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    hooks: dict[str, Any] = {}
    for name, cls in (("JITFunction.run", JITFunction), ("InterpretedFunction.run", InterpretedFunction)):
        wrapper = _wrap_run(cls.run, cls, interpreted=cls is InterpretedFunction)
        cls.run = wrapper
        hooks[name] = (cls, wrapper)
    wrapper = _wrap_compiled_getitem(CompiledKernel.__getitem__)
    CompiledKernel.__getitem__ = wrapper
    hooks["CompiledKernel.__getitem__"] = (CompiledKernel, wrapper)
    return hooks


# Tensor methods that hand tensor data to the host without any aten op the audit sees (on the CPU they read
# memory in place): each counts its tensor's elements against the call's host-read budget.
HOST_READ_METHODS = ("tolist", "numpy", "__dlpack__")


def _count_host_read(original: Any, name: str) -> Any:
    def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted = STATE.auditing and not STATE.paused and not STATE.interpreted_launch
        if counted and isinstance(self, torch.Tensor):
            _add_host_reads(self.numel())
            if STATE.twins is not None and STATE.twins.has(self):
                self = STATE.twins.view(self)  # a read of twinned memory reads the twin, as the kernels do
                if STATE.twins.time_shared:
                    # On the CPU, .numpy() and __dlpack__ share the tensor's memory: its address would lead
                    # numpy past the elements counted, into the twin. A copy of those elements leads nowhere.
                    with paused():
                        self = self.clone()
        with paused():  # the method's own copies are the read just counted
            value = original(self, *args, **kwargs)
        return STATE.host_reads.seen(value) if counted and name != "__dlpack__" else value

    read.__name__ = read.__qualname__ = name
    read.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return read


def install_host_read_counters() -> None:
    """Wrap HOST_READ_METHODS on torch.Tensor, and the tensor's and the storage's data_ptr for twin replays
    (before the candidate loads; Integrity watches the wrappers)."""
    for name in HOST_READ_METHODS:
        original = getattr(torch.Tensor, name, None)
        if original is not None and not hasattr(original, "__kgb_wrapped__"):
            setattr(torch.Tensor, name, _count_host_read(original, name))
    if not hasattr(torch.Tensor.data_ptr, "__kgb_wrapped__"):
        torch.Tensor.data_ptr = _twin_pointer(torch.Tensor.data_ptr)
    if not hasattr(torch.UntypedStorage.data_ptr, "__kgb_wrapped__"):
        torch.UntypedStorage.data_ptr = _twin_storage_pointer(torch.UntypedStorage.data_ptr)
    refuse_raw_memory()


# torch's ways to lay a tensor over memory named by a bare address: at a twin's address in a twin replay,
# work on it would follow the twins Triton reads (numpy's __array_interface__ on the CPU is not torch's to
# refuse: docs/judge.md, "Not covered").
RAW_MEMORY_BUILDERS = ("as_tensor", "asarray", "tensor")


def refuse_raw_memory() -> None:
    """Replace torch._C._construct_storage_from_data_pointer with a refusal, and refuse objects that offer
    ``__cuda_array_interface__`` (raw device addresses) to torch.as_tensor / asarray / tensor."""
    if not hasattr(torch._C._construct_storage_from_data_pointer, "__kgb_wrapped__"):
        torch._C._construct_storage_from_data_pointer = _raw_memory_refusal(
            torch._C._construct_storage_from_data_pointer, "torch._C._construct_storage_from_data_pointer"
        )
    for name in RAW_MEMORY_BUILDERS:
        original = getattr(torch, name)
        if not hasattr(original, "__kgb_wrapped__"):
            setattr(torch, name, _no_raw_device_memory(original, name))


def _raw_memory_refusal(original: Any, name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        STATE.compute_ops.append(f"memory built on a raw address ({name})")
        raise RuntimeError(f"{name} is refused in the sandbox: memory built on a raw address")

    refused.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return refused


def _no_raw_device_memory(original: Any, name: str) -> Any:
    def build(*args: Any, **kwargs: Any) -> Any:
        for data in (*args[:1], *kwargs.values()):
            if not isinstance(data, torch.Tensor) and hasattr(type(data), "__cuda_array_interface__"):
                STATE.compute_ops.append(f"memory built on a raw address (torch.{name} of a __cuda_array_interface__)")
                raise RuntimeError(f"torch.{name} of a __cuda_array_interface__ is refused in the sandbox")
        return original(*args, **kwargs)

    build.__name__ = build.__qualname__ = name
    build.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return build


def _twin_pointer(original: Any) -> Any:
    def data_ptr(self: Any) -> int:
        pointer = original(self)
        twins = STATE.twins
        return pointer if twins is None or not isinstance(self, torch.Tensor) else twins.pointer(self, pointer)

    data_ptr.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return data_ptr


def _twin_storage_pointer(original: Any) -> Any:
    def data_ptr(self: Any) -> int:
        twins = STATE.twins
        if twins is None or not isinstance(self, torch.UntypedStorage):
            return original(self)
        return twins.storage_pointer(self)

    data_ptr.__kgb_wrapped__ = original  # type: ignore[attr-defined]
    return data_ptr


def _add_host_reads(count: int) -> None:
    STATE.host_read_elements += count
    if STATE.host_read_elements > HOST_READ_BUDGET:
        STATE.compute_ops.append(f"host reads of more than {HOST_READ_BUDGET} tensor elements in one call")
        # Recorded whatever the kernel does next; raised so that a host loop over a big tensor ends now
        # instead of at the per-call limit.
        raise HostReadBudgetExceeded(f"read more than {HOST_READ_BUDGET} tensor elements back to the host")


def native_thread_count() -> int:
    try:
        import os

        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


class Integrity:
    """What the harness relies on, captured before the candidate loads, and the check against it."""

    def __init__(
        self,
        hooks: dict[str, Any],
        device_module: Any = None,
        judge_modules: tuple[Any, ...] = (),
        wrapped: tuple[tuple[Any, str], ...] = (),
        native_threads_fixed: bool = False,
    ) -> None:
        """``device_module``: the device family's torch module (torch.npu, torch.musa) when it is not CUDA,
        whose synchronize / Event / current_stream the timing relies on as much as CUDA's. ``judge_modules``:
        the sandbox's own modules, whose every binding (and their classes' members) must stay as it was.
        ``wrapped``: (owner, attribute) pairs the sandbox wrapped elsewhere (thread starters), to stay so.
        ``native_threads_fixed``: the process's own threads (``/proc/self/task``, which sees a thread started
        through ``_thread`` that ``threading`` does not) must not grow either: on the CPU interpreter, where no
        driver starts threads of its own once the process is warm."""
        import torch.testing

        self.hooks = hooks
        self.captured: dict[str, tuple[Any, str, Any]] = {}
        targets: list[tuple[str, Any, str]] = [
            ("time.perf_counter", time, "perf_counter"),
            ("time.perf_counter_ns", time, "perf_counter_ns"),
            ("time.monotonic", time, "monotonic"),
            ("torch.testing.assert_close", torch.testing, "assert_close"),
            ("torch.cuda.synchronize", torch.cuda, "synchronize"),
            ("torch.cuda.Event", torch.cuda, "Event"),
            ("torch.cuda.current_stream", torch.cuda, "current_stream"),
            ("torch.Tensor.__torch_function__", torch.Tensor, "__torch_function__"),
            ("torch.Tensor.__torch_dispatch__", torch.Tensor, "__torch_dispatch__"),
            ("AuditMode.__torch_dispatch__", AuditMode, "__torch_dispatch__"),
            ("TorchDispatchMode.__enter__", TorchDispatchMode, "__enter__"),
            ("TorchDispatchMode.__exit__", TorchDispatchMode, "__exit__"),
            ("torch.Tensor.fill_", torch.Tensor, "fill_"),
            ("torch.Tensor.untyped_storage", torch.Tensor, "untyped_storage"),
            ("torch.Tensor.set_", torch.Tensor, "set_"),
            *((f"torch.Tensor.{name}", torch.Tensor, name) for name in (*HOST_READ_METHODS, "data_ptr")),
            ("torch.UntypedStorage.data_ptr", torch.UntypedStorage, "data_ptr"),
            ("torch._C._construct_storage_from_data_pointer", torch._C, "_construct_storage_from_data_pointer"),
            *((f"torch.{name}", torch, name) for name in RAW_MEMORY_BUILDERS),
        ]
        if device_module is not None and device_module is not torch.cuda:
            family = getattr(device_module, "__name__", "device").rsplit(".", 1)[-1]
            targets += [
                (f"torch.{family}.{attribute}", device_module, attribute)
                for attribute in ("synchronize", "Event", "current_stream")
                if hasattr(device_module, attribute)
            ]
        targets += [(f"{owner.__name__}.{attribute}", owner, attribute) for owner, attribute in wrapped]
        for name, owner, attribute in targets:
            self.captured[name] = (owner, attribute, owner.__dict__.get(attribute, getattr(owner, attribute, None)))
        # Every name the sandbox's own modules and classes bind (the audit's policy sets, its state object,
        # the harness's methods): rebinding one (guard.ALLOWED_ATEN widened, Harness._run_once wrapped to
        # forge the evidence it reports) is tampering, whatever the replacement does.
        for module in judge_modules:
            for attribute, value in vars(module).items():
                self.captured[f"{module.__name__}.{attribute}"] = (module, attribute, value)
                if isinstance(value, type) and value.__module__ == module.__name__:
                    for member, bound in vars(value).items():
                        self.captured[f"{value.__qualname__}.{member}"] = (value, member, bound)
        self.python_threads = threading.active_count()
        self.native_threads = native_thread_count()
        self.gc_callbacks = gc.callbacks
        self.native_threads_fixed = native_threads_fixed

    def violations(self) -> list[str]:
        problems = []
        for name, (owner, attribute, value) in self.captured.items():
            current = owner.__dict__.get(attribute, getattr(owner, attribute, None))
            if current is not value:
                problems.append(f"{name} was replaced")
        for name, (cls, wrapper) in self.hooks.items():
            if cls.__dict__.get(name.rsplit(".", 1)[-1]) is not wrapper:
                problems.append(f"{name} (launch hook) was replaced")
        if gc.callbacks is not self.gc_callbacks or gc.callbacks:
            # A callback runs at the next collection, wherever that falls: after the call's audit ended.
            problems.append("gc.callbacks was changed")
        if threading.active_count() > self.python_threads:
            problems.append(f"thread count grew from {self.python_threads} to {threading.active_count()}")
        elif self.native_threads_fixed and native_thread_count() > self.native_threads:
            problems.append(f"thread count grew from {self.native_threads} to {native_thread_count()} (native)")
        return problems


def install_interpreter_autotune_shim() -> None:
    """Under TRITON_INTERPRET without a GPU, Triton's autotuner has no benchmarker (no active driver) and
    raises; give it a host-clock one so honest ``@triton.autotune`` kernels run on the CPU interpreter."""
    from triton.runtime import autotuner

    def host_bench(function: Any, quantiles: Any = None, **_: Any) -> Any:
        started = time.perf_counter()
        function()
        elapsed_ms = (time.perf_counter() - started) * 1000
        return [elapsed_ms] * len(quantiles) if quantiles else elapsed_ms

    autotuner.Autotuner.do_bench = property(lambda self: host_bench)


def warm_up() -> None:
    """Pay the lazy imports before the job: the first TorchDispatchMode pulls in torch._dynamo (~800
    modules, seconds) and the first launch pulls in Triton's code generator. Touches no device."""
    import importlib

    with AuditMode():
        torch.empty(1)
    for name in (
        "triton.compiler.code_generator",
        "triton.language.extra.libdevice",
        "triton.experimental.gluon",
        "triton.runtime.interpreter",
        "triton.runtime.autotuner",
        # torch.compile's first use imports it, and it registers operators in prims' namespace, which the
        # audit hook refuses once the candidate loads: an honest wrapper under torch.compile would end there.
        "torch._inductor.inductor_prims",
    ):
        with contextlib.suppress(Exception):  # optional pieces differ between Triton versions
            importlib.import_module(name)


PLAIN_TENSOR = torch.Tensor


def not_plain(value: Any, path: str = "return") -> list[str]:
    """Names of outputs that are not plain dense tensors with real storage (EXPLOITS 10)."""
    problems: list[str] = []
    if isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            problems += not_plain(item, f"{path}[{index}]")
    elif isinstance(value, torch.Tensor):
        if type(value) is not PLAIN_TENSOR:
            problems.append(f"{path} is a {type(value).__qualname__}, not a plain torch.Tensor")
        elif value.layout != torch.strided or value.device.type == "meta":
            problems.append(f"{path} has no dense storage ({value.layout}, {value.device})")
        elif value.is_neg() or value.is_conj():  # resolve_neg's input handed back: its values, none computed
            problems.append(f"{path} is a lazily {'negated' if value.is_neg() else 'conjugated'} view")
    elif value is not None and not isinstance(value, (bool, int, float, complex)):
        problems.append(f"{path} is a {type(value).__qualname__}")
    return problems
