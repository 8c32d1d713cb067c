#!/usr/bin/env bash
# One time-budgeted pretraining run on the device machine (JAX, bf16),
# continuing a preset on the tokenized corpus that
# tools/prepare_gpu_pretraining.py put in .gpu/ (carried by name). Its
# settings come as variables (.gpu/command.sh writes them). What comes back
# in $OUT: the run's log and one archive of the preset, the curve, the
# metrics and the settings, split into 15 MiB parts:
#     cat run.tgz.part-* | tar -xzf - -C tools/progress/<name>
set -euo pipefail
: "${PRESET:?}" "${TRAIN_STEPS:?}" "${BATCH_SIZE:?}" "${TIME_BUDGET_MINUTES:?}"
OUT=${OUT:-/tmp/out}
RUN=${RUN:-/tmp/gpu_pretraining}
GPU_DIR=${GPU_DIR:-.gpu}
mkdir -p "$OUT"
if [ -z "${SKIP_WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$GPU_DIR"/wheels/*.whl
  export PYTHONPATH="/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
python3 -c "import jax; print('devices:', jax.devices())" | tee "$OUT/log.txt"
set +e
python3 -m keras_albert pretrain \
  --corpus "$GPU_DIR/corpus/train.npz" --eval_corpus "$GPU_DIR/corpus/eval.npz" \
  --init_preset "$PRESET" --output "$RUN" \
  --max_seq_length "${MAX_SEQ_LENGTH:-128}" --max_predictions_per_seq 20 \
  --dupe_factor "${DUPE_FACTOR:-5}" --batch_size "$BATCH_SIZE" \
  --train_steps "$TRAIN_STEPS" --learning_rate "${LEARNING_RATE:-3e-4}" --optimizer adamw \
  --checkpoint_every "${CHECKPOINT_EVERY:-1000}" --precision "${PRECISION:-mixed_bfloat16}" \
  --time_budget_minutes "$TIME_BUDGET_MINUTES" --seed "${SEED:-45678}" --eval_seed 12346 \
  2>&1 | tee -a "$OUT/log.txt"
status=${PIPESTATUS[0]}
set -e
# Whatever the run left is packed, a failed run's partial curve included.
files=$(cd "$RUN" 2>/dev/null && ls -d preset curve.jsonl curve.png metrics.json settings.json 2>/dev/null || true)
if [ -n "$files" ]; then
  tar -C "$RUN" -czf - $files | split -b 15m - "$OUT/run.tgz.part-"
fi
exit "$status"
