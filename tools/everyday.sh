#!/usr/bin/env bash
# The shipped checkpoints' second stage: Multi30k (twice an epoch) + Tatoeba, from the Multi30k-only checkpoint.
# Usage: tools/everyday.sh PAIR train    trains (or resumes) runs/PAIR with one thread
#        tools/everyday.sh PAIR save     copies the resumable state to training/PAIR (small enough for git)
#        tools/everyday.sh PAIR finish   resumes to the end, then records Multi30k and Tatoeba test scores
# EPOCHS (default 6): the stage's length. A finished run resumed with a larger EPOCHS goes on in a second cycle:
# the rate back at its peak, then falling to 0 over the last 3 epochs again (EN→DE shipped with EPOCHS=10).
# DATA (default ../shared/data) holds multi30k/ and tatoeba/. A run cut short resumes exactly from
# runs/PAIR/train/state.safetensors; on a fresh machine the state comes back from training/PAIR.
# training/examples.json: the sentences translated after every epoch (captions and everyday sentences), the
# page's examples once this stage ships (copied to assets/examples.json with the checkpoints).
set -euo pipefail
pair=$1 mode=${2:-train}
data=${DATA:-../shared/data} epochs=${EPOCHS:-6}
out=runs/$pair keep=training/$pair

if [ "$mode" = save ]; then  # the resumable state (fp32: exact resumption) and the new snapshots, for git
  mkdir -p "$keep/train" "$keep/timeline"
  cp "$out/train/state.safetensors" "$out/train/metrics.json" "$out/train/spm.model" "$keep/train/"
  for f in "$out"/timeline/epoch12[1-9].safetensors; do [ -e "$f" ] && cp "$f" "$keep/timeline/"; done  # this stage's
  exit 0
fi
if [ ! -e "$out/train/state.safetensors" ] && [ -e "$keep/train/state.safetensors" ]; then
  mkdir -p "$out" && cp -r "$keep/." "$out/"
fi
OMP_NUM_THREADS=1 python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" --pair "$pair" \
  --out "$out" --init-from "checkpoints/$pair" --resume --epochs "$epochs" --warmup 400 --lr-scale 0.5 --hold-peak true \
  --cooldown-epochs 3 --average-last 2 --oversample multi30k:2 --max-tokens 8192 --dropout 0.2 --attn-dropout 0.1 \
  --act-dropout 0.1 --threads 1 --snapshot-epochs 121,122,124 --save-every-s 240 --timeline training/examples.json \
  2>&1 | grep -v "it/s"
[ "$mode" = finish ] || exit 0

ev() { python -m transformer evaluate --checkpoint "$out" --threads 1 "$@"; }
ev --data-dir "$data/multi30k" --split test --record test2016_greedy
ev --data-dir "$data/multi30k" --split test --beam 4 --record test2016_beam4
ev --data-dir "$data/tatoeba" --split test --record tatoeba_test_greedy
ev --data-dir "$data/tatoeba" --split test --beam 4 --record tatoeba_test_beam4
