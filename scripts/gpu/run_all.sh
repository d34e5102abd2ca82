#!/usr/bin/env bash
# Every GPU figure the judge and catalog issues ask for, in two device calls of about 6 and 9 minutes; every
# step runs under its own time cap, so a slow step never hides the others. From the repository root:
#
#     bash scripts/gpu/run_all.sh judge            # fixtures and cheats, do_bench agreement, 5-repeat CV
#     bash scripts/gpu/run_all.sh verdicts         # every fixture scan on, every cheat scan off, the corpus
#     bash scripts/gpu/run_all.sh defences [S] [F] [R] [ONLY] # the run-time defences on honest kernels: the
#                                   # corpus on the smoke tier scan off (S, 160 s), every fixture (F, 140),
#                                   # the corpus files whose path holds ONLY (round7) on the grids (R, 110)
#     bash scripts/gpu/run_all.sh round [ONLY] [S] [F] # the composite losses' CUDA eager against CPU eager
#                                   # (composite_half_check.py, 60 s), the corpus files whose path holds ONLY
#                                   # (a blind round: round4), scan on and off, in S seconds (260), then every
#                                   # fixture (F, 240)
#     bash scripts/gpu/run_all.sh catalog [SECONDS] [FILL] # every reference kernel, public + held-out,
#                                   # timed, $KGB_GPU_JOBS at once (wall time = submission throughput); FILL:
#                                   # that many kernels in all (typical ones judged twice), e.g. 110
#     bash scripts/gpu/run_all.sh batch            # fork-server sandboxes against a fresh process per kernel
#     bash scripts/gpu/run_all.sh throughput [S] [END] # 110 kernels in S seconds, then 20 operators
#                                                   # against the naive design until END seconds (one call)
#     bash scripts/gpu/run_all.sh submission [S]   # the 110-kernel submission alone, in S seconds
#     bash scripts/gpu/run_all.sh closing [S] [END] # the submission, then do_bench agreement (LONG10)
#     bash scripts/gpu/run_all.sh recheck a,b,c    # those kernels, scan-off cheats, do_bench, CV (6 min)
#     bash scripts/gpu/run_all.sh final            # every kernel (LPT order), scan-off cheats, do_bench on
#                                                   # long kernels (9.5 min)
#     bash scripts/gpu/run_all.sh repeat [ROUNDS] [OPS] [CAP] # long kernels (or OPS) judged 1 + ROUNDS
#                                                   # times in one call: per-operator CV (cap 540 s)
#     bash scripts/gpu/run_all.sh spread [CAP]     # the same for the seven operators whose CV across
#                                                   # machines was over 1 % (SPREAD7; cap 330 s)
#     bash scripts/gpu/run_all.sh submission_spread [S] [END] # both in one call (END 565 s)
#     bash scripts/gpu/run_all.sh containment [OLD] # hostile kernels on the GPU (scan on and off), then the
#                                   # cost of containment: sandbox start and the 20-operator submission,
#                                   # judged by this checkout and by OLD (an older checkout) alternately
#     bash scripts/gpu/run_all.sh protocol [S]     # the judge's protocol pass (PROTOCOL.md 6): a smoke of
#                                   # 3 kernels (exit 1 unless all pass with a protocol speedup), the
#                                   # 110-kernel submission in S seconds (330), the protocol speedup
#                                   # against do_bench on AGREE10, then the fixtures if time is left (9.7 min;
#                                   # $OUT/run.log, if the caller tees there, is kept out of the tar)
#     bash scripts/gpu/run_all.sh agree_submission [S] [END] # launch overhead, protocol vs do_bench on AGREE10
#                                                   # (S seconds), then the 110-kernel submission until END
#     bash scripts/gpu/run_all.sh restructure_verdicts OLD # the restructure rounds, fixtures, corpus (one call)
#     bash scripts/gpu/run_all.sh agree_quiet [OPS] [S] # protocol vs do_bench judged one at a time, do_bench twice
#     bash scripts/gpu/run_all.sh agree_interleaved [OPS] [S] # agree_quiet, each operator judged just
#                                                   # before its do_bench, the host's launch time probed
#     bash scripts/gpu/run_all.sh agree_verdicts [S] # agree_quiet on AGREE10, the fixtures, the corpus (one call)
#     bash scripts/gpu/run_all.sh parity [OPS] [S]   # do_bench, the judge's loop, with hooks, in one process;
#                                                   # then OPS judged against do_bench (agree_quiet)
#     bash scripts/gpu/run_all.sh protocol_submission [S] [END] # the 110-kernel submission with the protocol
#                                                   # stage on, then AGREE10 against do_bench 10 at once
#     bash scripts/gpu/run_all.sh sources_submission [S] [END] # the protocol stage with each source's own
#                                                   # timer: a smoke of one kernel per source, the 110-kernel
#                                                   # submission (S seconds), then cuBLAS and vLLM operators
#                                                   # against the original's timers for them until END
#     bash scripts/gpu/run_all.sh probe_parity [OPS] [S] # the unwatched check's two fixtures (the readback,
#                                                   # fast_when_unwatched) three times scan on and off, the
#                                                   # back-to-back loop against the original's in one plain
#                                                   # process (back_to_back_parity.py), then OPS judged one
#                                                   # at a time against the original's timers (S seconds)
#     bash scripts/gpu/run_all.sh verdicts_probe [END] [COPIES] # both timing stages on: every fixture (scan on,
#                                                   # cheats scan off too), the corpus, then the unwatched
#                                                   # check's fixtures again in rounds until END seconds (585),
#                                                   # each judged COPIES times at once (1), and what the
#                                                   # check compared for the readback (probe_figures.py)
#     bash scripts/gpu/run_all.sh submission_agree [S] [END] # the 110-kernel submission with the protocol stage
#                                                   # on (S seconds), then agree_quiet on AGREE10 until END
#     bash scripts/gpu/run_all.sh recheck_submission_agree FIXTURES ONLY [S] [END] # after fixes: those
#                                                   # fixtures and corpus files (substrings), the 110-kernel
#                                                   # submission with the protocol stage on (S seconds), then
#                                                   # agree_quiet on AGREE10 until END
#     bash scripts/gpu/run_all.sh corpus_submission_parity ONLY [S] [END] # after fixes to the timing path:
#                                                   # the corpus files whose paths hold ONLY (in
#                                                   # $KGB_CORPUS_S seconds, 70 by default), the 110-kernel
#                                                   # submission with the protocol stage on (S seconds), the
#                                                   # cuBLAS parity with and without the judge's launch hooks,
#                                                   # then agree_quiet on AGREE10 until END
#     bash scripts/gpu/run_all.sh cublas_parity_submission [END] # every cuBLAS reference kernel timed,
#                                                   # the cuBLAS parity with and without the judge's hooks,
#                                                   # then the 110-kernel submission until END (470)
#     bash scripts/gpu/run_all.sh unwatched_submission [S] [END] [ROUNDS] # the unwatched check's fixtures in
#                                                   # ROUNDS rounds, the submission with the protocol stage on,
#                                                   # then back_to_back_parity.py until END seconds
#     bash scripts/gpu/run_all.sh closing_submission [S] [END] # the unwatched check's fixtures once, the
#                                                   # submission with the protocol stage on (S seconds), then
#                                                   # agree_quiet on AGREE10 until END seconds
#     bash scripts/gpu/run_all.sh judges_compare [S] [A] [B] # the 110-kernel submission with the protocol
#                                                   # stage on, A judges at once then B (12 and 16), S seconds
#                                                   # each (280): each line says when it finished, so the two
#                                                   # compare at equal elapsed time even when cut off
#     bash scripts/gpu/run_all.sh draw_compare OLD [S] # the 110-kernel submission with the protocol stage
#                                                   # on, 16 judges, S seconds (240) by this checkout, then
#                                                   # by OLD (e.g. .old from prepare_old_checkout.sh): each
#                                                   # line says when it finished; judge-seconds compared
#                                                   # over the kernels both judged (compare_draws.py)
#     bash scripts/gpu/run_all.sh unwatched_ab OLD [ROUNDS] # the unwatched check's fixtures (scan on
#                                                   # and off), judged by this checkout then by OLD, ROUNDS
#                                                   # times (4) alternately: does a change move its verdicts
#     bash scripts/gpu/run_all.sh restructure OLD  # the 20-operator submission judged by OLD (an older
#                                   # checkout, e.g. .old from prepare_old_checkout.sh) and by this one
#                                   # with KGB_PROTOCOL_TIMING=off, alternately, 2 rounds each (5 min)
#
# Logs and JSON go to $OUT (or ./gpu-out); the summary lines of every step are printed again at the end.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export OUT PYTHONPATH=$PWD PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
PART=${1:-judge}
JOBS=${KGB_GPU_JOBS:-12}
export KGB_JUDGES_PER_DEVICE=$JOBS  # each judge's device-memory allowance (runner.device_memory_budget)
POINTWISE=aten::cos,aten::cosh,aten::erfc,aten::floor,aten::hardsigmoid,aten::log10,aten::mish,aten::neg,aten::rsqrt,aten::sgn
# A 20-operator submission for the batch comparison: ATen kernels that judged in 10-45 s each (16 at once).
TWENTY=aten::arange,aten::zeros,aten::acosh,aten::mish,aten::cos,aten::rsqrt,aten::gather,aten::cosh,aten::index_select,aten::hardsigmoid,aten::floor,aten::sgn,aten::silu,aten::log10,aten::stack,aten::mul,aten::bitwise_not,aten::neg,aten::sin,aten::cat
# Six operators one side of which enqueued for 1.1-1.8 ms a call (over the old 1 ms hold cap), four that did not.
EXPOSED=vllm13::merge_attn_states,vllm13::concat_and_cache_mla,vllm13::reshape_and_cache,vllm13::reshape_and_cache_flash,cublas::cublasDgemv_v2,aten::masked_fill_,aten::linear,aten::mm,aten::embedding,vllm13::permute_cols
# Operators whose timed kernels run 20 us to 3 ms on the H200: do_bench's 40-60 us of host overhead per call
# stays out of its median there, so its figures are a fair check of the judge's.
LONG10=aten::linear,aten::softmax,aten::_softmax,aten::mm,aten::bmm,aten::matmul,vllm13::permute_cols,aten::embedding,aten::huber_loss,aten::cumsum
# The seven operators whose speedup CV over cases >= 10 us was above 1 % across six runs on six machines (d-i).
SPREAD7=aten::fill_,vllm13::topk_softmax,cublas::cublasSgemmStridedBatched,cublas::cublasSgemmEx,cublas::cublasSgemm_v2,vllm13::copy_blocks,aten::gather
# The protocol speedup against do_bench: the three operators whose protocol figures disagreed with do_bench
# when the issue was filed (clone, bitwise_not, index_select), three more pointwise, an in-place one (zero_:
# its argument put back before every timed call), a gather, a reduction and a matrix product; all ten
# passed on the H200 in the 110-kernel submission of 2026-12-01.
# In the order do_bench takes them (the section's budget may end before the last).
AGREE10=aten::clone,aten::bitwise_not,aten::index_select,aten::cos,aten::gather,aten::zero_,aten::silu,aten::mish,aten::mm,aten::sum
# The protocol mode's smoke: a pointwise kernel, a matrix product, a vLLM kernel.
SMOKE3=aten::cos,aten::mm,vllm13::rms_norm
# One kernel of each source, each timed by the original's timer for its source (context.ORIGINAL_TIMERS).
SMOKE_SOURCES=aten::cos,cublas::cublasSaxpy_v2,vllm13::rms_norm
# cuBLAS operators (the original's back-to-back event loop: level 1, 2 and 3) and vLLM ones (do_bench, the
# mean) against the original's timers; the issue's own comparison had Saxpy and Sdot.
AGREE_SOURCES=cublas::cublasSaxpy_v2,cublas::cublasSdot_v2,cublas::cublasSscal_v2,cublas::cublasDgemv_v2,cublas::cublasSgemm_v2,vllm13::rms_norm,vllm13::fused_add_rms_norm,vllm13::permute_cols
LONG=aten::linear,aten::softmax,aten::_softmax,aten::argmax,aten::amin,aten::mm,aten::bmm,aten::mean,aten::sum,vllm13::permute_cols,aten::embedding,aten::sort,aten::cat,aten::huber_loss

step() {  # step NAME SECONDS COMMAND...
  local name=$1 seconds=$2
  shift 2
  echo "== $name (cap ${seconds}s): $*"
  local started=$SECONDS
  timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1
  echo "   exit $? after $((SECONDS - started))s"
}

scan_off_cheats() {  # the cheats the static scan refuses, judged with it off: the run-time defences alone
  step fixtures 45 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs 7 --fixtures-only "scan off"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
}

catalog_summary() {  # what did not pass, the count that did, and the summed stage breakdown of refs.log
  grep -v " passed " "$OUT/refs.log" | grep -v "UserWarning\|warnings.warn" | cut -c1-300 | head -40
  echo "passed: $(grep -v '^TOTAL' "$OUT/refs.log" | grep -c ' passed ')"
  grep -h -E "^(TOTAL|summed)" "$OUT/refs.log" | cut -c1-1500
  [ -s "$OUT/load.csv" ] && python3 scripts/gpu/sample_load.py "$OUT/load.csv" --summary
  if [ -s "$OUT/lock.trace" ]; then
    python3 scripts/gpu/lock_timeline.py "$OUT/lock.trace" --json "$OUT/lock_timeline.json"
    gzip -f "$OUT/lock.trace"
  fi
  gzip -f "$OUT"/reference_kernels_*.json 2>/dev/null
}

catalog() {  # catalog SECONDS [FILL]: every reference kernel (FILL jobs in all), with the device lock traced
  export KGB_DEVICE_LOCK_TRACE=$OUT/lock.trace
  rm -f "$KGB_DEVICE_LOCK_TRACE"
  python3 scripts/gpu/sample_load.py "$OUT/load.csv" --seconds "$1" &
  local sampler=$!
  step refs "$1" python3 scripts/gpu/judge_reference_kernels.py --jobs "$JOBS" --budget $(($1 - 30)) \
    --fill "${2:-0}"
  kill "$sampler" 2>/dev/null
  unset KGB_DEVICE_LOCK_TRACE
}

labelled_catalog() {  # labelled_catalog LABEL TREE SECONDS: catalog SECONDS 110 judged by the checkout in TREE
  # (. for this one), its summary in catalog_summary_LABEL.txt and its files as LABEL-refs.log, LABEL-load.csv...
  (cd "$2" && catalog "$3" 110)
  catalog_summary >"$OUT/catalog_summary_$1.txt" 2>&1
  for name in refs.log load.csv lock_timeline.json lock.trace.gz; do
    [ -f "$OUT/$name" ] && mv "$OUT/$name" "$OUT/$1-$name"
  done
  for path in "$OUT"/reference_kernels_*.json.gz; do [ -f "$path" ] && mv "$path" "$OUT/$1-$(basename "$path")"; done
}

judged_by() {  # judged_by LABEL SECONDS...: labelled_catalog LABEL's summary, and how many it judged by each time
  local label=$1 at
  shift
  echo "-- $label"; grep -v "^aten\|^vllm\|^cublas" "$OUT/catalog_summary_$label.txt" | cut -c1-600
  for at in "$@"; do
    echo "judged by ${at} s: $(grep -E ' at [0-9.]+s' "$OUT/$label-refs.log" | sed -E 's/.* at ([0-9.]+)s.*/\1/' | awk -v at="$at" '$1 <= at' | wc -l)"
  done
}

repeat_ops() {  # repeat_ops SECONDS OPS ROUNDS: OPS judged 1 + ROUNDS times in one call (public tier, 14 at
  # once): the issue's repeatability protocol, per-operator CV
  step repeat "$1" env KGB_ONLY_OPERATORS=$2 python3 scripts/gpu/judge_h200.py \
    --sections refs,repeat_refs --refs-jobs 14 --refs-tiers public --repeat-rounds "$3"
  grep -A20 "^== repeatability" "$OUT/repeat.log"
}

pack_out() {  # pack_out KEEP...: at most 8 files come back from $OUT, so all but KEEP go into rest.tar.gz
  local keep=" $* " rest=() path name
  for path in "$OUT"/*; do
    name=$(basename "$path")
    [ -f "$path" ] && [[ "$keep" != *" $name "* ]] && rest+=("$name")
  done
  [ ${#rest[@]} -gt 0 ] && tar -czf "$OUT/rest.tar.gz" -C "$OUT" "${rest[@]}" && (cd "$OUT" && rm -f "${rest[@]}")
}

smoke_verdicts() {  # smoke_verdicts JSON: every kernel passed with a protocol speedup and went through do_bench
  python3 - "$1" <<'PY'
import json
import sys

try:
    data = json.load(open(sys.argv[1]))
except (OSError, ValueError) as error:
    sys.exit(f"smoke: no results ({error}): cut off before the judging ended?")
refs, timed = data.get("refs", []), data.get("protocol_dobench", [])
problems = [f"{row['operator']}: {row['status']}: {row['reason']}" for row in refs if row["status"] != "passed"]
problems += [
    f"{row['operator']}: passed without a protocol speedup (a judge without the pass, or KGB_PROTOCOL_TIMING=off?)"
    for row in refs
    if row["status"] == "passed" and row.get("protocol_speedup") is None
]
problems += [
    f"{row['operator']}: do_bench failed on {case['case_id']}: {case['error']}"
    for row in timed
    for case in row.get("cases", [])
    if case.get("error")
]
if len(refs) < 3:
    problems.append(f"only {len(refs)} of 3 kernels judged")
for name, trace in data.get("errors", {}).items():
    problems.append(f"section {name} failed: {trace[-600:]}")
through = sum(1 for row in timed for case in row.get("cases", []) if case.get("do_bench"))
print("\n".join(["smoke: " + line for line in problems] or ["smoke: 3/3 passed with a protocol speedup"]))
if not through:  # the judging took the smoke's budget: the agreement step runs do_bench untried
    print("smoke: warning: no case went through do_bench")
sys.exit(1 if problems else 0)
PY
}

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader

if [ "$PART" = judge ]; then
  # Good kernels pass, wrong ones and cheats (streams and threads included) do not, on the GPU.
  step fixtures 110 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  # 10 pointwise operators judged one at a time, their speedups against do_bench, one kernel judged 5 times.
  step timing 240 env KGB_ONLY_OPERATORS=$POINTWISE python3 scripts/gpu/judge_h200.py \
    --sections refs,dobench,repeat --dobench-ops 10 --dobench-cases 3
  echo; echo "== summaries"
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-200
  grep -A12 "^== summary" "$OUT/timing.log"
elif [ "$PART" = verdicts ]; then
  # Convicted by behaviour: every fixture (good, wrong, cheats) with the scan on, every cheat again with it
  # off (the same verdicts), the illegal-address kernel a failed_runtime with its cause; then the corpus of
  # kernels written in other people's styles, scan on and off, if this checkout has it.
  step fixtures 240 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  [ -f scripts/gpu/corpus_h200.py ] && step corpus 360 python3 scripts/gpu/corpus_h200.py --jobs "$JOBS"
  echo; echo "== summaries"
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
  [ -s "$OUT/corpus.log" ] && grep -E "^(honest|buggy|summary)|MISMATCH|unexpected" "$OUT/corpus.log" | cut -c1-300
elif [ "$PART" = defences ]; then
  # Do the run-time defences (audit hook, integrity watch, twin replay) refuse an honest kernel on a GPU?
  # Every corpus file on the smoke tier with the scan off (the defences alone decide), every fixture (scan
  # on, cheats scan off too), then the blind round ONLY (round7) on the original's grids until the caps end.
  step corpus_smoke "${2:-160}" python3 scripts/gpu/corpus_h200.py --jobs "$JOBS" --scan off --tiers smoke
  mv "$OUT"/corpus_*.json "$OUT/corpus_smoke.json" 2>/dev/null
  step fixtures "${3:-140}" python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  step corpus_round "${4:-110}" python3 scripts/gpu/corpus_h200.py --jobs "$JOBS" --scan off --only "${5:-round7}"
  echo; echo "== summaries"
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected|WRONG" "$OUT/corpus_smoke.log" | cut -c1-300
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected|WRONG" "$OUT/corpus_round.log" | cut -c1-300
elif [ "$PART" = round ]; then
  # A blind corpus round on the GPU's tiers (public and held-out), scan on and off, then every fixture: the
  # verdict figures a closing note gives, in one call. First (a minute at most): does CUDA eager round the
  # composite losses in half as CPU eager does (the claim behind their eager_alternative)?
  step composite 60 python3 scripts/gpu/composite_half_check.py --draws 2
  step corpus "${3:-260}" python3 scripts/gpu/corpus_h200.py --jobs "$JOBS" --only "${2:-round}"
  step fixtures "${4:-240}" python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  echo; echo "== summaries"
  tail -1 "$OUT/composite.log"
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected" "$OUT/corpus.log" | cut -c1-300
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
elif [ "$PART" = batch ]; then
  # Throughput: 10 operators through fork-server sandboxes, N at once, against one fresh process per kernel.
  step batch 300 env KGB_ONLY_OPERATORS=$POINTWISE python3 scripts/gpu/judge_h200.py \
    --sections batch --batch 10 --naive-batch 3 --jobs "$JOBS"
  grep -A12 "^== summary" "$OUT/batch.log"
elif [ "$PART" = throughput ]; then
  # A 110-kernel submission (the catalog, typical kernels judged twice to make up 110) with the device lock
  # traced and the load sampled, then a 20-operator submission against one fresh process per kernel.
  catalog "${2:-420}" 110
  catalog_summary
  step batch $((${3:-560} - SECONDS)) env KGB_ONLY_OPERATORS=$TWENTY python3 scripts/gpu/judge_h200.py \
    --sections batch --batch 20 --naive-batch 3 --jobs "$JOBS"
  grep -E "^  (forkserver|popen)|^per operator" "$OUT/batch.log" | cut -c1-700
elif [ "$PART" = submission ]; then
  # The 110-kernel submission alone (lock traced, load sampled by role): the throughput figure.
  catalog "${2:-420}" 110
  catalog_summary
elif [ "$PART" = closing ]; then
  # One call for a closing note: the 110-kernel submission (lock traced, load sampled), then the ten
  # long-kernel operators (public tier) judged against do_bench in the same call, until END seconds.
  catalog "${2:-410}" 110
  catalog_summary
  step agreement $((${3:-585} - SECONDS)) env KGB_ONLY_OPERATORS=$LONG10 python3 scripts/gpu/judge_h200.py \
    --sections refs,dobench --refs-jobs 10 --refs-tiers public --dobench-ops 10 --dobench-cases 3
  grep -A14 "^== judge speedup" "$OUT/agreement.log"
elif [ "$PART" = exposed ]; then
  # After raising the stream-hold cap: the operators whose host enqueue outlasted the old 1 ms cap, and four
  # that never did, judged twice (public tier): per-operator CV. First the timed address-cache cheat.
  step fixtures 40 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs 2 \
    --fixtures-only cache_by_address,cache_by_data_ptr
  step repeat $((${2:-215} - SECONDS)) env KGB_ONLY_OPERATORS=$EXPOSED python3 scripts/gpu/judge_h200.py \
    --sections refs,repeat_refs --refs-jobs 10 --refs-tiers public --repeat-rounds 1
  grep -E "^(cheats|fixtures with)" "$OUT/fixtures.log" | cut -c1-200
  grep -A14 "^== repeatability" "$OUT/repeat.log"
elif [ "$PART" = recheck ]; then
  # After fixes, in one call: the named reference kernels again (public + held-out, timed), the cheats the
  # static scan refuses judged with it off, the judge against do_bench / graph replays, one kernel judged 5 times.
  step refs 120 python3 scripts/gpu/judge_reference_kernels.py --jobs "$JOBS" --budget 110 --only "$2"
  scan_off_cheats
  step timing 180 env KGB_ONLY_OPERATORS=$POINTWISE python3 scripts/gpu/judge_h200.py \
    --sections refs,dobench,repeat --refs-jobs 10 --dobench-ops 10 --dobench-cases 3
  echo; echo "== summaries"
  grep -v "UserWarning\|warnings.warn" "$OUT/refs.log" | cut -c1-220
  grep -E "^(cheats|fixtures with)" "$OUT/fixtures.log" | cut -c1-200
  grep -A12 "^== judge speedup" "$OUT/timing.log"
  grep -A7 "^== repeatability" "$OUT/timing.log"
elif [ "$PART" = final ]; then
  catalog 340
  scan_off_cheats
  step agreement 165 env KGB_ONLY_OPERATORS=$LONG python3 scripts/gpu/judge_h200.py --sections refs,dobench \
    --refs-jobs 14 --refs-tiers public --dobench-ops 14 --dobench-cases 3
  echo; echo "== summaries"
  catalog_summary
  grep -E "^(cheats|fixtures with)" "$OUT/fixtures.log" | cut -c1-200
  grep -A18 "^== judge speedup" "$OUT/agreement.log"
elif [ "$PART" = last ]; then
  # The fixed vLLM kernels again, then ten long-kernel operators judged five times (public tier): do_bench
  # agreement on the first round, per-operator CV over all five.
  step vllm 90 python3 scripts/gpu/judge_reference_kernels.py --jobs 5 --budget 80 \
    --only vllm13__rms_norm,vllm13__fused_add,vllm13__rotary,vllm13__scaled_int8,vllm13__cp_gather
  mv "$OUT/reference_kernels_nvidia-h200.json" "$OUT/vllm_recheck.json" 2>/dev/null
  step long 445 env KGB_ONLY_OPERATORS=$LONG10 python3 scripts/gpu/judge_h200.py \
    --sections refs,dobench,repeat_refs --refs-jobs 10 --refs-tiers public --repeat-rounds 4 \
    --dobench-ops 10 --dobench-cases 3
  echo; echo "== summaries"
  grep -v "UserWarning\|warnings.warn" "$OUT/vllm.log" | cut -c1-300
  grep -A14 "^== reference kernels" "$OUT/long.log" | cut -c1-200
  grep -A14 "^== judge speedup" "$OUT/long.log"
  grep -A14 "^== repeatability" "$OUT/long.log"
elif [ "$PART" = submission_spread ]; then
  # One call: the 110-kernel submission, then the SPREAD7 operators judged five times, until END seconds.
  catalog "${2:-330}" 110
  catalog_summary
  repeat_ops $((${3:-565} - SECONDS)) "$SPREAD7" 4
elif [ "$PART" = containment ]; then
  step containment 300 python3 scripts/gpu/containment_h200.py
  grep -E "^(held|BROKEN|containment:|cgroup|good)" "$OUT/containment.log" | cut -c1-400
  OLD=${2:-}
  TWENTY_FILES=$(echo "$TWENTY" | sed 's/::/__/g; s/,/.py,/g; s/$/.py/')
  for tree in ${OLD:+$OLD} . ${OLD:+$OLD} .; do
    label=$([ "$tree" = . ] && echo after || echo before)
    (cd "$tree" && PYTHONPATH=$PWD python3 "$OLDPWD/scripts/bench_sandbox_start.py" --device cuda --count 20 \
      --launchers forkserver --label "$label ") 2>&1 | grep "sandbox start"
    (cd "$tree" && PYTHONPATH=$PWD OUT= timeout 150 python3 scripts/gpu/judge_reference_kernels.py --jobs 16 \
      --budget 140 --only "$TWENTY_FILES") >"$OUT/twenty-$label.log.tmp" 2>&1
    cat "$OUT/twenty-$label.log.tmp" >>"$OUT/twenty-$label.log"
    echo "$label: $(grep "^TOTAL" "$OUT/twenty-$label.log.tmp")"; rm -f "$OUT/twenty-$label.log.tmp"
  done
elif [ "$PART" = protocol ]; then
  export KGB_PROTOCOL_TIMING=on  # the protocol stage is off by default (runner.judge)
  # The judge's protocol pass on the H200. A smoke first (3 kernels judged, 2 cases each through do_bench):
  # any verdict but passed, or no protocol speedup, ends the call at once rather than spend 9 minutes on it.
  # 150 s: on a machine that has just started, 80 s ran out before three kernels were judged (2026-12-01).
  step smoke 150 env KGB_ONLY_OPERATORS=$SMOKE3 python3 scripts/gpu/judge_h200.py --sections protocol_dobench \
    --protocol-jobs 3 --protocol-cases 2 --protocol-budget-s 140
  mv "$OUT/judge_h200.json" "$OUT/smoke.json" 2>/dev/null
  grep -A4 "^== reference kernels" "$OUT/smoke.log" | cut -c1-200
  grep -A5 "^== protocol agreement" "$OUT/smoke.log" | cut -c1-200
  if ! smoke_verdicts "$OUT/smoke.json"; then
    grep -E "^(aten|vllm13)::|Error" "$OUT/smoke.log" | cut -c1-300 | head -20
    exit 1
  fi
  # The 110-kernel submission with the protocol pass on: the throughput figure (summary kept for the end).
  catalog "${2:-330}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  # Every protocol-timed case of ten operators against the paper's do_bench, nothing else on the GPU: 160 s,
  # less when a longer submission (S) leaves less before 575 s.
  agree_cap=$((575 - SECONDS))
  [ "$agree_cap" -gt 160 ] && agree_cap=160
  if [ "$agree_cap" -ge 60 ]; then
    step agree "$agree_cap" env KGB_ONLY_OPERATORS=$AGREE10 python3 scripts/gpu/judge_h200.py \
      --sections protocol_dobench --protocol-jobs 10 --protocol-budget-s $((agree_cap - 10))
    mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  else
    echo "== agreement skipped: ${agree_cap}s left"
  fi
  left=$((580 - SECONDS))
  if [ "$left" -ge 60 ]; then
    step fixtures "$left" python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
    mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  else
    echo "== fixtures skipped: ${left}s left"
  fi
  echo; echo "== summaries"
  cat "$OUT/catalog_summary.txt"
  if [ -s "$OUT/agree.log" ]; then
    grep -A12 "^== reference kernels" "$OUT/agree.log" | cut -c1-200
    grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-220
  fi
  if [ -s "$OUT/fixtures.log" ]; then
    grep -E "^fixtures with" "$OUT/fixtures.log"
    grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-200
  fi
  # run.log: where a caller tees this script's own output ($OUT/run.log); lock_timeline.json goes in the tar.
  pack_out smoke.log refs.log agree.log agree.json fixtures.log fixtures.json run.log
elif [ "$PART" = agree_submission ]; then
  export KGB_PROTOCOL_TIMING=on  # the protocol stage is off by default (runner.judge)
  # One call for the protocol speedup's two figures: where a candidate's call latency goes on the host
  # (launch_overhead.py), every protocol-timed case of AGREE10 against do_bench with nothing else on the GPU,
  # then the 110-kernel submission with the protocol stage on (the throughput figure), until END seconds.
  step overhead 45 python3 scripts/gpu/launch_overhead.py
  grep -E "do_bench" "$OUT/overhead.log"
  step agree "${2:-170}" env KGB_ONLY_OPERATORS=$AGREE10 python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs 10 --protocol-budget-s $((${2:-170} - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  grep -A14 "^== reference kernels" "$OUT/agree.log" | cut -c1-200
  grep -A14 "^== protocol agreement" "$OUT/agree.log" | cut -c1-220
  catalog $((${3:-570} - SECONDS)) 110
  catalog_summary
  pack_out overhead.log agree.log agree.json refs.log run.log
elif [ "$PART" = restructure_verdicts ]; then
  # One call: the restructure comparison (below, two rounds each side), then every fixture with the scan on
  # and every cheat with it off, then the corpus (scan on and off) until 555 s.
  bash "$0" restructure "${2:?usage: run_all.sh restructure_verdicts OLD}"
  step fixtures 140 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  step corpus $((555 - SECONDS)) python3 scripts/gpu/corpus_h200.py --jobs "$JOBS"
  echo; echo "== summaries"
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected" "$OUT/corpus.log" | cut -c1-300
  pack_out twenty-before.log twenty-after.log fixtures.log fixtures.json corpus.log run.log
elif [ "$PART" = agree_quiet ]; then
  export KGB_PROTOCOL_TIMING=on  # the protocol stage is off by default (runner.judge)
  # The protocol speedup against do_bench on a quiet host: OPS judged one at a time (nothing else on the
  # CPU while a case is timed, as when do_bench runs), and every case timed by do_bench twice (its own
  # agreement with itself beside the judge's with it), for at most S seconds.
  step agree "${3:-230}" env KGB_ONLY_OPERATORS=${2:-$AGREE10} python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs 1 --dobench-twice --protocol-budget-s $((${3:-230} - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  grep -A8 "^== reference kernels" "$OUT/agree.log" | cut -c1-200
  grep -A10 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
elif [ "$PART" = agree_interleaved ]; then
  export KGB_PROTOCOL_TIMING=on
  # As agree_quiet, but each operator judged right before do_bench times it, with the host's launch time
  # probed before the judge and after do_bench: is the host's speed at the time what parts the two?
  step agree "${3:-230}" env KGB_ONLY_OPERATORS=${2:-$AGREE10} python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs 1 --dobench-twice --interleave \
    --protocol-budget-s $((${3:-230} - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-300
elif [ "$PART" = agree_verdicts ]; then
  # One call: the protocol speedup against do_bench on a quiet host (agree_quiet, S seconds), then every
  # fixture with the scan on and every cheat with it off (both timing stages on), then the corpus (scan on
  # and off) until 575 s.
  bash "$0" agree_quiet "$AGREE10" "${2:-290}"
  export KGB_PROTOCOL_TIMING=on
  step fixtures 140 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  step corpus $((575 - SECONDS)) python3 scripts/gpu/corpus_h200.py --jobs "$JOBS"
  echo; echo "== summaries"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected" "$OUT/corpus.log" | cut -c1-300
  pack_out agree.log agree.json fixtures.log fixtures.json corpus.log run.log
elif [ "$PART" = parity ]; then
  # Where the protocol figure parts from do_bench's: the same cases timed by do_bench, by the judge's loop
  # and by that loop with the launch hooks, in one plain process; then the same operators judged (a sandbox)
  # against do_bench, one at a time (S seconds).
  step parity 150 python3 scripts/gpu/do_bench_parity.py --ops "${2:-aten::bitwise_not,aten::mm,aten::cos}" --cases 8
  cat "$OUT/parity.log" | cut -c1-220
  bash "$0" agree_quiet "${2:-aten::bitwise_not,aten::mm,aten::cos}" "${3:-150}"
  pack_out parity.log agree.log agree.json run.log
elif [ "$PART" = protocol_submission ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call: the 110-kernel submission with the protocol stage on (the throughput figure, S seconds), then
  # the protocol speedup against do_bench on AGREE10 judged 10 at once (a loaded host), until END seconds.
  catalog "${2:-400}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  agree_cap=$((${3:-575} - SECONDS))
  step agree "$agree_cap" env KGB_ONLY_OPERATORS=$AGREE10 python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs 10 --protocol-budget-s $((agree_cap - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  echo; echo "== summaries"
  cat "$OUT/catalog_summary.txt"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  pack_out refs.log agree.log agree.json catalog_summary.txt run.log
elif [ "$PART" = sources_submission ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call: a smoke (one kernel per source judged with the protocol stage, 2 cases each through the
  # original's timer for the source; any failure ends the call), the 110-kernel submission with the stage on
  # (the throughput figure, S seconds), then AGREE_SOURCES judged 8 at once against the original's timers.
  # SKIP_SMOKE=1: no smoke (the loops already ran on this code); AGREE_JOBS: judged at once in the
  # agreement (1: nothing else on the host while a case is timed, as when the original ran).
  if [ -z "${SKIP_SMOKE:-}" ]; then
    step smoke 130 env KGB_ONLY_OPERATORS=$SMOKE_SOURCES python3 scripts/gpu/judge_h200.py \
      --sections protocol_dobench --protocol-jobs 3 --protocol-cases 2 --protocol-budget-s 120
    mv "$OUT/judge_h200.json" "$OUT/smoke.json" 2>/dev/null
    grep -A5 "^== protocol agreement" "$OUT/smoke.log" | cut -c1-220
    if ! smoke_verdicts "$OUT/smoke.json"; then
      grep -E "^(aten|vllm13|cublas)::|Error" "$OUT/smoke.log" | cut -c1-300 | head -20
      pack_out smoke.log smoke.json run.log
      exit 1
    fi
  fi
  catalog "${2:-360}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  agree_cap=$((${3:-585} - SECONDS))
  step agree "$agree_cap" env KGB_ONLY_OPERATORS=$AGREE_SOURCES python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs "${AGREE_JOBS:-8}" --protocol-cases 40 \
    --protocol-budget-s $((agree_cap - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  echo; echo "== summaries"
  cat "$OUT/catalog_summary.txt"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  pack_out smoke.log refs.log agree.log agree.json catalog_summary.txt run.log
elif [ "$PART" = verdicts_probe ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call, both timing stages on: every fixture with the scan on and every cheat with it off, the corpus
  # (scan on and off), then the unwatched check's fixtures (the cheats named *_when_unwatched,
  # cache_answers_the_probe and the honest readback, scan on and off) again in rounds until END seconds: the
  # floor must not move with the host's load.
  step fixtures 150 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  step corpus 300 python3 scripts/gpu/corpus_h200.py --jobs "$JOBS"
  round=2 copies=${3:-1} cap=$((${3:-1} * 25 + 50))
  while [ $((SECONDS + cap + 5)) -lt "${2:-585}" ]; do
    step "unwatched$round" "$cap" python3 scripts/gpu/judge_h200.py --sections fixtures \
      --jobs $((copies > 1 ? 12 : 6)) --fixture-copies "$copies" \
      --fixtures-only _when_unwatched,cache_answers_the_probe,cos_readback
    mv "$OUT/judge_h200.json" "$OUT/unwatched$round.json" 2>/dev/null
    round=$((round + 1))
  done
  echo; echo "== summaries"
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -v "True" "$OUT/fixtures.log" | grep -E "^(good|wrong|cheats)" | cut -c1-220
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected" "$OUT/corpus.log" | grep -v " ok " | cut -c1-300
  for log in "$OUT"/unwatched*.log; do
    [ -f "$log" ] && echo "$(basename "$log"):" && grep -E "^(good|cheats)" "$log" | grep -v " True " | cut -c1-200
    [ -f "$log" ] && grep -E "^fixtures with" "$log"
  done
  python3 scripts/gpu/probe_figures.py "$OUT"/fixtures.json "$OUT"/unwatched*.json --only cos_readback \
    >"$OUT/probe_figures.txt" 2>&1
  cat "$OUT/probe_figures.txt"
  pack_out fixtures.log fixtures.json corpus.log probe_figures.txt unwatched2.log run.log
elif [ "$PART" = submission_agree ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call: the 110-kernel submission with the protocol stage on (the throughput figure, S seconds), then
  # the protocol speedup against do_bench on AGREE10 on a quiet host (agree_quiet) until END seconds.
  catalog "${2:-360}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  bash "$0" agree_quiet "$AGREE10" $((${3:-585} - SECONDS))
  echo; echo "== summaries"
  cat "$OUT/catalog_summary.txt"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  pack_out refs.log agree.log agree.json catalog_summary.txt lock_timeline.json run.log
elif [ "$PART" = recheck_submission_agree ]; then
  # One call after fixes: the fixtures whose labels hold FIXTURES and the corpus files whose paths hold ONLY
  # (comma-separated substrings; scan off, the original's grids), then the 110-kernel submission with the
  # protocol stage on (S seconds), then the protocol speedup against do_bench on AGREE10 until END seconds.
  step fixtures 60 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs "$JOBS" --fixtures-only "$2"
  mv "$OUT/judge_h200.json" "$OUT/fixtures.json" 2>/dev/null
  step corpus 70 python3 scripts/gpu/corpus_h200.py --jobs "$JOBS" --scan off --only "$3"
  export KGB_PROTOCOL_TIMING=on
  catalog "${4:-360}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  bash "$0" agree_quiet "$AGREE10" $((${5:-585} - SECONDS))
  echo; echo "== summaries"
  grep -E "^fixtures with" "$OUT/fixtures.log"
  grep -E "^(good|wrong|cheats)" "$OUT/fixtures.log" | cut -c1-220
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected|WRONG" "$OUT/corpus.log" | cut -c1-300
  cat "$OUT/catalog_summary.txt"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  for json in "$OUT"/corpus_*.json; do [ -f "$json" ] && gzip -f "$json"; done
  pack_out refs.log agree.log agree.json catalog_summary.txt fixtures.log corpus.log run.log
elif [ "$PART" = corpus_submission_parity ]; then
  # One call after fixes to the timing path: the corpus files whose paths hold ONLY (comma-separated; scan
  # off, the original's grids, 70 s), the 110-kernel submission with the protocol stage on (S seconds), the
  # back-to-back loop against the original's cuBLAS timer with the judge's hooks and without (bare launches,
  # 60 s), then the protocol speedup against do_bench on AGREE10 until END seconds.
  step corpus "${KGB_CORPUS_S:-70}" python3 scripts/gpu/corpus_h200.py --jobs "$JOBS" --scan off --only "$2"
  export KGB_PROTOCOL_TIMING=on
  catalog "${3:-400}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  step parity 60 python3 scripts/gpu/back_to_back_parity.py --ops cublas::cublasSaxpy_v2,cublas::cublasSdot_v2 --cases 6
  bash "$0" agree_quiet "$AGREE10" $((${4:-585} - SECONDS))
  echo; echo "== summaries"
  grep -E "^(honest|buggy|summary)|MISMATCH|unexpected|WRONG" "$OUT/corpus.log" | cut -c1-300
  cat "$OUT/catalog_summary.txt"
  tail -4 "$OUT/parity.log"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  for json in "$OUT"/corpus_*.json; do [ -f "$json" ] && gzip -f "$json"; done
  pack_out refs.log agree.log agree.json catalog_summary.txt parity.log corpus.log run.log
elif [ "$PART" = cublas_parity_submission ]; then
  # A short call: every cuBLAS reference kernel judged with both timing stages on (their baseline runs
  # under the audit hook), the back-to-back loop against the original's timer with the judge's hooks and
  # without (bare launches), then the 110-kernel submission with the protocol stage on until END seconds.
  export KGB_PROTOCOL_TIMING=on
  step cublas 150 python3 scripts/gpu/judge_reference_kernels.py --jobs "$JOBS" --budget 120 --only cublas
  step parity 70 python3 scripts/gpu/back_to_back_parity.py --ops cublas::cublasSaxpy_v2,cublas::cublasSdot_v2 --cases 6
  catalog $((${2:-470} - SECONDS)) 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  echo; echo "== summaries"
  grep -E "^TOTAL| rejected | error | failed" "$OUT/cublas.log" | cut -c1-300
  tail -4 "$OUT/parity.log"
  cat "$OUT/catalog_summary.txt"
  pack_out cublas.log parity.log refs.log catalog_summary.txt lock_timeline.json run.log
elif [ "$PART" = unwatched_submission ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call: the unwatched check's fixtures (the cheats named *_when_unwatched, cache_answers_the_probe and
  # the honest readback, scan on and off) in ROUNDS rounds, the 110-kernel submission with the protocol stage
  # on (S seconds; KGB_GPU_JOBS at once), then the back-to-back loop against the original's in one plain
  # process until END seconds.
  for round in $(seq "${4:-3}"); do
    step "unwatched$round" 75 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs 6 \
      --fixtures-only _when_unwatched,cache_answers_the_probe,cos_readback
    mv "$OUT/judge_h200.json" "$OUT/unwatched$round.json" 2>/dev/null
  done
  catalog "${2:-340}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  parity_cap=$((${3:-585} - SECONDS))
  [ "$parity_cap" -gt 40 ] && step parity "$parity_cap" python3 scripts/gpu/back_to_back_parity.py \
    --ops cublas::cublasSaxpy_v2,cublas::cublasSdot_v2,cublas::cublasSgemm_v2 --cases 8
  echo; echo "== summaries"
  for log in "$OUT"/unwatched*.log; do
    echo "$(basename "$log"):" && grep -E "^(good|cheats)" "$log" | cut -c1-200
  done
  cat "$OUT/catalog_summary.txt"
  [ -f "$OUT/parity.log" ] && cut -c1-240 "$OUT/parity.log" | tail -30
  tar -czf "$OUT/unwatched.tar.gz" -C "$OUT" $(cd "$OUT" && ls unwatched*) && (cd "$OUT" && rm -f unwatched*.log unwatched*.json)
  pack_out unwatched.tar.gz refs.log catalog_summary.txt lock_timeline.json parity.log run.log
elif [ "$PART" = closing_submission ]; then
  export KGB_PROTOCOL_TIMING=on
  # One call for a closing note: the unwatched check's fixtures once, the 110-kernel submission with the
  # protocol stage on (S seconds; KGB_GPU_JOBS at once), then agree_quiet on AGREE10 until END seconds.
  step unwatched1 75 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs 6 \
    --fixtures-only _when_unwatched,cache_answers_the_probe,cos_readback
  mv "$OUT/judge_h200.json" "$OUT/unwatched1.json" 2>/dev/null
  catalog "${2:-330}" 110
  catalog_summary >"$OUT/catalog_summary.txt" 2>&1
  bash "$0" agree_quiet "$AGREE10" $((${3:-560} - SECONDS))
  echo; echo "== summaries"
  grep -E "^(good|cheats)" "$OUT/unwatched1.log" | cut -c1-200
  cat "$OUT/catalog_summary.txt"
  grep -A12 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  tar -czf "$OUT/unwatched.tar.gz" -C "$OUT" unwatched1.log unwatched1.json && rm -f "$OUT"/unwatched1.*
  pack_out unwatched.tar.gz refs.log catalog_summary.txt agree.log agree.json run.log
elif [ "$PART" = judges_compare ]; then
  export KGB_PROTOCOL_TIMING=on
  # How many judges at once a GPU of this host serves best, the protocol stage on: the same 110 kernels at A
  # then B judges, one after the other on the same machine (their load CSVs and lock timelines kept apart).
  for jobs in "${3:-12}" "${4:-16}"; do
    JOBS=$jobs
    export KGB_JUDGES_PER_DEVICE=$jobs
    labelled_catalog "j$jobs" . "${2:-280}"
  done
  echo; echo "== summaries"
  for jobs in "${3:-12}" "${4:-16}"; do
    judged_by "j$jobs" 150 200 250
  done
  pack_out run.log catalog_summary_j${3:-12}.txt catalog_summary_j${4:-16}.txt j${3:-12}-refs.log j${4:-16}-refs.log
elif [ "$PART" = unwatched_ab ]; then
  export KGB_PROTOCOL_TIMING=on
  # The unwatched check's fixtures (the cheats named *_when_unwatched, cache_answers_the_probe, the honest
  # readback; scan on and off) judged by this checkout and by OLD alternately, ROUNDS rounds each.
  OLD=${2:?usage: run_all.sh unwatched_ab OLD [ROUNDS]}
  for round in $(seq "${3:-4}"); do
    for tree in . "$OLD"; do
      label=$([ "$tree" = . ] && echo new || echo old)
      (cd "$tree" && step "unwatched-$label$round" 70 python3 scripts/gpu/judge_h200.py --sections fixtures \
        --jobs 6 --fixtures-only _when_unwatched,cache_answers_the_probe,cos_readback)
      mv "$OUT/judge_h200.json" "$OUT/unwatched-$label$round.json" 2>/dev/null
      grep -E "^(good|cheats)" "$OUT/unwatched-$label$round.log" | cut -c1-160
    done
  done
  echo; echo "== summaries"
  for label in new old; do
    echo "$label: $(cat "$OUT"/unwatched-$label*.log | grep -cE '^(good|cheats).* True ') as expected, $(cat "$OUT"/unwatched-$label*.log | grep -cE '^(good|cheats).* False ') not"
  done
  python3 - "$OUT" <<'PY'
import glob
import json
import sys

for path in sorted(glob.glob(f"{sys.argv[1]}/unwatched-new*.json")):
    for row in json.load(open(path))["fixtures"]:
        if "cos_readback" in row["kernel"]:
            print(path.rsplit("/", 1)[1], row["kernel"], row["status"])
            for case in row.get("timed_cases", []):
                print("   ", case)
PY
  pack_out run.log
elif [ "$PART" = draw_compare ]; then
  # Where the protocol stage's input sets are drawn: in the sandbox from seeds (this checkout) against drawn
  # here and piped over (OLD). The same 110 kernels, stage on, 16 judges, S seconds each, this checkout
  # first; load CSVs and lock timelines kept apart.
  OLD=${2:?usage: run_all.sh draw_compare OLD [S]}
  export KGB_PROTOCOL_TIMING=on KGB_JUDGES_PER_DEVICE=16
  JOBS=16
  labelled_catalog sandbox . "${3:-240}"
  labelled_catalog piped "$OLD" "${3:-240}"
  echo; echo "== summaries"
  judged_by sandbox 120 180 220
  judged_by piped 120 180 220
  python3 scripts/gpu/compare_draws.py "$OUT"/sandbox-reference_kernels_*.json.gz "$OUT"/piped-reference_kernels_*.json.gz \
    | tee "$OUT/compare_draws.txt"
  pack_out run.log catalog_summary_sandbox.txt catalog_summary_piped.txt sandbox-refs.log piped-refs.log compare_draws.txt
elif [ "$PART" = probe_parity ]; then
  export KGB_PROTOCOL_TIMING=on
  # The unwatched check where audited calls held host time (the kernel-time probe), three rounds so that a
  # host-bound mark that comes and goes shows; then where the cuBLAS figure's extra host time comes from.
  for round in 1 2 3; do
    step "fixtures$round" 90 python3 scripts/gpu/judge_h200.py --sections fixtures --jobs 4 \
      --fixtures-only _when_unwatched,cache_answers_the_probe,cos_readback
    mv "$OUT/judge_h200.json" "$OUT/fixtures$round.json" 2>/dev/null
    grep -E "^(good|cheats)" "$OUT/fixtures$round.log" | cut -c1-220
  done
  OPS=${2:-cublas::cublasSaxpy_v2,cublas::cublasSdot_v2,cublas::cublasSgemm_v2}
  step parity 120 python3 scripts/gpu/back_to_back_parity.py --ops "$OPS" --cases 8
  cat "$OUT/parity.log" | cut -c1-240
  step agree "${3:-150}" env KGB_ONLY_OPERATORS=$OPS python3 scripts/gpu/judge_h200.py \
    --sections protocol_dobench --protocol-jobs 1 --protocol-cases 8 --protocol-budget-s $((${3:-150} - 10))
  mv "$OUT/judge_h200.json" "$OUT/agree.json" 2>/dev/null
  grep -A6 "^== protocol agreement" "$OUT/agree.log" | cut -c1-240
  pack_out fixtures1.log fixtures2.log fixtures3.log parity.log agree.log agree.json run.log
elif [ "$PART" = restructure ]; then
  # What the judge's restructure and the protocol pass's plumbing cost with the pass off: the 20-operator
  # submission judged by OLD and by this checkout (KGB_PROTOCOL_TIMING=off), alternately, two rounds each.
  OLD=${2:?usage: run_all.sh restructure OLD (an older checkout, e.g. .old)}
  TWENTY_FILES=$(echo "$TWENTY" | sed 's/::/__/g; s/,/.py,/g; s/$/.py/')
  declare -A totals=([before]="" [after]="")
  for tree in "$OLD" . "$OLD" .; do
    label=$([ "$tree" = . ] && echo after || echo before)
    # The old judge has no protocol pass to switch off; this one's is off, so both time the same way.
    switch=$([ "$tree" = . ] && echo KGB_PROTOCOL_TIMING=off || echo KGB_PROTOCOL_TIMING=)
    (cd "$tree" && env "$switch" PYTHONPATH="$PWD" OUT= timeout 140 python3 scripts/gpu/judge_reference_kernels.py \
      --jobs 16 --budget 130 --only "$TWENTY_FILES") >"$OUT/twenty-$label.log.tmp" 2>&1
    cat "$OUT/twenty-$label.log.tmp" >>"$OUT/twenty-$label.log"
    line=$(grep "^TOTAL" "$OUT/twenty-$label.log.tmp")
    echo "$label ($([ "$tree" = . ] && echo "this checkout, $switch" || echo "$tree")): ${line:-no TOTAL line (cut off?)}"
    totals[$label]+=" $(echo "$line" | sed -nE 's/.* in ([0-9.]+) s.*/\1/p')"
    rm -f "$OUT/twenty-$label.log.tmp"
  done
  python3 - "${totals[before]}" "${totals[after]}" <<'PY'
import statistics
import sys

before, after = ([float(value) for value in side.split()] for side in sys.argv[1:3])
if before and after:
    old, new = statistics.fmean(before), statistics.fmean(after)
    print(
        f"mean: before {old:.2f} s ({len(before)} rounds), after {new:.2f} s ({len(after)} rounds), "
        f"{100 * (new / old - 1):+.1f} %"
    )
else:
    print(f"mean: a side has no TOTAL line (before {before}, after {after})")
PY
elif [ "$PART" = spread ]; then
  # Is the spread of the operators that varied most across machines the machine's or the call's?
  repeat_ops "${2:-330}" "$SPREAD7" 4
elif [ "$PART" = repeat ]; then
  repeat_ops "${4:-540}" "${3:-$LONG}" "${2:-4}"
else
  catalog "${2:-500}" "${3:-0}"
  echo; echo "== summaries"
  catalog_summary
fi
