#!/usr/bin/env bash
# The recipe ablation (studies/lowres_recipe.yaml) in stages, the decisive cells first; every
# stage resumes where it stopped. Run it from a separate clone (see run_campaign_lowres.sh),
# then copy its rows here (a file each, none overwritten): cp -rn ../../../ablation/projects/lab/results/lowres_recipe/. results/lowres_recipe/
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1
PY=${PYTHON:-../../.venv/bin/python}  # the clone's venv, at the repository root
run() { "$PY" -m auc_ner_lab study run studies/lowres_recipe.yaml --workers "${WORKERS:-1}" --results results/lowres_recipe --no-progress "$@"; }
HEADLINE=(--method spacy_ner --method lowres_spacy_ner_rounds1)
REMOVALS=(--method lowres_spacy_ner_rounds1_no_augment --method lowres_spacy_ner_rounds1_no_pretrain --method lowres_spacy_ner_no_self_train)
OTHERS=(--method crf --method bilstm_crf --method crf_auc --method bilstm_crf_auc --method bilstm_ova_auc
        --method bilstm_two_task_auc --method crf_auc_extras --method crf_auc_extras_no_augment
        --method crf_auc_extras_no_pretrain --method crf_auc_extras_no_self_train --method crf_extras
        --method bilstm_crf_auc_extras)
# 1. the headline: the recipe (one self-training round then) against spaCy's ner on every corpus and size
run "${HEADLINE[@]}"
# 2. each part of the recipe removed in turn, every corpus at 20 and 50 (at 100 after stage 4)
run "${REMOVALS[@]}" --set 'sizes=[20, 50]'
# 3. a second self-training round, on the corpus the recipe was chosen on (NCBI-disease dev)
run --method lowres_spacy_ner --corpus ncbi_disease --set 'sizes=[50, 20]'
# 4. no raw text: the recipe without --raw, augmentation alone, and the BiLSTM-CRF with augmentation
run --method lowres_spacy_ner_no_raw --method lowres_spacy_ner_augment_only --set 'sizes=[20, 50]'
run --method bilstm_crf_augment --corpus ncbi_disease --set 'sizes=[20, 50]'
run --method bilstm_crf_augment --set 'sizes=[20, 50]'
run "${REMOVALS[@]}"  # at 100 too
# 5. the other methods
run "${OTHERS[@]}" --set 'sizes=[20, 50]'
run "${OTHERS[@]}"
# 6. a third self-training round against the two lowres_spacy_ner ships with, every corpus at 20 and 50
run --method lowres_spacy_ner_rounds3 --set 'sizes=[20, 50]'
# 7. more raw text (5,000 pool sentences), first where the shipped recipe is furthest from 1.3x
run --method lowres_spacy_ner_pool5000 --corpus ncbi_disease --corpus s800 --set 'sizes=[50]'
run --method lowres_spacy_ner_pool5000 --set 'sizes=[20, 50]'
# 8. spaCy's ner on a BiLSTM encoder, alone and with the extras, at 20 and 50 sentences: below
#    spaCy's ner and the recipe there, so not adopted (README)
run --method spacy_ner_bilstm --method spacy_ner_bilstm_extras --set 'sizes=[20, 50]'
# 9. the no-raw-text methods at 100 sentences too
run --method lowres_spacy_ner_no_raw --method lowres_spacy_ner_augment_only --method bilstm_crf_augment --set 'sizes=[100]'
