#!/usr/bin/env bash
# The low-resource campaign in stages, most decisive cells first (the issue's order: NCBI-disease
# and CoNLL 2003 first); every stage resumes where it stopped. Run it from a separate clone with
# its own venv, so that code changes here never touch running cells:
#   git clone . ../campaign && cd ../campaign && python3 -m venv .venv
#   .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -e .
#   WORKERS=1 nohup projects/lab/scripts/run_campaign_lowres.sh >> campaign.log 2>&1 &
# then, in this repository, copy its rows (a file each, none overwritten):
#   cp -rn ../../../campaign/projects/lab/results/campaign_lowres/. results/campaign_lowres/
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PY=${PYTHON:-../../.venv/bin/python}  # the clone's venv, at the repository root
run() { "$PY" -m auc_ner_lab study run studies/campaign_lowres.yaml --workers "${WORKERS:-2}" --results results/campaign_lowres --no-progress "$@"; }
run --corpus ncbi_disease --set 'sizes=[20, 50]'
run --corpus conll2003 --set 'sizes=[20, 50]'
run --corpus ncbi_disease --set 'sizes=[100, 200]'
run --corpus conll2003 --set 'sizes=[100, 200]'
run --corpus s800
