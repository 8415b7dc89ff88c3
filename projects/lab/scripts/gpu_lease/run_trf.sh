#!/usr/bin/env bash
# A GPU lease for the transformer recipe (issue 31 point 5), three jobs at once, every study
# stopped LIMIT seconds after the start so that the rows are packed within the call (a stopped
# cell leaves no row; the next lease, or the CPU campaign, resumes):
#   - the cells of lowres_best_trf still to train in campaign_trf_recipe at RECIPE_SIZES (default
#     "20 50"; after the ablation's choice of 2026-11-27 re-keyed them, its 18 tuning trials first,
#     then its 30 test cells), its six corpus x size stages at once, RECIPE_WORKERS cells each
#     (default 2; 5 runs a stage's test cells at once);
#   - its dev-only ablation (campaign_trf_ablation) at ABLATION_SIZES (default "20 50"; its
#     variants are tuned_as the recipe, whose tuning trials at both sizes exist), its six
#     corpus x size stages at once, ABLATION_WORKERS cells a stage (default 4: 24 on the GPU, which
#     the H100 of the third lease of 2026-11-26 ran at 45-340 s a cell with the recipe's beside them);
#   - the CUDA cases of the loss contract (tests/test_loss_contract.py -k cuda; 21 passed on the
#     H100 lease of 2026-11-26, their first run on a GPU) and of word-piece dropout
#     (tests/test_piece_dropout.py -k cuda, not yet run on a GPU);
#   - scripts/gpu_lease/process_check.py: one small cell trained three times in one process (then a
#     fourth with poisoned empty arrays) and once in a fresh one, to tell whether a GPU training
#     depends on what its process trained before (the ablation's parts.md says why).
# The rows written so far are packed into $OUT/rows.tgz every 20 s (atomically), so that a call
# cut short at its timeout still returns every finished cell: on the H100 lease of 2026-11-26
# the studies ran past their deadline, the call ended before the packing, and the next call,
# which sent the working tree again, removed the rows the lease had written there.
# Packed and called as pack.sh's header says, with `bash .gpuC/run_trf.sh` for the second call;
# then copy the new rows of $OUT/rows.tgz into the stores (never over a row), run
# `python projects/lab/lab.py docs`, commit.
set -u -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
LIMIT=${LIMIT:-470}
. .gpuC/setup.sh || exit 1
mkdir -p $OUT/logs
stages() {  # stages SIZES: "SIZE:CORPUS ..." for every corpus at each size
  local s c out=""
  for s in $1; do for c in ncbi_disease s800 conll2003; do out="$out $s:$c"; done; done
  echo $out
}
snapshot() {  # the stores as they are now into $OUT/rows.tgz, replaced in one rename
  tar -czf $OUT/rows.tgz.part -C $R/projects/lab results/campaign_trf_recipe $(cd $R/projects/lab && ls -d results/campaign_trf_ablation 2>/dev/null) \
    && mv $OUT/rows.tgz.part $OUT/rows.tgz
}
(while sleep 20; do snapshot; done) &
SNAPSHOTS=$!
(timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/test_loss_contract.py tests/test_piece_dropout.py -k cuda > $OUT/logs/tests_cuda.log 2>&1
 echo "loss-contract cuda tests ended at ${SECONDS}s: $(tail -n 1 $OUT/logs/tests_cuda.log)") &
cd projects/lab
# whether a GPU training depends on what its process trained before (scripts/gpu_lease/process_check.py):
# three runs and a poisoned fourth in one process, then the first run of a fresh process
(timeout 300 python3 scripts/gpu_lease/process_check.py --gpu-id 0 --runs 3 --poison > $OUT/logs/process_check.log 2>&1
 timeout 120 python3 scripts/gpu_lease/process_check.py --gpu-id 0 --runs 1 >> $OUT/logs/process_check.log 2>&1
 echo "process check ended at ${SECONDS}s: $(grep -h 'runs equal' $OUT/logs/process_check.log | tr '\n' ';')") &
echo "== studies at ${SECONDS}s"
RECIPE_SIZES=${RECIPE_SIZES-20 50} ABLATION_SIZES=${ABLATION_SIZES-20 50}
STUDIES=()
job() {  # job NAME SIZES WORKERS METHODS [ABLATION]: run_campaign_trf.sh at SIZES in the background; no SIZES, no job
  [ -n "$2" ] || return 0
  local ablation=(); [ $# -ge 5 ] && ablation=("ABLATION=$5")  # without it: run_campaign_trf.sh's list
  env GPU=0 PARALLEL=1 THREADS=1 PYTHON=python3 DEADLINE=$((LIMIT - SECONDS)) STAGES="$(stages "$2")" WORKERS="$3" METHODS="$4" \
    ${ablation[@]+"${ablation[@]}"} bash scripts/run_campaign_trf.sh > $OUT/logs/campaign_trf_$1.log 2>&1 &
  STUDIES+=($!)
}
job recipe "$RECIPE_SIZES" ${RECIPE_WORKERS:-2} lowres_best_trf ""
job ablation "$ABLATION_SIZES" ${ABLATION_WORKERS:-4} ""
wait ${STUDIES[@]+"${STUDIES[@]}"}
kill $SNAPSHOTS
echo "== packing at ${SECONDS}s: $(cat $OUT/logs/campaign_trf_*.log 2>/dev/null | grep -c '^ok') cells ok, $(cat $OUT/logs/campaign_trf_*.log 2>/dev/null | grep -c '^FAILED') failed"
snapshot
tar -czf $OUT/logs.tgz -C $OUT logs && rm -rf $OUT/logs
echo "== done at ${SECONDS}s"
