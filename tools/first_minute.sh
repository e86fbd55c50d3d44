#!/usr/bin/env bash
# A new generation of models for what a class types in its first minute (greetings, names, numbers), trained
# from scratch on a GPU: a vocabulary learned from both corpora and both sides (byte fallback, digits split),
# names and numbers drawn anew each epoch (transformer/training/augment.py, training/names.json), template
# introductions, source noise from the start, Multi30k twice an epoch, the last epochs averaged.
# Usage: tools/first_minute.sh PAIR sizes    short runs at each candidate size (SIZES), their validation table
#        tools/first_minute.sh PAIR train    trains (or resumes) runs/PAIR-first with the chosen size
#        tools/first_minute.sh PAIR finish   trains to the end, then records every test score and the class sets
#        tools/first_minute.sh PAIR split    cuts the run's files into parts of at most 15 MiB (to bring them back)
# Detached on a GPU machine: `setsid nohup tools/first_minute.sh en-de finish > runs/en-de.log 2>&1 &`.
# State is saved every SAVE_S seconds (default 180) and at each epoch's end; a run cut short resumes exactly.
# DATA (default ../shared/data) holds multi30k/ and tatoeba/. THREADS: torch threads (0: all cores).
# The model: D_MODEL, D_FF, LAYERS (encoder and decoder each), HEADS, VOCAB; EPOCHS, MAX_TOKENS.
set -euo pipefail
pair=$1 mode=${2:-train}
data=${DATA:-../shared/data} threads=${THREADS:-0} save_s=${SAVE_S:-180}
d_model=${D_MODEL:-256} d_ff=${D_FF:-1024} layers=${LAYERS:-4} heads=${HEADS:-4} vocab=${VOCAB:-12000}
epochs=${EPOCHS:-40} max_tokens=${MAX_TOKENS:-12000} out=${OUT_DIR:-runs/$pair-first}

train() {  # train OUT EPOCHS VOCAB LAYERS D_MODEL D_FF [more options]
  local dir=$1 n=$2 v=$3 l=$4 d=$5 f=$6; shift 6
  python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" --pair "$pair" --out "$dir" \
    --resume --epochs "$n" --vocab-size "$v" --byte-fallback true --split-digits true \
    --n-encoder-layers "$l" --n-decoder-layers "$l" --d-model "$d" --d-ff "$f" --n-heads "$heads" \
    --swap-names 0.5 --templates 0.02 --source-noise 0.3 --oversample multi30k:2 --max-tokens "$max_tokens" \
    --warmup 4000 --lr-scale 2 --dropout 0.1 --attn-dropout 0.1 --label-smoothing 0.1 --threads "$threads" \
    --save-every-s "$save_s" --timeline assets/examples.json "$@" 2>&1 | grep --line-buffered -v "it/s"
}

case $mode in
sizes)  # SIZES: vocabulary:layers:d_model:d_ff, each trained SIZE_EPOCHS epochs; the table reads the val BLEU
  for s in ${SIZES:-8000:4:256:1024 12000:4:256:1024 16000:4:256:1024 12000:6:256:1024}; do
    IFS=: read -r v l d f <<<"$s"
    train "runs/sizes/$pair-$s" "${SIZE_EPOCHS:-8}" "$v" "$l" "$d" "$f" --snapshot-epochs "" --average-last 1 \
      --val-bleu-every 1 > "runs/sizes/$pair-$s.log" &
  done
  wait
  python - "$pair" <<'PY'
import json, pathlib, sys
print("| vocabulary:layers:d_model:d_ff | parameters | val BLEU Multi30k | val BLEU Tatoeba | val loss |")
print("| --- | ---: | ---: | ---: | ---: |")
for d in sorted(pathlib.Path("runs/sizes").glob(sys.argv[1] + "-*")):
    if d.is_dir() and (d / "metrics.json").exists():
        m = json.loads((d / "metrics.json").read_text()); last = m["epochs"][-1]; v = last["val_bleu_by_corpus"]
        print(f"| {d.name.split('-', 2)[2]} | {m['parameters']:,} | {v.get('multi30k', 0):.2f} | {v.get('tatoeba', 0):.2f} | {last['val_loss']:.3f} |")
PY
  ;;
train|finish)
  train "$out" "$epochs" "$vocab" "$layers" "$d_model" "$d_ff" --snapshot-epochs "1,2,4,$((epochs / 2))" \
    --average-last 5 --val-bleu-every 4 --cooldown-epochs 0
  [ "$mode" = finish ] || exit 0
  tools/test_scores.sh "$out" "$data" "$threads"
  python -m transformer evaluate --checkpoint "$out" --class-sets --record
  ;;
split)  # parts of at most 15 MiB under runs/parts/PAIR/ (join with: cat NAME.part* > NAME)
  mkdir -p "runs/parts/$pair"
  for f in "$out"/model.safetensors "$out"/spm.model "$out"/config.json "$out"/metrics.json "$out"/timeline/*.safetensors \
           "$out"/train/state.safetensors; do
    [ -e "$f" ] && split -b 15M -d "$f" "runs/parts/$pair/$(echo "${f#"$out"/}" | tr / _).part"
  done
  ls -la "runs/parts/$pair"
  ;;
*) echo "usage: tools/first_minute.sh PAIR sizes|train|finish|split" >&2; exit 2 ;;
esac
