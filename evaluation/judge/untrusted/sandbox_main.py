"""The untrusted side: ``python -m evaluation.judge.untrusted.sandbox_main --cmd-fd N --res-fd M``.

Started by evaluation.judge.sandbox with a scrubbed environment and limits; where the judge is root it
first contains itself (confine.enter_sandbox: its own uid, namespaces and read-only view). It then imports
torch and triton, installs the launch hooks, says ``ready`` and waits (a pool can keep it warm),
then serves ONE job: load the candidate, run the calls the trusted side sends (inputs in, raw outputs back),
time them on a GPU. It never sees expected outputs, the comparison or the run's seed. Its stdout/stderr are
log files the trusted side truncates into evidence; results leave only through the ``--res-fd`` pipe.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback


def _drop_privileges() -> None:
    # Fallback when ``setpriv`` is missing: the trusted side asks for it through this variable.
    uid = os.environ.pop("KGB_SANDBOX_SETUID", "")
    if uid and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(int(uid))
        os.setuid(int(uid))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cmd-fd", type=int, required=True)
    parser.add_argument("--res-fd", type=int, required=True)
    parser.add_argument("--parent-pid", type=int, default=None)
    options = parser.parse_args()
    from evaluation.judge.untrusted.lifeline import die_with_parent

    view = os.environ.pop("KGB_SANDBOX_VIEW", "")
    if view:
        import json

        from evaluation.judge.untrusted.confine import ViewPlan, enter_sandbox

        die_with_parent(options.parent_pid)  # the judging process died: so does this keeper
        # This process stays behind as the keeper; what returns is the contained sandbox.
        enter_sandbox(ViewPlan(**json.loads(view)), close_in_keeper=[options.cmd_fd, options.res_fd])
    else:
        _drop_privileges()
        die_with_parent(options.parent_pid)  # the judging process died: so do we (armed after the uid change)

    import torch  # noqa: F401  (imported before the job arrives: that is the point of a warm sandbox)
    import triton  # noqa: F401

    from evaluation.judge import protocol, wire
    from evaluation.judge.untrusted import guard
    from evaluation.judge.untrusted.harness import Harness

    guard.warm_up()
    hooks = guard.install_launch_hooks()
    guard.install_host_read_counters()
    wire.send(options.res_fd, protocol.Ready(pid=os.getpid(), uid=os.getuid()).to_header())
    harness = Harness(options.cmd_fd, options.res_fd, hooks)
    try:
        harness.serve()
    except wire.PeerClosed:
        return 0
    except BaseException:  # the harness itself broke: say so on the private channel if it still can
        with contextlib.suppress(Exception):
            failure = protocol.HarnessFailure(error=traceback.format_exc()[-4000:])
            wire.send(options.res_fd, dict(failure.to_header(), token=harness.token))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
