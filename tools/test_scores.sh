#!/usr/bin/env bash
# Every test score a shipped checkpoint records in its metrics.json (the model card and the README read them):
# Multi30k test 2016 greedy and beam 4, Tatoeba test beam 4 and greedy typed six ways.
# Usage: tools/test_scores.sh CHECKPOINT [DATA (default ../shared/data)] [THREADS (default 0: all cores)]
set -euo pipefail
out=$1 data=${2:-../shared/data} threads=${3:-0}
ev() { python -m transformer evaluate --checkpoint "$out" --threads "$threads" "$@" | tail -1; }
ev --data-dir "$data/multi30k" --split test --record test2016_greedy
ev --data-dir "$data/multi30k" --split test --beam 4 --record test2016_beam4
ev --data-dir "$data/tatoeba" --split test --beam 4 --record tatoeba_test_beam4
for how in none lower nopunct upper noapos british; do
  name=tatoeba_test_greedy; [ "$how" = none ] || name=${name}_$how
  ev --data-dir "$data/tatoeba" --split test --perturb "$how" --record "$name"
done
