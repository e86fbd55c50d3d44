#!/usr/bin/env bash
# The first minute of a class, trained on the CPU: today's model carried over to a vocabulary for what people
# type (learned from both corpora, both sides and the phrasebook; byte fallback; digits split), then trained on
# Multi30k + Tatoeba + the classroom phrasebook with names and numbers drawn anew, copy pairs, city templates
# and typing noise (dropped apostrophes, British spellings, missing capitals, ...). One thread, resumable.
# Usage: tools/first_minute.sh PAIR train    trains (or resumes) runs/PAIR-first
#        tools/first_minute.sh PAIR save     keeps the resumable state in git (resume/PAIR: fp32 weights,
#                                            bf16 Adam moments, the vocabulary, the curves, the new snapshots)
#        tools/first_minute.sh PAIR finish   trains to the end, keeps the last epoch, then records every test
#                                            score and the class sets
# Both pairs side by side, one core each: `setsid nohup tools/first_minute.sh en-de finish > runs/en-de.log 2>&1 &`.
# DATA (default ../shared/data) holds multi30k/ and tatoeba/. The starting point is the checkpoint shipped at
# commit FROM (taken from git, so that a new checkpoint in checkpoints/ changes nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
pair=$1 mode=${2:-train}
data=${DATA:-../shared/data} out=runs/$pair-first keep=resume/$pair from=runs/from/$pair
FROM=b0e78b9 EPOCHS=${EPOCHS:-9}

if [ "$mode" = save ]; then
  mkdir -p "$keep/timeline"
  python -m transformer keep-state --run "$out" --to "$keep"
  find "$out/timeline" -name 'epoch*.safetensors' -newer "$out/train/spm.model" -exec cp {} "$keep/timeline/" \; 2>/dev/null || true
  du -sh "$keep"; exit 0
fi
if [ ! -e "$out/train/state.safetensors" ] && [ -e "$keep/state.safetensors" ]; then  # a new machine: from git
  mkdir -p "$out/train" "$out/timeline"
  cp "$keep/state.safetensors" "$keep/metrics.json" "$keep/spm.model" "$out/train/"
  cp "$keep"/timeline/*.safetensors "$out/timeline/" 2>/dev/null || true
fi
if [ ! -e "$from/model.safetensors" ]; then
  mkdir -p runs/from && git archive "$FROM" "checkpoints/$pair" | tar -x --strip-components=1 -C runs/from
fi
last=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['epochs'][-1]['epoch'])" "$from/metrics.json")

OMP_NUM_THREADS=1 python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" --pair "$pair" \
  --out "$out" --init-from "$from" --new-vocab true --vocab-size 8000 --byte-fallback true --split-digits true \
  --resume --epochs "$EPOCHS" --phrasebook data/phrasebook.txt --oversample multi30k:2,phrasebook:8 \
  --swap-names 0.5 --templates 0.02 --copies 0.005 --source-noise 0.3 \
  --warmup 400 --lr-scale 0.5 --hold-peak true --cooldown-epochs 3 --average-last 3 --max-tokens 8192 \
  --dropout 0.2 --attn-dropout 0.1 --act-dropout 0.1 --label-smoothing 0.1 --threads 1 --save-every-s 240 \
  --val-bleu-every 2 --snapshot-epochs "$((last + 1)),$((last + 2)),$((last + 4)),$((last + 8))" \
  --timeline assets/examples.json 2>&1 | grep --line-buffered -v "it/s"
[ "$mode" = finish ] || exit 0

# The run averages its last 3 epochs; on val the last epoch alone was better for both pairs (docs/training.md),
# and it is what ships
python -m transformer average --checkpoint "$out" --data-dir "$data/multi30k" --last 1
tools/test_scores.sh "$out" "$data" 1
python -m transformer evaluate --checkpoint "$out" --class-sets --record --threads 1
