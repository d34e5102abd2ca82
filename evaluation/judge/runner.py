"""``judge(job)``: the trusted side of one judgement, from static scan to verdict.

The trusted side draws a secret seed, builds every case's inputs from it, computes references on private
copies, sends the inputs to a fresh sandbox, and compares what comes back. The sandbox never holds an
expected output, the comparison or the seed. See docs/judge.md for the whole design.

``run`` reads as the protocol: scan, start the sandbox, correctness (correctness.py), timing (device time
over a few large cases, timing_trusted.py; then the protocol's caller latency over every timed case,
timing_protocol.py; then one fresh case checked again), verdict. Each stage works on the public
JudgementContext (context.py) and stops the judgement by raising a Verdict (verdicts.py); the sandbox
session (session.py) owns the process, the device lock and the deadlines.
"""

from __future__ import annotations

import os
import random
import time
import traceback
from collections.abc import Mapping

import torch

from evaluation.catalog.spec import Case, OperatorSpec
from evaluation.judge import protocol, wire
from evaluation.judge.context import (
    PROTOCOL_WINDOWS,
    JudgementContext,
    JudgeOptions,
    TimingOptions,
    device_memory_budget,
    protocol_timing_options,
)
from evaluation.judge.correctness import run_correctness
from evaluation.judge.device_lock import DeviceBusy
from evaluation.judge.job import CaseResult, JudgeJob, JudgeResult
from evaluation.judge.records import find_operator
from evaluation.judge.sandbox import Sandbox
from evaluation.judge.session import CORRECTNESS_NICE
from evaluation.judge.static_scan import scan_source
from evaluation.judge.timed_requests import seconds_in_other_holds
from evaluation.judge.timing_protocol import run_protocol_timing, ship_first_chunk_ahead
from evaluation.judge.timing_trusted import recheck_after_timing, run_timing
from evaluation.judge.verdicts import (
    DEVICE_FULL,
    Verdict,
    check_integrity,
    derive_seed,
    device_was_full_by_our_reading,
    import_failure_reason,
)

__all__ = ["JudgeOptions", "TimingOptions", "judge", "judge_with"]

# Loading a kernel: the per-call floor plus this (device context, memory caps, the module's own import).
START_ALLOWANCE_S = 20.0


def judge(job: JudgeJob) -> JudgeResult:
    """Judge one kernel file. Never raises for anything the kernel does; ``error`` means our fault.

    ``KGB_STATIC_SCAN=off`` in a worker's environment judges without the static scan: for proving, on a
    private deployment, that containment and the run-time checks hold on their own (they must).
    ``KGB_PROTOCOL_TIMING=on`` also measures the protocol's speedup (timing_protocol.py): off by default
    until its figures hold still on a GPU (docs/judge.md); a worker that measures it judges by version
    PROTOCOL_STAGE_VERSION. ``KGB_HOST_WAIT=block`` makes the judge's processes sleep while they wait for
    the GPU outside timed loops (``yield``: spin, offering the core to others on each turn),
    ``KGB_STREAM_HOLD=released`` has the timed loops' stream holds ended by the host
    (JudgeOptions.host_wait, .stream_hold: off by default, measured in docs/judge.md)."""
    return judge_with(job, options_from_environment(os.environ))


def options_from_environment(environ: Mapping[str, str]) -> JudgeOptions:
    """The worker's switches (judge's docstring) as JudgeOptions; anything unrecognised means the default."""
    options = JudgeOptions(static_scan=environ.get("KGB_STATIC_SCAN", "on").lower() != "off")
    host_wait = environ.get("KGB_HOST_WAIT", "auto").lower()
    if host_wait in ("yield", "block"):
        options.host_wait = host_wait
    if environ.get("KGB_STREAM_HOLD", "spin").lower() == "released":
        options.stream_hold = "released"
    if environ.get("KGB_PROTOCOL_TIMING", "off").lower() == "on":
        # KGB_PROTOCOL_WINDOW: one loop for every source instead of each source's own, for comparing them
        # (context.PROTOCOL_WINDOWS, docs/judge.md).
        window = environ.get("KGB_PROTOCOL_WINDOW", "original")
        options.protocol_timing = protocol_timing_options(window if window in PROTOCOL_WINDOWS else "original")
    return options


def judge_with(job: JudgeJob, options: JudgeOptions) -> JudgeResult:
    try:
        return run(JudgementContext(job, options))
    except Exception as failure:
        trace = traceback.format_exc()[-3000:]
        # The judge's own allocation on a device its neighbours filled (seen on an H100 with 13 judges): our
        # side failed, transiently; judged again, never a verdict on the kernel.
        full = isinstance(failure, torch.OutOfMemoryError) and device_was_full_by_our_reading(
            str(failure), job.device_type
        )
        if full:
            return JudgeResult(status="error", reason=f"{DEVICE_FULL}:\n{trace}", retryable=True)
        return JudgeResult(status="error", reason="judge infrastructure failure:\n" + trace)


def run(judgement: JudgementContext) -> JudgeResult:
    """The judgement, top to bottom: what it needs, then the stages, then the verdict."""
    job, session = judgement.job, judgement.session
    try:
        judgement.spec = judgement.options.spec or find_operator(job.operator_id)
    except KeyError as error:
        return JudgeResult(status="error", reason=str(error.args[0]))
    judgement.spec_is_registered = judgement.options.spec is None or is_registered(judgement.options.spec)
    if job.device_type != "cpu" and judgement.backend.is_available():
        judgement.reference_device = torch.device(job.device_type)
        judgement.environment["host_wait"] = judgement.backend.set_host_wait(judgement.options.host_wait)
    judgement.environment["reference_device"] = str(judgement.reference_device)
    judgement.trusted_cache_bytes, judgement.sandbox_keep_alive_bytes = device_memory_budget(
        judgement.backend.total_memory() if judgement.reference_device.type != "cpu" else None,
        job.judges_sharing_device,
    )
    judgement.cases = collect_cases(judgement)
    try:
        scan(judgement)
        if not judgement.cases:
            raise Verdict("failed_correctness", "the operator has no cases in the requested tiers")
        start_sandbox(judgement)
        run_correctness(judgement)  # every case: inputs, the sandbox's calls, the comparisons
        if job.measure_timing and (job.device_type != "cpu" or judgement.options.timing_on_cpu_for_tests):
            # The protocol stage's first chunk rides in the device-time stage's exclusive hold: one hold, not two.
            ship_first_chunk_ahead(judgement)
            started = time.monotonic()
            run_timing(judgement)  # takes the device alone for its timed loops (device_lock)
            # Less the protocol stage's loops that ran in its hold: those seconds are that stage's.
            elapsed = time.monotonic() - started - seconds_in_other_holds(judgement)
            judgement.stage_seconds["timing"] = round(elapsed, 4)
            run_protocol_timing(judgement)  # the paper's speedup: every timed case, caller latency
            recheck_after_timing(judgement)
        else:
            judgement.check(
                "timing",
                "skipped",
                "timing off for this job" if job.device_type != "cpu" else "the CPU interpreter's times mean nothing",
            )
    except Verdict as verdict:
        return verdict_result(judgement, verdict)
    except DeviceBusy:
        return judgement.result(
            "error",
            f"other judgements on this host held the GPU for over "
            f"{job.device_wait_limit_s:g} s in all (raise the worker's "
            "KGB_DEVICE_WAIT_LIMIT_S or lower its --concurrency)",
            retryable=True,
        )
    finally:
        stop_sandbox(judgement)
        if judgement.reference_device.type != "cpu":
            judgement.backend.release_cached_memory()
        if session.device_lock is not None:
            judgement.stage_seconds["device_wait"] = round(session.device_lock.waited_s, 4)
            session.device_lock.close()
    return judgement.result("passed", f"all {len(judgement.cases)} cases passed")


def verdict_result(judgement: JudgementContext, verdict: Verdict) -> JudgeResult:
    """The result of a judgement that a stage stopped: its failed case and check recorded."""
    failed_case = None
    if verdict.case is not None:
        failed_case = {
            "case_id": verdict.case.case_id,
            "tier": verdict.tier,
            "params": dict(verdict.case.params),
            "message": verdict.message,
        }
        judgement.case_results.append(
            CaseResult(
                case_id=verdict.case.case_id,
                tier=verdict.tier,
                params=dict(verdict.case.params),
                passed=False,
                message=verdict.message[-2000:],
            )
        )
    if verdict.check:
        judgement.check(
            verdict.check,
            "failed",
            verdict.message if verdict.case is None else f"{verdict.case.case_id}: {verdict.message}",
        )
    return judgement.result(verdict.status, verdict.reason, failed_case, retryable=verdict.retryable)


def collect_cases(judgement: JudgementContext) -> list[tuple[str, Case]]:
    cases: list[tuple[str, Case]] = []
    for tier in judgement.job.tiers:
        rng = random.Random(derive_seed(judgement.secret, "held_out")) if tier == "held_out" else None
        cases.extend((tier, case) for case in judgement.spec.cases(tier, rng))
    return cases


def scan(judgement: JudgementContext) -> None:
    if not judgement.options.static_scan:
        judgement.check("static_scan", "skipped", "switched off for this judgement (KGB_STATIC_SCAN=off or a test)")
        return
    found = scan_source(judgement.job.source_code)
    if found.syntax_error:
        raise Verdict("failed_compile", f"syntax error: {found.syntax_error}")
    if found.findings:
        # Names only: the judgement goes on, and what the kernel does decides (see static_scan).
        notes = "; ".join(str(finding) for finding in found.findings[:8])
        judgement.check("static_scan", "noted", f"names only, deciding nothing (what runs is judged): {notes}")
        return
    judgement.check("static_scan", "passed")


def start_sandbox(judgement: JudgementContext) -> None:
    """A sandbox for this judgement, ready, with the kernel file loaded and its entry points found."""
    job, session = judgement.job, judgement.session
    started = time.monotonic()
    sandbox = session.sandbox = new_sandbox(judgement)
    judgement.environment["sandbox"] = {
        "launcher": sandbox.launcher,
        "applied": sandbox.protections.applied,
        "unavailable": sandbox.protections.unavailable,
    }
    if sandbox.view:
        judgement.environment["sandbox"]["view"] = sandbox.view
    try:
        if sandbox.ready_seconds is None:
            ready = sandbox.wait_ready(session.deadline)
            judgement.environment["sandbox"]["uid"] = ready.uid
            for key, value in (("prewarm_s", ready.prewarm_s), ("prewarm_error", ready.prewarm_error)):
                if value is not None:
                    judgement.environment["sandbox"][key] = value
    except wire.ChannelTimeout:
        raise Verdict("error", "the sandbox did not start within the budget") from None
    except (wire.PeerClosed, wire.WireError):
        raise Verdict(
            "error", f"the sandbox failed to start ({sandbox.exit_status()}): {sandbox.logs()['stderr'][-1500:]}"
        ) from None
    judgement.stage_seconds["process_start"] = round(time.monotonic() - started, 4)
    if job.device_type != "cpu" and os.geteuid() == 0:
        # Many judges share a GPU host's cores; a timed loop that waits for the CPU holds the GPU alone
        # for longer and stalls every other judge (on the H200, 16 judges on 16 cores: 41 ms a timing
        # iteration for a 0.08 ms kernel). Correctness and compiling run niced; timing (run_timing) runs
        # ahead of everything. Only root can raise a priority again, so other users change nothing.
        judgement.environment["sandbox"]["nice"] = (
            CORRECTNESS_NICE if sandbox.set_priority(CORRECTNESS_NICE) else "unchanged"
        )
    started = time.monotonic()
    entry_points = sorted({case.entry_point for _, case in judgement.cases})
    # Two requests: "start" sets up the device with only the judge's code in the process; "load" imports the
    # candidate. A harness failure in the first is ours (an error); from the second on, the process has run
    # the kernel's code and a failure there is the kernel's (Session.request).
    started_reply: protocol.Started = session.request(
        protocol.Start(
            token=sandbox.token,
            device=sandbox_device(job.device_type),
            memory_fraction=job.device_memory_fraction,
            keep_alive_bytes=judgement.sandbox_keep_alive_bytes,
            timing=job.measure_timing,
            host_wait=judgement.options.host_wait,
            stream_hold=judgement.options.stream_hold,
        ),
        [],
        None,
        call_limit_s=job.call_limit_s(0.0) + START_ALLOWANCE_S,
    )[0]
    judgement.environment.update(started_reply.environment())
    loaded: protocol.Loaded = session.request(
        protocol.Load(source=job.source_code, entry_points=tuple(entry_points)),
        [],
        None,
        call_limit_s=job.call_limit_s(0.0) + START_ALLOWANCE_S,
    )[0]
    judgement.stage_seconds["compile"] = round(time.monotonic() - started, 4)
    if not loaded.ok:
        if loaded.missing:
            raise Verdict("failed_compile", loaded.error)
        raise Verdict("failed_compile", import_failure_reason(loaded.error))
    check_integrity(list(loaded.integrity), None, "")
    judgement.check("entry_points", "passed", ", ".join(entry_points))


def new_sandbox(judgement: JudgementContext) -> Sandbox:
    job, options = judgement.job, judgement.options
    if options.sandbox_factory is not None:
        return options.sandbox_factory(job.device_type)
    if options.launcher == "forkserver":
        from evaluation.judge.forkserver import ForkServerError, shared_forkserver

        try:
            server = shared_forkserver(job.device_type)
            if job.device_type != "cpu" and options.isolate:
                from evaluation.judge.pool import shared_spare

                return shared_spare(job.device_type, server)  # warmed during the last judgement
            return Sandbox(job.device_type, isolate=options.isolate, forkserver=server)
        except ForkServerError as error:
            judgement.environment["forkserver_error"] = str(error)
    return Sandbox(job.device_type, isolate=options.isolate)


def sandbox_device(device_type: str) -> str:
    return "cpu" if device_type == "cpu" else f"{device_type}:0"


def stop_sandbox(judgement: JudgementContext) -> None:
    sandbox = judgement.session.sandbox
    if sandbox is None:
        return
    judgement.environment["candidate_output"] = sandbox.logs()
    sandbox.close()
    if sandbox.lease is not None and "sandbox" in judgement.environment:
        # When this sandbox held its identity (wall clock, seconds): no other sandbox had its uid meanwhile.
        judgement.environment["sandbox"]["identity_held"] = [sandbox.leased_at, time.time()]


def is_registered(spec: OperatorSpec) -> bool:
    """Whether ``spec`` is the catalog's own record for its operator (the one a sandbox finds by id), not a
    record a test or a script built: only then may the sandbox draw a case's inputs from it."""
    try:
        return find_operator(spec.operator_id) is spec
    except KeyError:
        return False
