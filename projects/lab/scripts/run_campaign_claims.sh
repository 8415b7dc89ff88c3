#!/usr/bin/env bash
# The cells that give a verdict to the papers' claims outside the low-resource grid (MoM, sentence
# resampling, negative sampling, entity share), in two queues for two workers, the cells each
# claim in studies/claims.yaml reads first; every stage resumes where it stopped. Run it from the
# campaign clone (see scripts/run_campaign_lowres.sh), one queue per core:
#   nohup projects/lab/scripts/run_campaign_claims.sh a >> claims_a.log 2>&1 &
#   nohup projects/lab/scripts/run_campaign_claims.sh b >> claims_b.log 2>&1 &
# then, in this repository, copy its rows (a file each, none overwritten), for each study:
#   cp -rn ../../../campaign/projects/lab/results/campaign_losses/. results/campaign_losses/
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PY=${PYTHON:-../../.venv/bin/python}  # the clone's venv, at the repository root
run() { local name=$1; shift; "$PY" -m auc_ner_lab study run "studies/$name.yaml" --workers 1 --results "results/$name" --no-progress "$@"; }
case "$1" in
  a)  # MoM > CE and > focal (NCBI-disease 100/200); negative sampling at high masking first
    run campaign_losses
    run campaign_missing --set 'mask_p=[0.7, 0.9]'
    run campaign_missing
    ;;
  b)  # resampling at 50 and 200 sentences (the best two against none first); OVA-AUC vs CE at rare entity shares
    run campaign_resampling --set 'sizes=[50]'
    run campaign_imbalance --set 'methods=[ce, ova_auc]'
    run campaign_resampling --set 'sizes=[200]' --set 'resamplers=[none, sCRD, nsCRD]'
    run campaign_resampling --set 'sizes=[200]'
    run campaign_resampling
    run campaign_imbalance
    ;;
  *) echo "usage: $0 a|b  (the queue to run)" >&2; exit 2 ;;
esac
