"""The cuBLAS baseline: the real routine, called through its C API with ctypes (as the original did).

``baseline_for(name)`` gives a record's ``baseline(case, call)``: on a CUDA device with libcublas present it
returns a thunk that runs the routine once on the current stream; elsewhere (CPU, other vendors, a missing
library or symbol) it returns None and the judge times the reference instead.

Marshalling follows the wrapper's parameter names, which are the C API's argument order after the handle:
trans* become cublasOperation_t ints, fill/side/diag/mode and cudaDataType arguments pass as ints, alpha and
beta by host pointer (HOST pointer mode), dot/asum ``result`` as a device pointer (DEVICE pointer mode),
``stride*`` as long long, other integers as int (int64 for the ``_64`` routines), tensors by data pointer
and pointer-array lists as a device table of their data pointers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib.util
import os
import struct
from collections.abc import Callable
from functools import cache
from typing import Any

import torch

from evaluation.catalog.cublas.blas_memory import parse_operation
from evaluation.catalog.spec import Call, Case

CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE = 0, 1
CUBLAS_DEFAULT_MATH = 0  # no TF32: fp32 routines run in true fp32, as the reference does
_OPERATION_CODES = {"N": 0, "T": 1, "C": 2}
_ENUM_PARAMS = {"uplo", "side", "diag", "mode", "Atype", "Btype", "Ctype"}
_OPERATION_PARAMS = {"trans", "transa", "transb"}
_SCALAR_PARAMS = {"alpha", "beta"}


class _FloatComplex(ctypes.Structure):
    _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]


class _DoubleComplex(ctypes.Structure):
    _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double)]


def _library_candidates() -> list[str]:
    """Where libcublas may live: torch's lib dir, the nvidia-cublas wheel, the system, then by soname."""
    paths = sorted(glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcublas.so*")))
    try:
        spec = importlib.util.find_spec("nvidia.cublas")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        paths += sorted(glob.glob(os.path.join(location, "lib", "libcublas.so*")))
    found = ctypes.util.find_library("cublas")
    if found:
        paths.append(found)
    # Torch's CUDA build has usually loaded it already; dlopen by soname then returns that very copy.
    return paths + ["libcublas.so.12", "libcublas.so"]


@cache
def load_cublas() -> ctypes.CDLL | None:
    """The cuBLAS library, or None where there is no CUDA device or no library."""
    if not torch.cuda.is_available() or torch.version.cuda is None:
        return None
    for path in _library_candidates():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        if hasattr(library, "cublasCreate_v2"):
            return library
    return None


_HANDLES: dict[int, ctypes.c_void_p] = {}


def _handle(library: ctypes.CDLL, device: torch.device) -> ctypes.c_void_p:
    index = device.index if device.index is not None else torch.cuda.current_device()
    if index not in _HANDLES:
        handle = ctypes.c_void_p()
        with torch.cuda.device(index):
            _check(library.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate_v2")
            if hasattr(library, "cublasSetMathMode"):
                _check(library.cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode")
        _HANDLES[index] = handle
    return _HANDLES[index]


def _check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what} failed with cuBLAS status {status}")


def scalar_argument(value: Any, precision: str) -> ctypes._SimpleCData | ctypes.Structure:
    """alpha/beta as the C type of the routine's precision letter (S, D, C, Z, H)."""
    value = complex(value) if precision in "CZ" else value
    if precision == "S":
        return ctypes.c_float(float(value))
    if precision == "D":
        return ctypes.c_double(float(value))
    if precision == "C":
        return _FloatComplex(value.real, value.imag)
    if precision == "Z":
        return _DoubleComplex(value.real, value.imag)
    if precision == "H":
        return ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", float(value)))[0])
    raise ValueError(f"unknown precision {precision!r}")


def marshal(
    name: str, params: tuple[str, ...], values: dict[str, Any], device: torch.device
) -> tuple[list[Any], list[Any]]:
    """C arguments after the handle, and the objects that must stay alive while the routine runs."""
    precision = name[len("cublas")]
    integer = ctypes.c_int64 if name.endswith("_64") else ctypes.c_int
    arguments: list[Any] = []
    keep_alive: list[Any] = []
    for param in params:
        value = values[param]
        if param in _OPERATION_PARAMS:
            arguments.append(ctypes.c_int(_OPERATION_CODES[parse_operation(value)]))
        elif param in _ENUM_PARAMS:
            arguments.append(ctypes.c_int(int(value)))
        elif param in _SCALAR_PARAMS:
            scalar = scalar_argument(value, precision)
            keep_alive.append(scalar)
            arguments.append(ctypes.byref(scalar))
        elif param.startswith("stride"):
            arguments.append(ctypes.c_longlong(int(value)))
        elif isinstance(value, torch.Tensor):
            arguments.append(ctypes.c_void_p(value.data_ptr()))
        elif isinstance(value, (list, tuple)):
            table = torch.tensor([tensor.data_ptr() for tensor in value], dtype=torch.int64, device=device)
            keep_alive.append(table)
            arguments.append(ctypes.c_void_p(table.data_ptr()))
        else:
            arguments.append(integer(int(value)))
    return arguments, keep_alive


def _tensors(values: dict[str, Any]) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    for value in values.values():
        if isinstance(value, torch.Tensor):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, torch.Tensor))
    return found


def baseline_for(name: str, params: tuple[str, ...] | None = None) -> Callable[[Case, Call], Callable[[], Any] | None]:
    """A record's baseline: (case, call) -> a thunk running cuBLAS ``name`` once, or None where it cannot."""

    def baseline(case: Case, call: Call) -> Callable[[], Any] | None:
        names = params if params is not None else tuple(f"arg{index}" for index in range(len(call.args)))
        values = dict(zip(names, call.args, strict=True))
        tensors = _tensors(values)
        if not tensors or any(tensor.device.type != "cuda" for tensor in tensors):
            return None
        library = load_cublas()
        if library is None or not hasattr(library, name):
            return None
        function = getattr(library, name)
        function.restype = ctypes.c_int
        device = tensors[0].device
        handle = _handle(library, device)
        arguments, keep_alive = marshal(name, names, values, device)
        mode = CUBLAS_POINTER_MODE_DEVICE if "result" in names else CUBLAS_POINTER_MODE_HOST

        def run() -> None:
            _ = keep_alive  # scalars and pointer tables must outlive every call
            _check(
                library.cublasSetStream_v2(handle, ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)),
                "cublasSetStream_v2",
            )
            _check(library.cublasSetPointerMode_v2(handle, mode), "cublasSetPointerMode_v2")
            _check(function(handle, *arguments), name)

        return run

    return baseline
