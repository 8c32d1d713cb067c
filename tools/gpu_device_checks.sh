#!/usr/bin/env bash
# A session's device checks, in the two calls a 15-minute device lease
# allows (the machine stays warm 30 s between them). Prepare first, here:
#     python tools/prepare_gpu_pretraining.py --corpus runs/corpus_v2 ...
# then give the device tool, with carry [".gpu"]:
#     bash tools/gpu_device_checks.sh pretrain_and_test    (about 6 minutes)
#     bash tools/gpu_device_checks.sh benchmark            (what is left)
#
# pretrain_and_test: the prepared pretraining run (.gpu/command.sh) and,
#   beside it on the same GPU, the library's tests on JAX (`-m "not large"`,
#   TensorFlow blocked as here); compare $OUT/gpu_tests.log with the same
#   command run here (tools/compare_test_runs.py).
# benchmark: benchmarks/gpu_pretraining.py, the GPU to itself, one shape at
#   a time (the JSON is rewritten after each), benchmarks/step_cost.py, then
#   benchmarks/gpu_attention.py
#   (full attention against LSH by length), until BENCHMARK_SECONDS.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source tools/device_wheels.sh || exit
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1 SKIP_WHEELS=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/device.txt"

case "${1:?pretrain_and_test or benchmark}" in
  pretrain_and_test)
    # The run keeps the GPU memory it needs; the test workers take theirs as
    # they go, instead of JAX's default 75 % each.
    (XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 bash -c "$(cat .gpu/command.sh)") &
    training=$!
    # The library's folders only: over the whole tree (CLI and example
    # subprocesses) pytest-xdist stopped with an internal error after 36 s
    # on the H200 (2026-11-27); these 577 tests ran in 120 s with 8 workers.
    XLA_PYTHON_CLIENT_PREALLOCATE=false timeout "${TEST_SECONDS:-330}" \
      python3 -m pytest -p tests.tensorflow_blocked tests/layers tests/models \
      tests/training tests/data tests/editing tests/utils tests/distill tests/backends \
      tests/pipelines tests/datasets tests/convert -m "not large" -n 6 -rA -q \
      --continue-on-collection-errors -p no:cacheprovider >"$OUT/gpu_tests.log" 2>&1
    echo "pytest exit: $?" >>"$OUT/gpu_tests.log"
    wait "$training"
    ;;
  benchmark)
    deadline=$((SECONDS + ${BENCHMARK_SECONDS:-360}))
    for shape in ${SHAPES:-tiny base}; do
      left=$((deadline - SECONDS))
      [ "$left" -gt 60 ] || break
      # No preallocation: JAX's default 75 % of the GPU, held by this
      # process, left Hugging Face's side out of memory at the base shape.
      XLA_PYTHON_CLIENT_PREALLOCATE=false timeout "$left" python3 benchmarks/gpu_pretraining.py \
        --shapes "$shape" --output "benchmarks/results/gpu_pretraining_$shape.json" 2>&1 \
        | tee -a "$OUT/benchmark.log"
      cp "benchmarks/results/gpu_pretraining_$shape.json" "$OUT/" 2>/dev/null
    done
    # XLA's cost of both sides' step as the GPU compiler fuses it (compiling
    # only, under a minute): equal arithmetic, or where ours does more.
    left=$((deadline - SECONDS))
    if [ "$left" -gt 150 ]; then
      XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 python3 benchmarks/step_cost.py \
        --output benchmarks/results/step_cost_gpu.json 2>&1 | tee -a "$OUT/benchmark.log"
      cp benchmarks/results/step_cost_gpu.json "$OUT/" 2>/dev/null
    fi
    # Then full attention (cuDNN) against LSH by length, in what is left.
    left=$((deadline - SECONDS))
    if [ "$left" -gt 90 ]; then
      XLA_PYTHON_CLIENT_PREALLOCATE=false python3 benchmarks/gpu_attention.py \
        --max_seconds $((left - 30)) --output benchmarks/results/gpu_attention.json 2>&1 \
        | tee -a "$OUT/benchmark.log"
      cp benchmarks/results/gpu_attention.json "$OUT/" 2>/dev/null
    fi
    ;;
esac
