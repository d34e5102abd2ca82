"""Attempt t01 (aten::cos, verdict taxonomy): a kernel that fails (returns the wrong thing) but turns its
failure into `error`. It lifts Python's int-to-str digit limit in its own process
(sys.set_int_max_str_digits(0)) and returns a 5,000-digit int. The harness's wire.send json-encodes it
happily; on the trusted side wire.parse_json -> json.loads raises a plain ValueError ('Exceeds the limit
(4300 digits) for integer string conversion'), which parse_json does not turn into a WireError
(it catches only UnicodeDecodeError, JSONDecodeError, RecursionError); nothing in session.request catches
it, and runner.judge_with's `except Exception` reports 'judge infrastructure failure' = status `error`."""
import sys
import torch
import triton
import triton.language as tl


@triton.jit
def _noop(x):
    pass


def cos(self):
    sys.set_int_max_str_digits(0)
    _noop[(1,)](self)
    return 10 ** 5000


def cos_out(self, *, out):
    return cos(self)
