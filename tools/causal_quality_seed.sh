#!/usr/bin/env bash
# One more seed S of the causal-LM comparison (issue 37 item 4), on this CPU:
# albert_tiny_causal_en's recipe (tools/progress/albert_tiny_causal_en_v1)
# pretrained with pipeline seed 45678+S, then benchmarks/causal_quality.py
# --seed S (GPT-2 trained with it, the n-gram model's carve-out drawn with it).
# Needs runs/causal_cpu_prep (the prepare command in that progress README).
# Run again after a kill: pretraining resumes from its checkpoints.
#     bash tools/causal_quality_seed.sh 2    # about 50 minutes on 2 cores
set -euo pipefail
S=${1:?seed}
PYTHON=${PYTHON:-.venv/bin/python}
G=runs/causal_cpu_prep
R=runs/albert_tiny_causal_en_cpu_seed$S
[ -f "$G/corpus/train.npz" ] || { echo "error: $G/corpus/train.npz missing: prepare it first" >&2; exit 2; }
if [ ! -e "$R/vocabulary.spm" ]; then
  mkdir -p "$R" && cp "$G/vocabulary.spm" "$R/"
  "$PYTHON" -c "import sys; from keras_albert.utils.run_directory import record_run_outputs as r; r(sys.argv[1], ['vocabulary.spm'])" "$R"
fi
KERAS_BACKEND=tensorflow nice "$PYTHON" -m keras_albert pretrain --objective causal_lm --config "$G/config.json" \
  --vocab_size 8000 --corpus "$G/corpus/train.npz" --eval_corpus "$G/corpus/eval.npz" --output "$R" \
  --max_seq_length 128 --batch_size 32 --train_steps 3000 --learning_rate 5e-4 --optimizer adamw \
  --checkpoint_every 300 --precision float32 --time_budget_minutes 100 --seed $((45678 + S)) --eval_seed 12346
KERAS_BACKEND=tensorflow nice "$PYTHON" benchmarks/causal_quality.py --preset "$R/preset" \
  --train_corpus "$G/corpus/train.npz" --eval_corpus "$G/corpus/eval.npz" --train_gpt2_tokens 12288000 \
  --train_batch_size 32 --learning_rate 5e-4 --gpt2_output "runs/gpt2_causal_cpu_seed$S" \
  --time_budget_minutes 60 --seed "$S" --output "runs/causal_quality_seed$S.json"
