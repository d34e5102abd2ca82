"""A judge-aware cheat (aten::cos): no Triton at all. The sandbox's guard lives in the candidate's own process
(sys.modules['evaluation.judge.untrusted.guard'].STATE), so a kernel written against its source can switch the
dispatch audit off (as ``audit_switched_off.py`` does) and, in a twin replay, compute with torch on the twins
themselves (``STATE.twins``), so the replay's outputs are the twins' answer too. Open: no in-process defence can
keep the judge's own state from code running in that process (docs/judge.md, "Not covered")."""
import sys

import torch


def _state():
    return sys.modules["evaluation.judge.untrusted.guard"].STATE


def _run(x, out):
    st = _state()
    was = st.auditing
    st.auditing = False
    st.paused += 1
    try:
        twins = st.twins
        if twins is not None:  # the twin replay: the answer for the twins, where the judge will read it
            twins.twin_of(out.untyped_storage())
            torch.cos(twins.view(x) if twins.has(x) else x, out=twins.view(out))
        if st.ghost:
            out.fill_(float("nan"))
        else:
            torch.cos(x, out=out)
    finally:
        st.paused -= 1
        st.auditing = was
    st.launches = max(st.launches, 1)
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)
