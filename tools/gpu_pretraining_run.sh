#!/usr/bin/env bash
# One time-budgeted pretraining run on the device machine (JAX, bf16) on
# the tokenized corpus that tools/prepare_gpu_pretraining.py put in .gpu/
# (carried by name). Its settings come as variables (.gpu/command.sh
# writes them):
#   NAME            the run; its folder is $RUN (default
#                   /tmp/gpu_pretraining/$NAME): running the same command
#                   again on a machine still warm resumes from its checkpoints
#   OBJECTIVE       mlm (masked LM + SOP) or causal_lm (next token)
#   PRESET          continue this preset's weights, or
#   FROM_CONFIG=1   new weights of $GPU_DIR/config.json, with the vocabulary
#                   $GPU_DIR/vocabulary.spm that the corpus was tokenized with
# What comes back in $OUT: the run's log and one archive of the preset, the
# curve, the metrics, the settings and the plan, split into 15 MiB parts:
#     mkdir tools/progress/<name> && cat run.tgz.part-* | tar -xzf - -C tools/progress/<name>
set -euo pipefail
: "${NAME:?}" "${TRAIN_STEPS:?}" "${BATCH_SIZE:?}" "${TIME_BUDGET_MINUTES:?}"
OBJECTIVE=${OBJECTIVE:-mlm}
OUT=${OUT:-/tmp/out}
RUN=${RUN:-/tmp/gpu_pretraining/$NAME}
GPU_DIR=${GPU_DIR:-.gpu}
case "$OBJECTIVE" in
  mlm) objective_flags=(--max_predictions_per_seq 20 --dupe_factor "${DUPE_FACTOR:-5}") ;;
  causal_lm) objective_flags=() ;;  # pretrain refuses the masked-LM flags here
  *) echo "error: OBJECTIVE=$OBJECTIVE: expected mlm or causal_lm" >&2; exit 2 ;;
esac
if [ -n "${FROM_CONFIG:-}" ]; then
  [ -f "$GPU_DIR/config.json" ] && [ -f "$GPU_DIR/vocabulary.spm" ] || {
    echo "error: FROM_CONFIG=1 needs $GPU_DIR/config.json and $GPU_DIR/vocabulary.spm (prepare with --config)" >&2
    exit 2
  }
  vocabulary_size=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['vocabulary_size'])" \
    "$GPU_DIR/config.json")
  start_flags=(--config "$GPU_DIR/config.json" --vocab_size "$vocabulary_size")
else
  : "${PRESET:?PRESET or FROM_CONFIG=1}"
  start_flags=(--init_preset "$PRESET")
fi
mkdir -p "$OUT"
if [ -z "${SKIP_WHEELS:-}" ]; then
  source tools/device_wheels.sh
fi
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
python3 -c "import jax; print('devices:', jax.devices())" | tee "$OUT/log.txt"
if [ -n "${FROM_CONFIG:-}" ] && [ ! -e "$RUN/vocabulary.spm" ]; then
  # The run starts with the vocabulary the corpus was tokenized with
  # (`pretrain` would otherwise train one on the text); recorded as the
  # run's own file, so `pretrain` reuses it as it would its own. Run with
  # -m, the package leaves its API (Keras, the backend) unimported: 0.1 s.
  mkdir -p "$RUN"
  cp "$GPU_DIR/vocabulary.spm" "$RUN/vocabulary.spm"
  python3 -m keras_albert.utils.run_directory "$RUN" vocabulary.spm
fi
set +e
python3 -m keras_albert pretrain --objective "$OBJECTIVE" "${start_flags[@]}" \
  --corpus "$GPU_DIR/corpus/train.npz" --eval_corpus "$GPU_DIR/corpus/eval.npz" --output "$RUN" \
  --max_seq_length "${MAX_SEQ_LENGTH:-128}" "${objective_flags[@]}" --batch_size "$BATCH_SIZE" \
  --train_steps "$TRAIN_STEPS" --learning_rate "${LEARNING_RATE:-3e-4}" --optimizer adamw \
  --checkpoint_every "${CHECKPOINT_EVERY:-1000}" --precision "${PRECISION:-mixed_bfloat16}" \
  --time_budget_minutes "$TIME_BUDGET_MINUTES" --seed "${SEED:-45678}" --eval_seed 12346 \
  2>&1 | tee -a "$OUT/log.txt"
status=${PIPESTATUS[0]}
set -e
if [ -d "$RUN" ] && [ -f "$GPU_DIR/plan.json" ]; then cp "$GPU_DIR/plan.json" "$RUN/plan.json"; fi
# Whatever the run left is packed, a failed run's partial curve included.
files=$(cd "$RUN" 2>/dev/null && ls -d preset curve.jsonl curve.png metrics.json settings.json plan.json 2>/dev/null || true)
if [ -n "$files" ]; then
  tar -C "$RUN" -czf - $files | split -b 15m - "$OUT/run.tgz.part-"
fi
exit "$status"
