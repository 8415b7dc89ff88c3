#!/usr/bin/env bash
# A GPU lease for the transformer recipe (issue 31 point 5): the cells of lowres_best_trf still
# missing in campaign_trf_recipe, then its dev-only ablation (campaign_trf_ablation), all six
# corpus x size stages at once (run_campaign_trf.sh PARALLEL=1, WORKERS cells a stage, default
# 3: 18 MiniLM cells on the GPU), every study stopped LIMIT seconds after the start so that the
# rows are packed within the call; a stopped cell leaves no row, the next lease resumes. Packed
# and called as pack.sh's header says, with `bash .gpuC/run_trf.sh` for the second call; then
# copy the new rows of $OUT/rows.tgz into the stores (never over a row), run
# `python projects/lab/lab.py docs`, commit.
#   METHODS (default lowres_best_trf) and ABLATION narrow it, as in run_campaign_trf.sh.
set -u -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
LIMIT=${LIMIT:-470}
. .gpuC/setup.sh || exit 1
mkdir -p $OUT/logs
cd projects/lab
echo "== studies at ${SECONDS}s"
GPU=0 PARALLEL=1 WORKERS=${WORKERS:-3} THREADS=1 PYTHON=python3 DEADLINE=$((LIMIT - SECONDS)) METHODS=${METHODS-lowres_best_trf} \
  bash scripts/run_campaign_trf.sh > $OUT/logs/campaign_trf.log 2>&1
echo "== packing at ${SECONDS}s: $(grep -c '^ok' $OUT/logs/campaign_trf.log) cells ok, $(grep -c '^failed' $OUT/logs/campaign_trf.log) failed"
tar -czf $OUT/rows.tgz results/campaign_trf_recipe $(ls -d results/campaign_trf_ablation 2>/dev/null)
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
echo "== done at ${SECONDS}s"
