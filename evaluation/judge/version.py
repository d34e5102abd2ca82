"""The judge's protocol version: which rules made a verdict.

Every run records the version that judged it (``JudgeResult.judge_version``, ``Run.judge_version``). Bump
``JUDGE_VERSION`` with every change that can alter a verdict or a speedup of the same kernel (a check added
or relaxed, a tolerance, what is timed and how), and say in ``HISTORY`` what changed: runs judged by an older
version show as stale, as runs of an older operator version do, until they are judged again.
"""

from __future__ import annotations

JUDGE_VERSION = 45
# Today's rules with the protocol stage on (a worker with KGB_PROTOCOL_TIMING=on): its runs carry it. A change
# to that stage alone bumps this one only; the next change to the rules takes the next free number (47).
PROTOCOL_STAGE_VERSION = 46

HISTORY: dict[int, str] = {
    1: "Verdicts recorded before runs carried a judge version.",
    2: "Containment by the operating system; a per-call limit of max(20 s GPU / 60 s CPU, 50 x the "
    "reference's time), suspended while Triton compiles.",
    3: "Convicted by behaviour: the static scan only notes names (a file is refused for what it does); "
    "host reads are budgeted (64 elements a call); seeds of at most two integers drawn from torch's "
    "generator are allowed; memory formats reach the kernel; interpreted launches are audited; floor_divide "
    "and div's rounding modes accept the correctly rounded float64 result at exact multiples. A failure of the "
    "kernel's process once its code has run is failed_runtime with its cause named (illegal address, device "
    "assertion, launch failure), never error.",
    4: "A half-precision output the reference's comparison refuses passes where every refused value equals "
    "the reference's formula computed in float64 and rounded once (the reference rounds its intermediates in "
    "half: one implementation's rounding), named in an exact_rounding check; the unwatched check of the "
    "protocol stage (version 5) skips calls that wait for the host.",
    5: "Version 4 with the protocol stage on (KGB_PROTOCOL_TIMING=on; off by default until its figures "
    "hold still on a GPU): the protocol's speedup (PROTOCOL.md section 6) beside the device-time one, over "
    "every timed case of the original's grid, the latency a caller sees after an L2 flush (no stream hold, "
    "no audit hooks inside the call), adaptive rounds, geometric mean; a kernel whose unaudited calls run "
    "well under its audited device time on the same case is rejected (timing_crosscheck).",
    6: "Version 5 with the protocol stage timed by triton.testing.do_bench's own loop (no wait between "
    "calls, unflushed warm-up calls, then flush, events and call, one synchronize; the median), the "
    "candidate and the reference batch by batch on the same sets: a loop that synchronised after every "
    "call ran a different race between host and device than do_bench does (KGB_PROTOCOL_WINDOW=caller "
    "or whole_call still selects the older loops); one input set; calls of 1 ms or more skip do_bench's "
    "five-call estimate and run at least 2 timed calls a batch.",
    7: "Version 6 with each source's cases timed by the original's own timer for that source (PROTOCOL.md "
    "section 6, VLLM_CUBLAS.md): ATen by do_bench's loop, the median; vLLM by the same loop, the mean; cuBLAS "
    "by calls back to back between two events after a tenth as many warm-ups, no L2 flush, the mean (up to "
    "the original's 100 calls a batch). The do_bench loop sizes its batches from each side's first call and "
    "one flush (no five-call estimate), 4 to 10 timed calls a batch on about 4 ms a case. The unwatched "
    "check's floor in the back-to-back loop is lowered by as much as the reference's calls ran under their "
    "flushed device time, at most 4 times (those calls find the L2 warm); where the candidate's audited "
    "calls held host time (their enqueue outlasted the stream hold) the floor is its kernels' own device "
    "time from one more audited call with events around each launch, where before nothing was compared.",
    8: "Version 4 with the device-time loop's probe call (one more audited call after the timed ones, events "
    "around each launch) spot-checked like a timed call where its figure is under 0.9 of the window's: its "
    "inputs must be the drawn set and its output the reference's, so a kernel that does less when probed is "
    "refused; it runs on a reference set, whose values no candidate call has seen.",
    9: "Version 7 on version 8's rules: the unwatched check holds a caller's latency to the smaller of the "
    "audited window and the probe call's kernels (their device time without the call's host time) on every "
    "case, where the probe's call passed its spot check; whether the window held host time (the host-bound "
    "mark, a race that moves with the host's load) decides nothing any more. One call on each of 4 random "
    "cases of the protocol grid comes back as a spot and must match the reference (its outputs were "
    "never compared before), so a kernel that does part of the work unwatched is refused; on those cases "
    "the reference is timed on sets of its own.",
    10: "Version 8 with a short device-side hold before each of the probe call's first 16 launches, so a "
    "launch after a host wait inside the call (a readback) queues behind it and its window holds the kernel "
    "alone, not the "
    "host's launch path: the probe's figure is smaller and steadier, so its call is spot-checked more often "
    "(an honest readback's probe read 0.04-0.10 ms for kernels of 0.016 ms, and the unwatched check of "
    "version 9 refused it twice in twelve judgements on the H200).",
    11: "Version 9 on version 10's rules.",
    12: "Version 11 with the do_bench loop's warm-up calls run exactly like timed ones "
    "(flush, events, call), at least 5 a batch where a call's estimate is under 0.1 ms, where before calls "
    "without a flush ran: a batch of a few launch-bound calls then times the steady state of do_bench's long "
    "loop rather than the start of a loop on an idle device (their figures moved up to 3x between runs).",
    13: "Version 12 with the do_bench loop's L2 flush run as do_bench runs it: the 256 MB zeroed as int32 (the "
    "kernel Triton's clear_cache launches), where before they were zeroed as bytes, another kernel whose "
    "duration sets the other side of the host-device race that loop reproduces.",
    14: "Version 13 with a head start before each batch of the do_bench loop: the device kept busy 0.3 ms by a "
    "device-side spin, so a short batch starts as do_bench's long loop runs once steady, with the device ahead "
    "of the host (a launch-bound call read its host's launch path in fewer processes than do_bench, not more).",
    15: "Version 13's loop again (version 14's head start withdrawn): in the sandbox on the H200 the head start "
    "read the kernel alone where do_bench read the host's launch path, on all ten operators compared, and "
    "hid the host's gaps between a call's launches, which a caller waits for.",
    16: "Version 10 with type promotion allowed around launches (torch.promote_types, torch.result_type, "
    "torch.can_cast: dtype arithmetic, no tensor data), where before the dispatch audit refused it as "
    "compute outside Triton (an honest stack choosing its output dtype was refused); on the CPU interpreter "
    "every store and atomic is checked against the memory the call may write, so a store out of bounds is a "
    "failed_runtime on the case that makes it, where before it crashed a later case or went unseen; a call "
    "whose every output is empty may launch no kernel (there is nothing to compute), where before it was "
    "refused as no Triton launch (an honest diff of order 2 along a dim of 1, on the H200).",
    17: "Version 15 on version 16's rules.",
    18: "Version 16 with the CPU interpreter's bounds check reading a store's mask by its truth, where before "
    "a mask of integer 0s and 1s (a block comparison and-ed with a scalar one) was taken as indices and an "
    "honest paged-cache kernel failed with an IndexError. (The smoke tier's derived twins of the public grid's "
    "structures change the records, so they bump the operators' versions, not this one.)",
    19: "Version 15 on version 18's rules.",
    20: "Version 18 with well-posed comparisons in the timing stage's spot checks too (a timed call of an "
    "honest fp32 huber_loss was refused on the H200 for values equal to the float64 answer rounded once, "
    "which correctness accepted), for every half-precision output of a call where before only a single one "
    "(rotary_embedding's query and key: a value after cancellation that the reference's staged half rounding "
    "put 25 ulps away), and for integer outputs against the exact value before rounding: either neighbour "
    "at a .5 tie (scaled_int8_quant, an honest kernel 1 off on 1 of 35,287 codes on the H200).",
    21: "Version 15 on version 20's rules.",
    22: "Version 20 with a record's exact formula giving an integer output as a (lowest, highest) pair where "
    "the formula rounds twice: scaled_int8_quant's dynamic asymmetric codes carry a zero point that is itself "
    "rounded, and where it sits at a tie a whole row may carry either neighbour (an honest kernel had 1.6 % "
    "of bf16 codes 1 off on the H200; it passes now, every case, scan on and off).",
    23: "Version 15 on version 22's rules.",
    24: "Version 22 with a record's exact formula giving a float output as a (lowest, highest) range where "
    "the formula's roundings leave the answer open: rotary_embedding after cancellation (x c - y s near 0) "
    "accepts any value a rotation rounding each product and the result once in the dtype can give, where "
    "before only the reference's staged half rounding passed (an honest kernel was 0.000244 off it on the "
    "H200); a kernel pairing the wrong elements is still refused.",
    25: "Version 15 on version 24's rules.",
    26: "Version 24 with views judged as views: an entry point whose schema returns an alias of an argument "
    "(-> Tensor(a): as_strided, expand, narrow, select, t, unsqueeze, reshape) is not ghost-replayed, since "
    "the right answer is the argument's own memory and a replay without launches returns it too (an honest "
    "as_strided returning a true view was refused); a random operator's draw of one value everywhere "
    "(bernoulli at p = 0.001 over 289 elements) is no evidence of a seed; float8 outputs compare in float32 "
    "(the comparison raised on the CPU, an error instead of a verdict); the smoke tier's twins of vLLM and "
    "cuBLAS records add, per size parameter, the smallest public case past every smoke size (a second K "
    "tile: a GEMM's tail mask bug passed the CPU before); the interpreter's float8 conversion is named as "
    "a known defect of it.",
    27: "Version 15 on version 26's rules.",
    28: "Version 26 with the CPU interpreter's float conversions mended in the sandbox: float32 to bfloat16 "
    "rounds to nearest even and float32/float16/bfloat16 to float8 as Hopper's cvt.rn.satfinite does, where "
    "Triton 3.6's interpreter truncates bf16 (and converts a bool, an integer or float64 to bf16 as bit "
    "patterns) and rounds fp8 ties away losing a carry (an honest "
    "pairwise_distance rounding its differences to bf16 as eager does failed on one draw in forty, 3 ulps "
    "off, blamed on bf16 arithmetic; honest fp8 quantisers failed on most draws), and a float launch argument "
    "is a float32 scalar there as on a GPU (it stayed a Python float: its methods raised, and a float16 "
    "tensor times it computed in float16); none of the three is named as the interpreter's any more. "
    "Composite ATen losses (binary_cross_entropy_with_logits, margin_ranking_loss) accept eager's staged half "
    "answer beside the float32 one: CUDA eager, the original's reference, rounds each of their ops in half "
    "too (two honest kernels imitating it were refused).",
    29: "Version 15 on version 28's rules.",
    30: "Version 28 with a half or float8 output's exact value within a few fp32 roundings of the midpoint "
    "between two values of its format taking either neighbour (as integer codes at a .5 tie since version "
    "20): an honest fp8 quantiser dividing exactly was a step from the reference, whose scale is rounded, "
    "at exact midpoints on the H200. (Exact formulas added to records, binary_cross_entropy_with_logits's "
    "staged range, reflection_pad1d_backward's half sums in any order, the fp8 quantisers' codes before "
    "rounding, change those operators' versions, not this one.)",
    31: "Version 15 on version 30's rules.",
    32: "Version 30 with a twin replay of every case a ghost replay runs for: the same call once more while "
    "Triton reads and writes only twins of its memory holding another draw of the case; outputs that are not "
    "the answer for the twins fail (rejected where they are the call's own answer). And the round-7 red "
    "teams' holes closed: an audit hook armed before the candidate "
    "loads ends its process on raw memory through ctypes, a fork, a thread, a heap walk (gc) or a tracer, and "
    "on torch.library registrations in ATen's namespace (rejected); every binding of the sandbox's own "
    "modules and classes and gc.callbacks are watched; tolist, numpy and __dlpack__ count against the "
    "host-read budget; a ghost replay reads back the real call's values; an operator the candidate defined "
    "(custom_op, triton_op) has its body audited, one outside ATen that existed before is work outside Triton; "
    "only a real kernel's launch pauses the audit; a device-full message counts only on a GPU the trusted "
    "side finds at least half full; a reply the trusted side cannot parse and a reason holding a lone "
    "surrogate or NUL no longer end as error. (affine_grid_generator's half range changes that operator's "
    "version, not this one.)",
    33: "Version 15 on version 32's rules.",
    34: "Version 32 with the twin replay's call held to every rule of the real call's: a twin replay that "
    "launches no Triton kernel is refused as the call would be (a cache keyed by the case's shape now ends "
    "there), and its error is told as a device fault, out of memory or an interpreter defect alike. A storage's "
    "data_ptr() leads into the twins as a tensor's does (an offset from the two is the view's own, and no "
    "address tells the replay apart), and torch laid over a bare address is refused (rejected). "
    "A call whose exact answer is its untouched in-place outputs (BLAS's quick return) may launch nothing. "
    "A ghost replay's no-op launches poison the memory they would have written that outlives calls (a "
    "scratch kept between calls), put back afterwards. Statistical records with deterministic answers "
    "(moe_align_block_size, its LoRA variant) get the twin replay, and their pure outputs are found as every "
    "record's are (moe_lora_align_block_size's empty slots are no longer poisoned). "
    "Lazily conjugated and negated views (_conj, conj, _neg_view) are views; torch.compile's prims operators "
    "load before the audit hook arms. A correctness request gets the per-call floor for each call of it that "
    "launches, and on the interpreter 3000 times the reference's time a call, not 1000 (an interpreted kernel "
    "near a minute a call timed out in its twin replay). A lazily negated or conjugated input (resolve_neg's, "
    "resolve_conj's) reaches the kernel with its bit and comes back with it (the wire dropped it, and every "
    "honest kernel was refused for changing its input); an output still carrying the bit is not a plain tensor.",
    35: "Version 15 on version 34's rules.",
    36: "Version 34 with a statistical record's pure outputs found with the call on the reference device, "
    "where the outputs are: on a GPU the check read the CPU draw beside CUDA outputs, and every judgement of "
    "rrelu_with_noise ended as error. (The GGUF a8 records' Q8_1 ties, either rounding of a code at a .5, "
    "changed the records themselves: their operator versions.)",
    37: "Version 15 on version 36's rules.",
    38: "Version 36 with the CPU interpreter's twin replay time-shared: every interpreted launch of a twin "
    "replay runs on the twins and again on the real memory, at the real addresses, so host math at a "
    "bare address (numpy's __array_interface__) reads the call's own inputs and never reaches the twins, "
    "where before it read the twins and passed; a budgeted host read there (.numpy(), __dlpack__) hands "
    "back a copy of the twin's elements, not memory beside them. Judgements on a GPU are unchanged.",
    39: "Version 15 on version 38's rules.",
    40: "Version 38 with the cuBLAS baseline timed again on GPUs: the audit hook (since version 32) ended the "
    "sandbox at the baseline's first ctypes call in the timing loop and every cuBLAS kernel was rejected once "
    "timed; a ctypes event now goes through where every frame on the stack is code the judge loaded before "
    "arming.",
    41: "Version 15 on version 40's rules.",
    42: "Version 41 with the protocol stage's original loops (do_bench's, calls back to back) calling Triton as a "
    "plain process does: Triton's own JITFunction.run, each compiled launch counted by Triton's launcher hook; "
    "the judge's wrapper (0.7 us a launch on an idle core) read as the kernel's time on launch-bound calls. "
    "Verdicts and the device-time stage unchanged (version 40).",
    43: "Version 40 with a compiled handle's launches (compiled = kernel.warmup(..., grid=...), then "
    "compiled[grid](...), which skips JITFunction.run) counted, turned into no-ops in a ghost replay and "
    "bracketed in a probe call as JITFunction.run's are: an honest kernel of that style was refused as "
    "launching nothing (GPUs only; the interpreter compiles nothing).",
    44: "Version 42 on version 43's rules.",
    45: "Version 43 with the judge's own out-of-memory on a device its neighbours filled told as ours (error, "
    "judged again) where it happens once the kernel has run in the sandbox (loading a timed case's inputs: it "
    "was the kernel's failed_runtime) and on the trusted side (a bare infrastructure failure, not retried).",
    46: "Version 44 on version 45's rules.",
}
