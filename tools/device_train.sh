#!/usr/bin/env bash
# Both recipes on a lent GPU in one call, side by side (a small model leaves most of a GPU idle between kernels),
# and the checkpoints packed in 15 MB parts for the call's $OUT (files of at most 16 MB come back):
#   device: (carry .data: multi30k/ and tatoeba/ copied from ../shared/data)
#           python -m pytest -q tests/test_devices.py -k cuda && DATA=.data tools/device_train.sh
#   here:   tools/device_train.sh unpack FOLDER      # the parts that came back -> runs/en-de, runs/en-fr
# Then compare with checkpoints/ (docs/training.md) and copy what is better there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = unpack ]; then
  mkdir -p runs && cat "$2"/pack.tar.* | tar -x -C runs && ls runs; exit 0
fi
data=${DATA:-../shared/data} out=${OUT:-runs/device}
mkdir -p runs "$out"
for pair in en-de en-fr; do
  rm -rf "runs/$pair"
  PYTHONUNBUFFERED=1 python -m transformer train --recipe "recipes/$pair.toml" --data "$data" --out "runs/$pair" \
    > "runs/$pair.log" 2>&1 &
done
wait || true  # a failed run is told by its log; the other is still packed
for pair in en-de en-fr; do tail -c 20000 "runs/$pair.log" | grep -v "it/s]" > "$out/$pair.log" || true; done
tar -cf - -C runs --exclude=train en-de en-fr 2>/dev/null | split -b 15M - "$out/pack.tar."
ls -la "$out"
