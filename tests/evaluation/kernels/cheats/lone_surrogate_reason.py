"""Attempt t02 (aten::cos, verdict taxonomy / recording): a kernel that fails by raising an exception whose
message holds a lone UTF-16 surrogate ('\\ud800'). The harness's JSON header escapes it, the trusted side's
json.loads gives back a str with the surrogate, and it lands verbatim in JudgeResult.reason (and in
environment['candidate_output'] if printed). That str cannot be encoded as UTF-8: printing it, or storing it
in SQLite / PostgreSQL when the worker records the result (services.run_record_result), raises
UnicodeEncodeError outside the judge: the failed verdict cannot be recorded."""
import torch
import triton
import triton.language as tl


@triton.jit
def _noop(x):
    pass


def cos(self):
    _noop[(1,)](self)
    raise RuntimeError("broken kernel \ud800\udfff\ud800")


def cos_out(self, *, out):
    return cos(self)
