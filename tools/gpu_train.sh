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
#   STAGE=more tools/gpu_train.sh      # the shipped models trained on instead (a fresh Adam, a short warm-up, the
#                                      # rate held, then falling to 0): candidate "same" keeps their vocabulary,
#                                      # "vocab" learns a new one with the classroom corpus (every layer carried over)
#   WORDS (STAGE=more; default 4): the word lists' frames that many times an epoch. The second word list
#   (data/classroom/words.tsv, 792 words) is in none of the shipped models: one epoch on the CPU with its frames
#   three times left half its trained frames wrong (docs/training.md: a second word list); five epochs at 4 give 20.
#   The third word list (data/more_words.tsv, 315 words, trained whole) twice WORDS times an epoch (the sixteenth
#   stage, on the CPU, trained it 16 times in one epoch: docs/training.md).
#   CANDIDATES (STAGE=more; default "same grown"): "class" is "same" with the classroom corpus's sentences and frames
#   twice as often an epoch (phrasebook:16, words twice WORDS); "grown" is "same" in a larger model that starts out
#   computing exactly what the shipped one does (train.grow), GROW=d_ff:encoder layers:decoder layers (default
#   1280:5:4, 11.4M parameters, among the largest measured at #56's limit, a click 2.5x the fourth stage's on one
#   thread: 1.10-1.12x the shipped size's, which costs 2.23-2.26x, so borderline; an encoder layer costs the click
#   least, as the encoder runs once a sentence: 1024:6:4 1.09x, 1024:7:4 1.11x, 1280:6:4 1.17x; 2048:4:4 costs
#   2.84-3.11x the fourth stage's; `python benchmarks/checkpoint_cost.py --before HEAD --parts --grow SHAPE`,
#   docs/training.md, the twentieth stage). "vocab" (a new vocabulary) was no better in the twelfth stage and is
#   no longer a default.
#   NO_BENCH=1 skips the throughput table. On 2026-11-26 (H200, four runs at once) an epoch took about 21 s;
#   the default budget fits the device's ten-minute call with the start-up, the choice and the packing. The
#   seventh stage (STAGE=more, BUDGET_S=300 COOLDOWN=5 VAL_EVERY=2): 80 s for the first epoch, then 30 to 40 s an
#   epoch with Multi30k four times (docs/training.md); its "vocab" runs had not finished when the call's limit
#   stopped the script, and their buffered logs were lost with them: hence unbuffered logs, GRACE_S and the stacks.
#   A budget counts from a run's first batch: a new vocabulary is learned before it (about a minute). Those
#   "vocab" runs hung in sentencepiece 0.2.2, the machine's (the eighth stage found it): carry the cp312 wheel of
#   0.2.3 in .whl/ (pip download --no-deps --only-binary=:all: --python-version 3.12 sentencepiece==0.2.3 -d .whl).
#   The eighth stage: the same command with GRACE_S=140 (docs/training.md). A budget its second epoch nearly
#   spends wants EPOCHS=2 COOLDOWN=2: a count cut to two after the fall began leaves no epoch to end it in.
#   Since the eighth stage the loop no longer waits for the GPU each step (epochs drawn and padded in a process of
#   their own, the loss read every 100 steps): compare each epoch's tokens_per_s with the eighth stage's 100,000 to
#   150,000, and run `pytest -k cuda` first (it trains and resumes a tiny model on the device).
#
# A lent device's call, as prepared (the image has torch, sacrebleu, tqdm and pytest, not simplemma or pysbd, which
# training and the CUDA tests do not import: tests/test_devices.py checks it; sentencepiece 0.2.2 wants .whl's 0.2.3):
#   here:   cp -r ../shared/data/multi30k ../shared/data/tatoeba .data/ && rm .data/multi30k/test_2016_flickr.*
#           pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \
#               --index-url https://pypi.org/simple -d .whl sentencepiece==0.2.3
#   device: (carry .data and .whl; limit 600 s) mkdir -p runs; python -m pytest -q tests/test_devices.py -k cuda &&
#           STAGE=more NO_BENCH=1 PACK_ALL=1 DATA=.data BUDGET_S=300 COOLDOWN=5 VAL_EVERY=2 GRACE_S=140 \
#               timeout 520 tools/gpu_train.sh > runs/gpu.log 2>&1; cp runs/gpu/pack.tar.a[a-d] runs/gpu.log $OUT/
#           then, on the machine still warm (a call brings back about 64 MB): cp runs/gpu/pack.tar.a[e-z] $OUT/
#   here:   tools/gpu_train.sh unpack FOLDER (the parts of both calls in one folder), then measure as below.
#   (The default candidates, "same grown", learn no vocabulary: .whl only matters with "vocab". A "grown" pair packs
#   21 MB of fp16 weights (27 MB at d_ff 2,048) and a 5.3 MB snapshot, "same" 19 MB: with PACK_ALL, about 90 MB, six
#   parts.)
#
# Writes runs/gpu/: throughput.md (tokens/s of each candidate shape), each run's log and metrics, choice.json,
# and the chosen checkpoints packed as pack.tar.* (15 MB parts); tools/gpu_train.sh unpack puts them in checkpoints/.
# PACK_ALL=1 packs the candidates not chosen too (without their timeline; two candidates of both pairs: 6 parts),
# which unpack puts in runs/gpu-PAIR-NAME: the choice can then be made here, on the class sets as well.
# Then, here: the test scores and class sets (tools/test_scores.sh, evaluate --class-sets --record); the new models'
# class-set translations no one has read yet, read and filed (tools/judge.py --checkpoint, then --file: the judged
# figures and the unsure marks' labels count them wrong until then); tools/calibrate_unsure.py --record.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data} out=runs/gpu budget=${BUDGET_S:-400} epochs=${EPOCHS:-60}
sizes=${SIZES:-"a:256:4:1024:4:4 b:256:4:1024:6:4"}  # name:d_model:heads:d_ff:encoder layers:decoder layers
threads=${THREADS:-3}

if [ "${1:-}" = unpack ]; then  # here, after the parts came back: checkpoints/PAIR replaced by the chosen run
  tmp=$(mktemp -d) && cat "${2:-$out}"/pack.tar.* | tar -x -C "$tmp"
  if [ -d "$tmp/others" ]; then  # PACK_ALL=1: the candidates not chosen, as runs/gpu-PAIR-NAME, to compare here
    for run in "$tmp"/others/*; do rm -rf "runs/gpu-$(basename "$run")" && mv "$run" "runs/gpu-$(basename "$run")"; done
    rmdir "$tmp/others"
  fi
  for pair in "$tmp"/*; do  # none when no run finished: checkpoints/ left as it is
    [ -d "$pair" ] && rm -rf "checkpoints/$(basename "$pair")" && mv "$pair" checkpoints/
  done
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
shipped_epoch() {  # the last epoch of checkpoints/PAIR, where STAGE=more starts from
  python -c "import json,sys; print(json.load(open(sys.argv[1]))['epochs'][-1]['epoch'])" "checkpoints/$1/metrics.json"
}
candidate() {  # the arguments that differ between candidates: PAIR NAME
  if [ "${STAGE:-}" = more ]; then  # from the shipped model; the new vocabulary's run keeps its own first epoch
    first=$(( $(shipped_epoch "$1") + 1 ))
    [ "$2" = grown ] && IFS=: read -r ff enc dec <<<"${GROW:-1280:5:4}" &&
      echo --grow true --d-ff "$ff" --n-encoder-layers "$enc" --n-decoder-layers "$dec"
    echo --init-from "checkpoints/$1" --new-vocab "$([ "$2" = vocab ] && echo true || echo false)" \
      --byte-fallback true --split-digits true --warmup 200 --lr-scale 0.2 --copies 0.01 \
      --oversample "multi30k:4,$([ "$2" = class ] && echo "phrasebook:16,words:$((2 * ${WORDS:-4})),more_words:$((4 * ${WORDS:-4}))" ||
                     echo "phrasebook:8,words:${WORDS:-4},more_words:$((2 * ${WORDS:-4}))")" \
      --snapshot-epochs "$([ "$2" = vocab ] && echo "$first" || echo 0)"
  else
    IFS=: read -r _ d heads ff enc dec <<<"$(printf '%s\n' $sizes | grep "^$2:")"
    echo --vocab-from "checkpoints/$1" --d-model "$d" --n-heads "$heads" --d-ff "$ff" --n-encoder-layers "$enc" \
      --n-decoder-layers "$dec" --norm-first true --warmup 600 --lr-scale 0.5 \
      --oversample multi30k:2,phrasebook:8,words:2,more_words:4 --copies 0.005 --snapshot-epochs 1
  fi
}
if [ "${STAGE:-}" = more ]; then sizes=${CANDIDATES:-"same grown"}; fi  # "class": as "same", the classroom corpus twice as often
# sentencepiece 0.2.2 (the GPU machine's image in 2026-11) never returns from learning a vocabulary of these corpora
# (0.2.3: 12 s on 2 CPU cores): a newer one from .whl/ when carried there, else no candidate learns a vocabulary
spm_ok() { python -c "import sentencepiece as s, sys; sys.exit(s.__version__ == '0.2.2')"; }
if [[ " $sizes " = *" vocab "* ]] && ! spm_ok; then
  python -m pip install -q --no-index --find-links .whl "sentencepiece>=0.2.3" || true
  spm_ok || { echo "sentencepiece 0.2.2 cannot learn the vocabulary: candidate vocab left out"; sizes=same; }
fi
for pair in en-de en-fr; do
  for size in $sizes; do
    name=${size%%:*} run=runs/$pair-${size%%:*}
    rm -rf "$run"
    # shellcheck disable=SC2046  # candidate's words are arguments, one each
    # A run GRACE_S past its budget is stopped with its stack in its log (faulthandler on SIGABRT): the others are
    # still chosen and packed. Logs unbuffered, so that a stopped run shows where it was.
    PYTHONUNBUFFERED=1 OMP_NUM_THREADS=$threads timeout -s ABRT $((budget + ${GRACE_S:-150})) \
      python -X faulthandler -m transformer train --data-dir "$data/multi30k" --data-dir "$data/tatoeba" \
      --pair "$pair" --out "$run" $(candidate "$pair" "$name") --bf16 "$([ $device = cuda ] && echo true || echo false)" \
      --dropout 0.2 --attn-dropout 0.1 --act-dropout 0.1 --label-smoothing 0.1 \
      --epochs "$epochs" --budget-s "$budget" --max-tokens 16384 --hold-peak true \
      --cooldown-epochs "${COOLDOWN:-4}" --average-last 1 --clip-norm 1.0 --threads "$threads" --save-every-s 120 \
      --phrasebook data/phrasebook.txt,data/classroom,data/more_words.tsv --swap-names 0.5 --templates 0.02 --source-noise 0.3 \
      --val-bleu-every "${VAL_EVERY:-3}" --snapshot-bits 4 --timeline assets/examples.json ${LIMIT:+--limit $LIMIT} \
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
    if not scores:  # no candidate of this pair finished: its logs say why, the other pair still ships
        continue
    best = max(scores, key=lambda n: scores[n]["mean"])
    choice[pair] = {"chosen": best, "candidates": scores}
    print(pair, "->", best, {n: round(s["mean"], 2) for n, s in scores.items()})
(out / "choice.json").write_text(json.dumps(choice, indent=2) + "\n")
EOF

# 4. The chosen checkpoints as shipped (model, config, vocabulary, metrics, training words, timeline), packed in 15 MB parts
rm -rf "$out/pack" "$out"/pack.tar.* && mkdir -p "$out/pack"
for pair in $(python -c "import json,sys; print(*json.load(open(sys.argv[1])))" "$out/choice.json"); do
  name=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]['chosen'])" "$out/choice.json" $pair)
  mkdir -p "$out/pack/$pair"
  cp -r runs/$pair-$name/{config.json,model.safetensors,spm.model,metrics.json,words.json,timeline} "$out/pack/$pair/"
  if [ "${STAGE:-}" = more ]; then  # the shipped model's own snapshot (it stays a row of the timeline) is left out
    rm -f "$out/pack/$pair/timeline/epoch$(shipped_epoch "$pair").safetensors"
  fi
  if [ -n "${PACK_ALL:-}" ]; then  # the others too (weights, vocabulary, metrics), to choose on the class sets here
    for other in $(python -c "import json,sys; print(*json.load(open(sys.argv[1]))[sys.argv[2]]['candidates'])" \
                   "$out/choice.json" $pair); do
      [ "$other" = "$name" ] && continue
      mkdir -p "$out/pack/others/$pair-$other"
      cp runs/$pair-$other/{config.json,model.safetensors,spm.model,metrics.json,words.json} "$out/pack/others/$pair-$other/"
    done
  fi
done
for f in runs/*.log; do tail -c 20000 "$f" | grep -v "it/s]" >"$out/$(basename "$f")" || true; done
tar -cf - -C "$out/pack" . | split -b 15M - "$out/pack.tar."
ls -la "$out"
