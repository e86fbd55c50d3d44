#!/usr/bin/env bash
# The shipped checkpoints' second stage: Multi30k + Tatoeba, trained on from the Multi30k-only checkpoints.
# Usage: tools/everyday.sh PAIR train    trains (or resumes) runs/PAIR with one thread, both cycles
#        tools/everyday.sh PAIR save     copies the resumable state to resume/PAIR (small enough for git)
#        tools/everyday.sh PAIR finish   trains to the end, then records Multi30k and Tatoeba test scores
# Two cycles, the second resumed from the first's end: the rate back at its peak, then falling to 0 over 3 epochs
# again. Cycle 1 (both pairs): epochs 121-126, Multi30k twice an epoch beside Tatoeba once. Cycle 2: EN→DE epochs
# 127-130 with the same mix; EN→FR epochs 127-129 with Multi30k four times (its Multi30k score had fallen).
# The first stage is the Multi30k-only checkpoint shipped before this stage, taken from git (commit FIRST).
# DATA (default ../shared/data) holds multi30k/ and tatoeba/. A run cut short resumes exactly from
# runs/PAIR/train/state.safetensors; on a fresh machine the state comes back from resume/PAIR if saved there.
set -euo pipefail
pair=$1 mode=${2:-train}
data=${DATA:-../shared/data}
out=runs/$pair keep=resume/$pair first=runs/first/$pair
FIRST=49f0d1b

if [ "$mode" = save ]; then  # the resumable state (fp32: exact resumption) and the new snapshots, for git
  mkdir -p "$keep/train" "$keep/timeline"
  cp "$out/train/state.safetensors" "$out/train/metrics.json" "$out/train/spm.model" "$keep/train/"
  for f in "$out"/timeline/epoch12[1-9].safetensors; do [ -e "$f" ] && cp "$f" "$keep/timeline/"; done  # this stage's
  exit 0
fi
if [ ! -e "$out/train/state.safetensors" ] && [ -e "$keep/train/state.safetensors" ]; then
  mkdir -p "$out" && cp -r "$keep/." "$out/"
fi
if [ ! -e "$first/model.safetensors" ]; then
  mkdir -p runs/first && git archive "$FIRST" "checkpoints/$pair" | tar -x --strip-components=1 -C runs/first
fi

cycle() {  # EPOCHS OVERSAMPLE: train (or resume) until epoch 120 + EPOCHS
  OMP_NUM_THREADS=1 python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" \
    --pair "$pair" --out "$out" --init-from "$first" --resume --epochs "$1" --warmup 400 --lr-scale 0.5 \
    --hold-peak true --cooldown-epochs 3 --average-last 2 --oversample "$2" --max-tokens 8192 --dropout 0.2 \
    --attn-dropout 0.1 --act-dropout 0.1 --threads 1 --snapshot-epochs 121,122,124 --save-every-s 240 \
    --timeline assets/examples.json 2>&1 | grep -v "it/s"
}
cycle 6 multi30k:2
if [ "$pair" = en-fr ]; then cycle 9 multi30k:4; else cycle 10 multi30k:2; fi
[ "$mode" = finish ] || exit 0

ev() { python -m transformer evaluate --checkpoint "$out" --threads 1 "$@"; }
ev --data-dir "$data/multi30k" --split test --record test2016_greedy
ev --data-dir "$data/multi30k" --split test --beam 4 --record test2016_beam4
ev --data-dir "$data/tatoeba" --split test --record tatoeba_test_greedy
ev --data-dir "$data/tatoeba" --split test --beam 4 --record tatoeba_test_beam4
