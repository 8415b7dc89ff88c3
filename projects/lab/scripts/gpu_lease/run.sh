#!/usr/bin/env bash
# One GPU lease: set up (spaCy + MiniLM carried as files), the GPU checks of issue 31 point 5,
# the device tests on CUDA, and MiniLM campaign cells (the controls of issue 33 point 4 first,
# then crf / spacy_ner at 5 partitions and on s800); rows and logs come back under $OUT.
set -u -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
LIMIT=${LIMIT:-470}   # seconds for the studies, so that packing the rows fits in the call
. .gpuC/setup.sh || exit 1
mkdir -p $OUT/logs
cd projects/lab
study() {  # study SIZE WORKERS TAG ARGS...
  local size=$1 workers=$2 tag=$3; shift 3
  timeout --signal=INT $((LIMIT - SECONDS)) python3 -m auc_ner_lab study run studies/campaign_minilm_$size.yaml --results results/campaign_minilm_$size \
    --gpu-id 0 --workers $workers --threads-per-worker 1 --no-progress --no-strict "$@" > $OUT/logs/study_${size}_$tag.log 2>&1
  echo "study $size $tag ended at ${SECONDS}s (exit $?)"
}
echo "== studies and checks at ${SECONDS}s"
study 20 4 controls --method ce_2t --method ova_auc_all --method ova_bce &
study 50 4 controls --method ce_2t --method ova_auc_all --method ova_bce &
study 20 2 crf_ner --method crf --method spacy_ner --set partitions=5 --set 'corpora=[ncbi_disease, conll2003, s800]' &
study 50 3 crf_ner --method crf --method spacy_ner --set partitions=5 --set 'corpora=[ncbi_disease, conll2003, s800]' &
(cd $R && timeout 240 python3 .gpuC/gpu_checks.py projects/lab/corpus/ncbi_disease $OUT/logs/checks > $OUT/gpu_checks.txt 2>&1; echo "checks ended at ${SECONDS}s"
 timeout 150 python3 -m pytest -q -p no:cacheprovider -rs tests/test_device_mixing.py -k cuda > $OUT/logs/tests_cuda.log 2>&1; echo "cuda tests ended at ${SECONDS}s: $(tail -n 1 $OUT/logs/tests_cuda.log)")
wait
echo "== packing at ${SECONDS}s"
tar -czf $OUT/rows.tgz results/campaign_minilm_20 results/campaign_minilm_50
tar -czf $OUT/logs.tgz --exclude='*/model-*' --exclude='*.spacy' -C $OUT logs && rm -rf $OUT/logs
echo "== done at ${SECONDS}s"
