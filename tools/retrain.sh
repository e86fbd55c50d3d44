#!/usr/bin/env bash
# Retrain a shipped checkpoint with the recipe in docs/training.md, choose the averaging and the length penalty on val,
# then record the test scores in its metrics.json. Usage: tools/retrain.sh PAIR OUT DATA_DIR [more train flags]
# (e.g. tools/retrain.sh en-de runs/en-de ../shared/data/multi30k --spm-alpha 0.2)
set -euo pipefail
pair=$1 out=$2 data=$3
shift 3
src=${pair%-*} tgt=${pair#*-}
python -m transformer train --data-dir "$data" --pair "$pair" --out "$out" \
  --d-model 128 --n-heads 4 --n-encoder-layers 4 --n-decoder-layers 4 --d-ff 256 --norm-first true \
  --dropout 0.3 --attn-dropout 0.1 --act-dropout 0.1 --vocab-size 8000 --max-tokens 8192 \
  --warmup 800 --lr-scale 1.6 --hold-peak true --cooldown-epochs 40 --epochs 120 --average-last 10 \
  --val-bleu-every 4 --threads 2 "$@" 2>&1 | grep -v "it/s"
[ -n "${TRAIN_ONLY:-}" ] && exit 0  # the choices below can run on another machine (they need <out>/train/)

bleu() {  # the cased BLEU figure from evaluate's last (JSON) line
  python -m transformer evaluate --checkpoint "$out" "$@" | tail -1 | python -c "import json, sys; print(json.load(sys.stdin)['bleu'])"
}
best_k=10 best=0
for k in 1 5 10; do
  b=$(python -m transformer average --checkpoint "$out" --data-dir "$data" --last $k | sed -n 's/.*greedy) //p')
  echo "val greedy, last $k averaged: BLEU $b"
  if python -c "import sys; sys.exit(not $b > $best)"; then best=$b best_k=$k; fi
done
python -m transformer average --checkpoint "$out" --data-dir "$data" --last $best_k
best_lp=1.0 best=0
for lp in 0.6 0.8 1.0 1.2 1.5; do
  b=$(bleu --src "$data/val.$src.gz" --ref "$data/val.$tgt.gz" --beam 5 --length-penalty $lp)
  echo "val beam 5, length penalty $lp: BLEU $b"
  if python -c "import sys; sys.exit(not $b > $best)"; then best=$b best_lp=$lp; fi
done
echo "chosen on val: last $best_k averaged, length penalty $best_lp"
python -m transformer evaluate --checkpoint "$out" --src "$data/test_2016_flickr.$src.gz" \
  --ref "$data/test_2016_flickr.$tgt.gz" --record test2016_greedy
python -m transformer evaluate --checkpoint "$out" --src "$data/test_2016_flickr.$src.gz" \
  --ref "$data/test_2016_flickr.$tgt.gz" --beam 5 --length-penalty $best_lp --record test2016_beam5
