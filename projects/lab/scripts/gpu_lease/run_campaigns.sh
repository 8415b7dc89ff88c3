#!/usr/bin/env bash
# A GPU lease for the campaigns waiting on 2026-11-27: campaign_trf_nodev (issue 44, "n in all")
# and campaign_selection (issue 47, the annotation loop). Every cell trains first in a fresh
# process: one `study run --cell ID --workers 1` a cell (the GPU position effect of the
# 2026-11-27 lease, docs/gpu.md: a GPU training depends on whether it is the first in its
# process), SLOTS such processes at once on the one GPU (default 16, one a core; the H200 lease
# of 2026-11-27 trained about 30 MiniLM cells at once on its 16 cores).
#
# The order: nodev's (and nodev60's) cells still to run (its --dry-run) from its last backwards (NODEV_ORDER=
# reverse, the default: the CPU clone trains it from its first, so the two meet rather than
# train one cell twice; NODEV_ORDER=forward: the spec's order), then selection's in the spec's
# order (SPECS="campaign_trf_nodev campaign_selection" says which campaigns, in which order).
# A cell starts only if its estimate (est below: the GPU rows of campaign_trf_recipe at 16-30
# cells at once, plus about 20 s for a fresh process; EST_SCALE=N percent scales them all) fits
# in the seconds left before LIMIT; else the next that fits starts. So a selection cell of
# 10 + 10 + 10 (four trainings and three rankings, about 600 s) never starts in a call of 600 s;
# a batch of 30 (mnlp, entropy: 280 s) and random_* (one training at 50: 180 s) do.
# Every study is stopped LIMIT seconds after the start (SIGTERM, SIGKILL 30 s later): a cell cut
# short leaves no row, the next lease or the CPU campaign trains it.
#
# Back under $OUT: rows.tgz (both stores, replaced every 20 s and at the end, so that a call cut
# short still returns every finished cell), cells.tsv (spec, cell, estimate, start and end second,
# exit status, ok/FAILED/none), logs.tgz (the plans and each cell's study log).
# Packed and called as pack.sh's header says, the second call being
#   LIMIT=500 bash .gpuC/run_campaigns.sh 2>&1 | tee $OUT/run.log      (timeout_s 590)
# then copy the new rows of $OUT/rows.tgz into the stores (never over a row: cp -rn), run
# `python projects/lab/lab.py docs`, commit.
# DRY_RUN=1 (any machine, from the repository root; SETUP= skips setup.sh, PY names a Python
# with spaCy) lists the queue with each cell's estimate and trains nothing:
#   DRY_RUN=1 SETUP= PY=.venv/bin/python OUT=/tmp/plan bash projects/lab/scripts/gpu_lease/run_campaigns.sh
# ONLY (an extended regular expression) keeps the cells whose id matches it, e.g.
#   ONLY='/(mnlp|random)_30/' trains the one-batch pairs of MNLP and random draw by draw (2026-11-28:
#   a lease trains pairs on one device rather than one side of many).
# UNTRACED=1 plans and trains, with `study run --untraced`, the cells whose row no commit traces
#   (issue 45: trained from a tree with uncommitted changes), instead of the cells without a row.
# STUDY replaces the `study run` command (the lab's test runs the loop with a stand-in).
set -u -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
LIMIT=${LIMIT:-500} SLOTS=${SLOTS:-16} EST_SCALE=${EST_SCALE:-100}
SPECS=${SPECS-campaign_trf_nodev campaign_selection} NODEV_ORDER=${NODEV_ORDER:-reverse} ONLY=${ONLY:-}
WHICH=(); [ -n "${UNTRACED:-}" ] && WHICH=(--untraced)
SETUP=${SETUP-.gpuC/setup.sh}
R=$PWD
if [ -n "$SETUP" ]; then
  # a .gpuC packed before issue 45 has a setup.sh that checks no stamp: its rows would name a stale commit
  cmp -s "$SETUP" projects/lab/scripts/gpu_lease/setup.sh \
    || { echo "run_campaigns.sh: $SETUP is not this tree's scripts/gpu_lease/setup.sh: run pack.sh again"; exit 1; }
  . "$SETUP" || exit 1
fi
PY=${PY:-python3}
STUDY=${STUDY:-$PY -m auc_ner_lab study run}
mkdir -p "$OUT/logs" && OUT=$(cd "$OUT" && pwd) && cd "$R/projects/lab" || exit 1

est() {  # est CELL_ID: the seconds a cell is expected to take on the GPU, scaled by EST_SCALE
  local s
  case $1 in
    */hf_token_classification/*) s=45 ;;
    */spacy_ner/*|*/crf/*) s=90 ;;
    */lowres_best_trf/n=20/*) s=260 ;;
    */lowres_best_trf/n=50/*) s=320 ;;
    */lowres_best_trf/n=100/*) s=450 ;;   # about 1.4 times the 50's steps (390 against 210 and the same labelling)
    */lowres_best_trf_e60/n=20/*) s=420 ;;  # twice the steps of each training, the same labelling
    */lowres_best_trf_e60/n=50/*) s=560 ;;
    */random_*/*) s=180 ;;                 # reads no model: one training, at 50 (H100 2026-11-28, 16 at once: 112-173 s)
    */mnlp_30/*|*/entropy_30/*) s=280 ;;   # the recipe at 20, a ranking of the rest, the recipe at 50 (the same lease: 223-270 s)
    */*_10x3/*) s=600 ;;                   # at 20, 30, 40 and 50, three rankings (from those: about 570 s)
    *) s=320 ;;
  esac
  s=$((s * EST_SCALE / 100))
  echo $((s > 0 ? s : 1))  # never 0: `timeout 0` would not stop the study
}

echo "== plan at ${SECONDS}s"
for spec in $SPECS; do  # the campaigns' plans at once: each study's cells still to run
  ($STUDY "studies/$spec.yaml" --results "results/$spec" --gpu-id 0 ${WHICH[@]+"${WHICH[@]}"} --dry-run > "$OUT/logs/plan_$spec.txt" 2> "$OUT/logs/plan_$spec.log"
   echo $? > "$OUT/logs/plan_$spec.rc") &
done
wait
QUEUE=()  # "SPEC CELL_ID", in the order cells start
for spec in $SPECS; do
  if [ "$(cat "$OUT/logs/plan_$spec.rc")" != 0 ]; then echo "no plan for $spec: $(tail -n 1 "$OUT/logs/plan_$spec.log")"; continue; fi
  ids=$(cat "$OUT/logs/plan_$spec.txt")
  case $spec in campaign_trf_nodev|campaign_trf_nodev60) [ "$NODEV_ORDER" = reverse ] && ids=$(printf '%s\n' $ids | tac) ;; esac
  for id in $ids; do [ -z "$ONLY" ] || [[ $id =~ $ONLY ]] && QUEUE+=("$spec $id"); done
  echo "$spec: $(tail -n 1 "$OUT/logs/plan_$spec.log")"
done
if [ -n "${DRY_RUN:-}" ]; then
  total=0
  for entry in ${QUEUE[@]+"${QUEUE[@]}"}; do e=$(est "${entry#* }"); total=$((total + e)); echo "$entry  ~${e}s"; done
  echo "${#QUEUE[@]} cells, ~${total} s of cells: ~$((total / SLOTS)) s on $SLOTS slots; LIMIT=$LIMIT (DRY_RUN: nothing trained)"
  exit 0
fi
# several studies may write into one store, a new one too: each marks it before its first row
# (ResultsStore.add), and a folder being marked holds nothing else yet (ResultsStore.check)

snapshot() {  # the stores as they are now into $OUT/rows.tgz, replaced in one rename
  local stores=() spec
  for spec in $SPECS; do [ -d "results/$spec" ] && stores+=("results/$spec"); done
  [ ${#stores[@]} -gt 0 ] || return 0
  # exit 1: a store changed while tar read it (a row renamed into place: whole either way), as on 2026-11-27
  tar -czf "$OUT/rows.tgz.$BASHPID" --warning=no-file-changed --exclude='.*.tmp' "${stores[@]}"
  [ $? -le 1 ] && mv "$OUT/rows.tgz.$BASHPID" "$OUT/rows.tgz"
}
(while sleep 20; do snapshot; done) &
SNAPSHOTS=$!
printf 'spec\tcell\testimate_s\tstart_s\tend_s\texit\tresult\n' > "$OUT/cells.tsv"

declare -A RUNNING=()  # pid -> "SPEC CELL_ID ESTIMATE START LOG"
n=0
launch() {  # launch SPEC CELL_ID ESTIMATE: the cell in its own study process, stopped at LIMIT
  local log
  n=$((n + 1))
  log="$OUT/logs/$(printf %03d $n)_${2//[^A-Za-z0-9_.-]/_}.log"
  timeout --signal=TERM --kill-after=30 $((LIMIT - SECONDS)) $STUDY "studies/$1.yaml" --results "results/$1" --cell "$2" \
    --gpu-id 0 ${WHICH[@]+"${WHICH[@]}"} --workers 1 --threads-per-worker 1 --no-progress --no-strict > "$log" 2>&1 &
  RUNNING[$!]="$1 $2 $3 $SECONDS $log"
  echo "start   $2 at ${SECONDS}s (~$3 s, $((${#RUNNING[@]})) running)"
}
reap() {  # record the cells whose process ended
  local pid rc spec id e start log result
  for pid in "${!RUNNING[@]}"; do
    kill -0 "$pid" 2> /dev/null && continue
    wait "$pid"; rc=$?
    read -r spec id e start log <<< "${RUNNING[$pid]}"
    unset "RUNNING[$pid]"
    result=$(grep -hoE '^(ok|FAILED) ' "$log" | head -n 1 | tr -d ' ')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$spec" "$id" "$e" "$start" "$SECONDS" "$rc" "${result:-none}" >> "$OUT/cells.tsv"
    echo "${result:-none}$( [ "$rc" = 0 ] || echo " (exit $rc)")  $id at ${SECONDS}s, $((SECONDS - start)) s (~$e s)"
  done
}
echo "== cells at ${SECONDS}s: ${#QUEUE[@]} to run, $SLOTS at once, LIMIT=$LIMIT"
while :; do
  reap
  while [ ${#RUNNING[@]} -lt "$SLOTS" ]; do  # the first cell of the queue that fits in the time left
    picked=""
    for i in "${!QUEUE[@]}"; do
      e=$(est "${QUEUE[$i]#* }")
      if [ $((SECONDS + e)) -le "$LIMIT" ]; then picked=$i; break; fi
    done
    [ -n "$picked" ] || break
    launch ${QUEUE[$picked]} "$e"
    unset "QUEUE[$picked]"
  done
  [ ${#RUNNING[@]} -gt 0 ] || break  # nothing running, and nothing left that fits
  sleep 2
done
kill "$SNAPSHOTS" 2> /dev/null
echo "== packing at ${SECONDS}s: $(grep -c $'\tok$' "$OUT/cells.tsv") ok, $(grep -c $'\tFAILED$' "$OUT/cells.tsv") failed, $(grep -c $'\tnone$' "$OUT/cells.tsv") without a row; ${#QUEUE[@]} not started"
snapshot
rm -f "$OUT"/rows.tgz.[0-9]*  # what a snapshot stopped midway left
tar -czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$OUT/logs"
echo "== done at ${SECONDS}s"
