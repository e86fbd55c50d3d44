#!/usr/bin/env bash
# The cool-down the device run of 2026-11-26 did not reach: tools/gpu_train.sh trained both pairs 14 of their 24
# epochs on the H200 before the call's time limit, at the peak rate (no cool-down yet). This finishes each on the
# CPU as a second stage: one epoch from the epoch-14 weights (runs/e14/PAIR, as the device sent them back), a
# fresh Adam, 100 warm-up steps to 8e-4, the rate then falling linearly to 0 over the epoch; the same data,
# augmentation and bf16 autocast. One pair at a time, two threads, resumable.
# Usage: tools/cool_down.sh PAIR        trains (or resumes) runs/PAIR-cool
#        tools/cool_down.sh PAIR ship   puts it in checkpoints/PAIR: its timeline keeps the first epoch's snapshot,
#                                       in int4 (the tree a device call carries stays under 64 MiB), then records
#                                       every test score, the class sets and the unsure marks' calibration
# DATA: the folder that holds multi30k/ and tatoeba/ (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
pair=$1 data=${DATA:-../shared/data}
if [ "${2:-}" = ship ]; then
  rm -rf "checkpoints/$pair" && mkdir -p "checkpoints/$pair/timeline"
  cp "runs/$pair-cool"/{config.json,model.safetensors,spm.model,metrics.json} "checkpoints/$pair/"
  python -c "import sys; from safetensors.torch import load_file; from transformer.checkpoint import from_int8_rows, int4_rows, save_weights
save_weights(sys.argv[2], int4_rows(from_int8_rows(load_file(sys.argv[1]))))" \
    "runs/$pair-cool/timeline/epoch1.safetensors" "checkpoints/$pair/timeline/epoch1.safetensors"
  tools/test_scores.sh "checkpoints/$pair" "$data" 2
  python -m transformer evaluate --checkpoint "checkpoints/$pair" --class-sets --record --threads 2
  python tools/calibrate_unsure.py --checkpoint "checkpoints/$pair" --record --data-dir "$data"
  du -sh "checkpoints/$pair"
  exit 0
fi
python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" --pair "$pair" \
  --out "runs/$pair-cool" --init-from "runs/e14/$pair" --resume --epochs 1 --bf16 true \
  --dropout 0.2 --attn-dropout 0.1 --act-dropout 0.1 --label-smoothing 0.1 \
  --max-tokens 8192 --warmup 100 --lr-scale 0.13 --hold-peak true --cooldown-epochs 1 --average-last 1 \
  --clip-norm 1.0 --threads 2 --save-every-s 240 --val-bleu-every 1 --snapshot-epochs "" \
  --phrasebook data/phrasebook.txt,data/classroom --oversample multi30k:2,phrasebook:8,words:2 \
  --swap-names 0.5 --templates 0.02 --copies 0.005 --source-noise 0.3 --timeline assets/examples.json \
  2>&1 | grep --line-buffered -v "it/s"
