#!/usr/bin/env bash
# The shipped checkpoints' third stage: Multi30k + Tatoeba with sources typed as a class types them
# (transformer/noise.py: lowercase, no final punctuation, capitals), trained on from the second stage.
# Usage: tools/typed.sh PAIR train     trains (or resumes) runs/PAIR-typed
#        tools/typed.sh PAIR save      copies the resumable state to resume/PAIR-typed (small enough for git)
#        tools/typed.sh PAIR finish    trains to the end, then records the test scores (four ways of typing)
# One cycle of EPOCHS epochs (default 16, numbered on from 131 for EN→DE, 130 for EN→FR): warm-up over 400 steps
# to the second stage's peak, held, then a linear fall to 0 over the last 4 epochs; a share NOISE (default 0.3)
# of the sources is perturbed, drawn anew each epoch; the last 2 epochs averaged.
# SECOND is the second-stage checkpoint (default: taken from git, commit 03ccb63). DATA (default ../shared/data)
# holds multi30k/ and tatoeba/. THREADS: torch threads (default 1; 0 for all, e.g. on a GPU machine).
set -euo pipefail
pair=$1 mode=${2:-train}
data=${DATA:-../shared/data} noise=${NOISE:-0.3} epochs=${EPOCHS:-16} threads=${THREADS:-1}
out=${OUT_DIR:-runs/$pair-typed} keep=resume/$pair-typed second=${SECOND:-runs/second/$pair}

if [ "$mode" = save ]; then  # the resumable state (fp32: exact resumption) and the epoch log, for git
  mkdir -p "$keep/train"
  cp "$out/train/state.safetensors" "$out/train/metrics.json" "$out/train/spm.model" "$keep/train/"
  exit 0
fi
if [ ! -e "$out/train/state.safetensors" ] && [ -e "$keep/train/state.safetensors" ]; then
  mkdir -p "$out" && cp -r "$keep/." "$out/"
fi
if [ ! -e "$second/model.safetensors" ]; then
  mkdir -p runs/second && git archive 03ccb63 "checkpoints/$pair" | tar -x --strip-components=1 -C runs/second
fi
oversample=multi30k:2
last=$(python -c "import json; print(json.load(open('$second/metrics.json'))['epochs'][-1]['epoch'])")
python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" \
  --pair "$pair" --out "$out" --init-from "$second" --resume --epochs "$epochs" --warmup 400 --lr-scale 0.5 \
  --hold-peak true --cooldown-epochs 4 --average-last 2 --oversample "$oversample" --max-tokens 8192 --dropout 0.2 \
  --attn-dropout 0.1 --act-dropout 0.1 --threads "$threads" --source-noise "$noise" --val-bleu-every 2 \
  --snapshot-epochs "$((last + 4))" --save-every-s 240 --timeline assets/examples.json 2>&1 | grep -v "it/s"
[ "$mode" = finish ] || exit 0

tools/test_scores.sh "$out" "$data" "$threads"
