#!/usr/bin/env bash
# The recipe ablation (studies/lowres_recipe.yaml) in stages, the decisive cells first; every
# stage resumes where it stopped. Run it from a separate clone (see run_campaign_lowres.sh),
# then collect: python scripts/collect_results.py ../ablation lowres_recipe
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PY=${PYTHON:-.venv/bin/python}
run() { "$PY" -m spacy_auc_ner study run studies/lowres_recipe.yaml --workers "${WORKERS:-1}" --results results/lowres_recipe.jsonl --no-progress "$@"; }
# 1. the headline on the corpora the recipe was not chosen on: the recipe against spaCy's ner
run --corpus conll2003 --corpus s800 --set 'sizes=[20, 50]' --set 'methods=[spacy_ner, {name: recipe, config: configs/lowres_best.cfg, pretrain: true, self_train: true}]'
# 2. every method on NCBI-disease (the recipe's parts removed, the AUC schemes on the BiLSTM)
run --corpus ncbi_disease --set 'sizes=[20, 50]'
# 3. everything else
run --corpus conll2003 --set 'sizes=[20, 50]'
run --corpus s800 --set 'sizes=[20, 50]'
run --set 'sizes=[100]'
