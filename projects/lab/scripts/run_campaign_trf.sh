#!/usr/bin/env bash
# The transformer-recipe campaign (issue 31 point 5) in stages, cheapest first: 20 sentences
# before 50; NCBI-disease, then S800, then CoNLL 2003 (whose test split is the largest); inside a
# stage one method at a time (its tuning trials, then its reported cells), the peer and the
# methods it is compared with first, then the recipe, so that a stopped run leaves whole methods
# to compare; then the dev-only ablation of the recipe, all its methods in one run, partition by
# partition (the spec's order: partition 0 of every method, the recipe first, then partition 1),
# so that a stopped run leaves whole draws to pair. Every stage resumes where it stopped.
#
# The spacy_ner and crf cells of CoNLL 2003 and NCBI-disease at partitions 0-2 (and their tuning
# trials) are cells of the MiniLM campaign (the same keys): their rows are copied in first
# (cp -n: nothing overwritten), not trained again. So are the ablation's tuning trials, which
# are the recipe's and the CRF's only (its variants are tuned_as the recipe: they train with the
# learn rate the recipe's trials chose), from the recipe's store.
#
# Run it from a separate clone with its own venv, so that code changes here never touch running
# cells (see run_campaign_minilm.sh for the clone and venv), then copy its rows here as they come:
#   cp -rn ../campaign/projects/lab/results/campaign_trf_recipe/. projects/lab/results/campaign_trf_recipe/
#
# On CPUs (the default): one thread per worker (OMP_NUM_THREADS=1), WORKERS workers (default: one
# per core). On a GPU machine: GPU=0 puts every cell on GPU 0 (study run --gpu-id 0: spacy train's
# --gpu-id for the spaCy cells, torch's cuda:0 for the peer), WORKERS cells at once on it (default
# 2: MiniLM cells are small), each with THREADS CPU threads (default 2); each row names its
# device.
#   WORKERS=2 nohup projects/lab/scripts/run_campaign_trf.sh >> campaign_trf.log 2>&1 &
#   GPU=0 WORKERS=3 nohup projects/lab/scripts/run_campaign_trf.sh >> campaign_trf_gpu.log 2>&1 &
# STAGES, METHODS and ABLATION narrow it (e.g. METHODS="hf_token_classification" ABLATION="";
# METHODS="" runs the ablation alone); DRY_RUN=1 lists each stage's cells still to run and
# copies and trains nothing (it says how many rows it would copy; those cells are listed too).
# PARALLEL=1 runs the stages at once (each still in its order), for a GPU with room for
# 6 x WORKERS cells; DEADLINE=S stops every study S seconds after the start (SIGTERM, which the
# study and its workers handle as Ctrl-C: a cell cut short leaves no row and its temporary
# files go; rerun to resume; SIGKILL 30 s later if it has not ended), for a lease of fixed
# length (scripts/gpu_lease/run_trf.sh). SIGINT was used until the H100 lease of 2026-11-26,
# where the GPU studies ran on for over 55 s after it and the call ended before the rows were
# packed (on the CPU the same stop takes about a second; the cause was not found).
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-../../.venv/bin/python}  # the clone's venv, at the repository root
CORES=$(nproc 2>/dev/null || echo 1)
if [ -n "${GPU:-}" ]; then
  WORKERS=${WORKERS:-2}; THREADS=${THREADS:-2}; DEVICE=(--gpu-id "$GPU")
else
  WORKERS=${WORKERS:-$CORES}; THREADS=1; DEVICE=()
fi
export OMP_NUM_THREADS=$THREADS
STAGES=${STAGES:-"20:ncbi_disease 20:s800 20:conll2003 50:ncbi_disease 50:s800 50:conll2003"}
METHODS=${METHODS-"hf_token_classification crf spacy_ner lowres_best_trf"}
ABLATION=${ABLATION-all}  # the ablation's methods; all: every method of its spec
RECIPE=results/campaign_trf_recipe ABLATED=results/campaign_trf_ablation
shared() {  # shared SPEC FROM...: copy into results/SPEC the rows of FROM's stores that are SPEC's cells (none overwritten)
  DRY_RUN=${DRY_RUN:-} "$PY" - "$@" <<'PY'
import os, shutil, sys
from pathlib import Path
from auc_ner_lab.spec import load_spec
from auc_ner_lab.store import ResultsStore
name, sources = sys.argv[1], sys.argv[2:]
dry = bool(os.environ["DRY_RUN"])
keys = {cell.key for cell in load_spec(f"studies/{name}.yaml").cells()}
store = ResultsStore(Path("results", name))
copied = 0
for source in map(Path, sources):
    for folder in (f for f in source.glob("*") if f.name in keys):
        for row in folder.glob("*.json"):
            target = store.path / folder.name / row.name
            if not target.exists():
                if not dry:
                    store.mark()  # a new store is marked as study run marks it, or study run refuses it
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(row, target)
                copied += 1
print(f"{copied} rows of {', '.join(sources)} {'to copy (DRY_RUN: not copied)' if dry else 'copied'} into results/{name}", file=sys.stderr)
PY
}
shared campaign_trf_recipe results/campaign_minilm_20 results/campaign_minilm_50
run() {  # run SPEC RESULTS SIZE CORPUS METHOD...
  local spec=$1 results=$2 size=$3 corpus=$4 limit=() methods=()
  shift 4
  for m in "$@"; do methods+=(--method "$m"); done
  if [ -n "${DEADLINE:-}" ]; then
    [ $((DEADLINE - SECONDS)) -gt 0 ] || return 0
    limit=(timeout --signal=TERM --kill-after=30 $((DEADLINE - SECONDS)))
  fi
  ${limit[@]+"${limit[@]}"} "$PY" -m auc_ner_lab study run "studies/$spec.yaml" --results "$results" --set "sizes=[$size]" --corpus "$corpus" ${methods[@]+"${methods[@]}"} \
    --workers "$WORKERS" --threads-per-worker "$THREADS" ${DEVICE[@]+"${DEVICE[@]}"} --no-progress --no-strict ${DRY_RUN:+--dry-run}
}
stage() {  # stage SIZE CORPUS
  for method in $METHODS; do
    run campaign_trf_recipe "$RECIPE" "$1" "$2" "$method"
  done
  [ -n "$ABLATION" ] && shared campaign_trf_ablation "$RECIPE"  # its tuning trials: the recipe's and the CRF's
  # one run for the ablation's methods: its cells have no tuning trials of their own to wait
  # for, so every worker stays busy (a run per method left one of 2 workers idle for its third cell)
  # shellcheck disable=SC2086
  if [ "$ABLATION" = all ]; then run campaign_trf_ablation "$ABLATED" "$1" "$2"
  elif [ -n "$ABLATION" ]; then run campaign_trf_ablation "$ABLATED" "$1" "$2" $ABLATION; fi
}
for s in $STAGES; do
  if [ -n "${PARALLEL:-}" ]; then stage "${s%%:*}" "${s#*:}" & else stage "${s%%:*}" "${s#*:}"; fi
done
wait
