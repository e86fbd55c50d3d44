#!/usr/bin/env bash
# The second minute, trained on one GPU in about ten minutes for both pairs: from scratch, on Multi30k + Tatoeba +
# the classroom corpus (data/phrasebook.txt and data/classroom/, its held-out share left out) with the augmentation
# of the first minute (names and numbers drawn anew, copy pairs, templates, typing noise), bf16 autocast, the
# shipped vocabulary. Two candidate sizes per pair train side by side on the one GPU within one time budget;
# each pair keeps the one with the better validation BLEU (both corpora), as shipped (fp16, its first epoch in
# int4: the tree a device call carries stays under its 64 MiB with the corpora).
#
#   tools/gpu_train.sh                 # on the GPU machine; DATA (default ../shared/data) holds multi30k/, tatoeba/
#   SIZES="a:256:4:1024:4:4" BUDGET_S=60 EPOCHS=3 tools/gpu_train.sh    # a short run (on the CPU: a dry run)
#   NO_BENCH=1 skips the throughput table. On 2026-11-26 (H200, four runs at once) an epoch took about 21 s;
#   the default budget fits the device's ten-minute call with the start-up, the choice and the packing.
#
# Writes runs/gpu/: throughput.md (tokens/s of each candidate shape), each run's log and metrics, choice.json,
# and the chosen checkpoints packed as pack.tar.* (15 MB parts); tools/gpu_train.sh unpack puts them in checkpoints/.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data} out=runs/gpu budget=${BUDGET_S:-400} epochs=${EPOCHS:-60}
sizes=${SIZES:-"a:256:4:1024:4:4 b:256:4:1024:6:4"}  # name:d_model:heads:d_ff:encoder layers:decoder layers
threads=${THREADS:-3}

if [ "${1:-}" = unpack ]; then  # here, after the parts came back: checkpoints/PAIR replaced by the chosen run
  tmp=$(mktemp -d) && cat "${2:-$out}"/pack.tar.* | tar -x -C "$tmp"
  for pair in "$tmp"/*; do rm -rf "checkpoints/$(basename "$pair")" && mv "$pair" checkpoints/; done
  rmdir "$tmp"; exit 0
fi

mkdir -p "$out"
if python -c "import torch, sys; sys.exit(not torch.cuda.is_available())"; then device=cuda; else device=cpu; fi
# 1. What each shape trains at, bf16 against fp32: today's, the candidates, and up to the paper's base
if [ "$device" = cuda ] && [ -z "${NO_BENCH:-}" ]; then
  python benchmarks/train_precision.py --device cuda --tokens 16384 --steps 20 \
    --sizes 128:256:4:4,256:1024:4:4,256:1024:6:4,384:1536:6:6,512:2048:6:6 | tee "$out/throughput.md"
fi

# 2. Every pair with every candidate, at once (a small model leaves most of the GPU idle between its kernels)
for pair in en-de en-fr; do
  for size in $sizes; do
    IFS=: read -r name d heads ff enc dec <<<"$size"
    run=runs/$pair-$name
    rm -rf "$run"
    OMP_NUM_THREADS=$threads python -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" \
      --pair "$pair" --out "$run" --vocab-from "checkpoints/$pair" --bf16 "$([ $device = cuda ] && echo true || echo false)" \
      --d-model "$d" --n-heads "$heads" --d-ff "$ff" --n-encoder-layers "$enc" --n-decoder-layers "$dec" \
      --norm-first true --dropout 0.2 --attn-dropout 0.1 --act-dropout 0.1 --label-smoothing 0.1 \
      --epochs "$epochs" --budget-s "$budget" --max-tokens 16384 --warmup 600 --lr-scale 0.5 --hold-peak true \
      --cooldown-epochs "${COOLDOWN:-4}" --average-last 1 --clip-norm 1.0 --threads "$threads" --save-every-s 120 \
      --phrasebook data/phrasebook.txt,data/classroom --oversample multi30k:2,phrasebook:8,words:2 \
      --swap-names 0.5 --templates 0.02 --copies 0.005 --source-noise 0.3 \
      --val-bleu-every 3 --snapshot-epochs 1 --snapshot-bits 4 --timeline assets/examples.json ${LIMIT:+--limit $LIMIT} \
      >"$run.log" 2>&1 &
  done
done
wait  # every run; a failed one is told by its log and left out of the choice

# 3. Per pair, the candidate with the better mean val BLEU over both corpora at its last epoch
python - "$out" $sizes <<'EOF'
import json, sys
from pathlib import Path
out, names = Path(sys.argv[1]), [s.split(":")[0] for s in sys.argv[2:]]
choice = {}
for pair in ("en-de", "en-fr"):
    scores = {}
    for name in names:
        path = Path(f"runs/{pair}-{name}/metrics.json")
        if path.exists():
            m = json.loads(path.read_text())
            bleu = m["epochs"][-1]["val_bleu_by_corpus"]
            scores[name] = {"val_bleu": bleu, "mean": sum(bleu.values()) / len(bleu), "epochs": len(m["epochs"]),
                            "parameters": m["parameters"], "train_wall_s": m["train_wall_s"],
                            "tokens_per_s": m["epochs"][-1]["tokens_per_s"], "model_config": m["model_config"]}
    best = max(scores, key=lambda n: scores[n]["mean"])
    choice[pair] = {"chosen": best, "candidates": scores}
    print(pair, "->", best, {n: round(s["mean"], 2) for n, s in scores.items()})
(out / "choice.json").write_text(json.dumps(choice, indent=2) + "\n")
EOF

# 4. The chosen checkpoints as shipped (model, config, vocabulary, metrics, timeline), packed in 15 MB parts
rm -rf "$out/pack" "$out"/pack.tar.* && mkdir -p "$out/pack"
for pair in en-de en-fr; do
  name=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]['chosen'])" "$out/choice.json" $pair)
  mkdir -p "$out/pack/$pair"
  cp -r runs/$pair-$name/{config.json,model.safetensors,spm.model,metrics.json,timeline} "$out/pack/$pair/"
done
for f in runs/*.log; do tail -c 20000 "$f" | grep -v "it/s]" >"$out/$(basename "$f")" || true; done
tar -cf - -C "$out/pack" en-de en-fr | split -b 15M - "$out/pack.tar."
ls -la "$out"
