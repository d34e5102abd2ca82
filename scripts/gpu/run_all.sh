#!/usr/bin/env bash
# Every GPU figure the judge and catalog issues ask for, in one device call of about 9 minutes, each step
# under its own time cap so a slow step never hides the others. Run from the repository root on the GPU host:
#
#     bash scripts/gpu/run_all.sh [SECONDS_FOR_ALL_REFERENCE_KERNELS]
#
# Logs and JSON go to $OUT (or ./gpu-out). The summary lines of every step are printed again at the end.
# Steps: 1 where a case's time goes (5 operators, stage breakdown), 2 fixtures and cheats on the GPU,
# 3 do_bench agreement, 5-repeat CV and the throughput batch (12 pointwise operators), 4 every reference
# kernel, public + held-out, with timing, several judges at once (verdicts, speedups, wall time).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export OUT PYTHONPATH=$PWD PYTHONUNBUFFERED=1 OMP_NUM_THREADS=2
JOBS=${KGB_GPU_JOBS:-8}
REFS_S=${1:-240}
POINTWISE=aten::cos,aten::cosh,aten::erfc,aten::floor,aten::hardsigmoid,aten::log10,aten::mish,aten::neg,aten::rsqrt,aten::sgn,aten::logaddexp2,aten::acosh

step() {  # step NAME SECONDS COMMAND...
  local name=$1 seconds=$2
  shift 2
  echo "== $name (cap ${seconds}s): $*"
  local started=$SECONDS
  timeout "$seconds" "$@" >"$OUT/$name.log" 2>&1
  echo "   exit $? after $((SECONDS - started))s"
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
step breakdown 75 python3 scripts/gpu/judge_reference_kernels.py --jobs 5 --budget 70 \
  --only aten__cos.,aten__add.,aten__bmm.,aten__cumsum.,aten__index_put_.
cp "$OUT/reference_kernels_nvidia-h200.json" "$OUT/breakdown.json" 2>/dev/null
step judge_h200 200 env KGB_ONLY_OPERATORS=$POINTWISE python3 scripts/gpu/judge_h200.py \
  --sections fixtures,refs,dobench,repeat,batch --dobench-ops 12 --batch 12 --naive-batch 3 --jobs "$JOBS"
step refs "$REFS_S" python3 scripts/gpu/judge_reference_kernels.py --jobs "$JOBS" --budget $((REFS_S - 20))

echo
echo "== summaries"
grep -h -E "^(TOTAL|summed)" "$OUT/breakdown.log" | cut -c1-600
grep -A12 "^== summary" "$OUT/judge_h200.log"
grep "unexpected verdict" "$OUT/judge_h200.log"
grep -v " passed " "$OUT/refs.log" | grep -v "UserWarning\|warnings.warn" | cut -c1-220 | head -30
grep -c " passed " "$OUT/refs.log"
grep -h -E "^(TOTAL|summed)" "$OUT/refs.log" | cut -c1-600
