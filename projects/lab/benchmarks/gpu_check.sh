#!/usr/bin/env bash
# What this package runs on a GPU, in one go (one lease of a GPU machine; logs and tables go to OUT):
#   1. the library's device tests on CUDA: tests/test_device_mixing.py and tests/test_loss_contract.py,
#      their "cuda" cases (every registered loss and scheme, the CRF maths, the decoders and the
#      auc_ner pipe, BiLSTM-CRF included, on cupy, compared with numpy);
#   2. the CRF maths timed on the GPU and on one CPU thread (benchmarks/crf_speed.py);
#   3. `spacy train --gpu-id 0` of full configs (crf, bilstm_crf, ova_auc, two_task_auc on the CPU
#      tok2vec; ova_auc and crf on the transformer base when TRANSFORMER is given), then
#      `spacy evaluate --gpu-id 0` of each model-best;
#   4. training and inference words/s of every method, on the GPU and on one CPU thread
#      (benchmarks/speed.py), and on the transformer base on the GPU when TRANSFORMER is given;
#   5. a study on the GPU: studies/preset_cpu.yaml's five methods at 50 sentences, one
#      partition, `python -m auc_ner_lab study run --gpu-id 0`, two cells at once.
#
# Usage: benchmarks/gpu_check.sh CORPUS OUT [TRANSFORMER]
#   CORPUS       folder with train.spacy, dev.spacy and test.spacy (python -m auc_ner_lab corpus get ...)
#   OUT          folder for the logs, configs and tables
#   TRANSFORMER  paths.transformer of configs/base_trf.cfg (a Hugging Face name or folder); left
#                out, the transformer runs are skipped
# STEPS (default "tests crf train speed study") picks steps, TRAIN and TRAIN_TRF the methods step 3
# trains; each step's start is printed in seconds.
set -u -o pipefail
cd "$(dirname "$0")/.."
corpus=$1 out=$2 trf=${3:-}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
STEPS=${STEPS:-tests crf train speed study}
TRAIN=${TRAIN-crf bilstm_crf ova_auc two_task_auc}  # set empty to train none
TRAIN_TRF=${TRAIN_TRF-ova_auc crf}
mkdir -p "$out"
wants() { [[ " $STEPS " == *" $1 "* ]]; }
step() { echo; echo "== $* (at ${SECONDS}s)"; }

step versions
$PY - <<'PY' || exit 1
import sys
try:
    import cupy
except ImportError:
    sys.exit("gpu_check.sh: cupy is not installed (pip install cupy-cuda12x, or the cupy build for your CUDA)")
from thinc.util import has_cupy_gpu
if not has_cupy_gpu:
    sys.exit("gpu_check.sh: thinc finds no CUDA GPU through cupy")
import numpy, spacy, thinc, torch
print(f"spaCy {spacy.__version__}, thinc {thinc.__version__}, cupy {cupy.__version__}, numpy {numpy.__version__}, "
      f"torch {torch.__version__} (CUDA {torch.version.cuda}, available: {torch.cuda.is_available()})")
PY
nvidia-smi -L

if wants tests; then
  step "device tests on CUDA"
  # the library's tests, in the checkout's root tests/ (this script runs in projects/lab)
  $PY -m pytest -q -p no:cacheprovider -rs ../../tests/test_device_mixing.py ../../tests/test_loss_contract.py -k cuda 2>&1 | tee "$out/tests_cuda.log" | tail -n 15
fi

if wants crf; then
  step "CRF maths on the GPU, then on one CPU thread"
  $PY benchmarks/crf_speed.py --gpu
  $PY benchmarks/crf_speed.py
fi

train() {  # train NAME ENCODER [overrides...]
  local name=$1 encoder=$2; shift 2
  local cfg="$out/$name.cfg" dir="$out/train_$name" start=$SECONDS
  $PY -m spacy_auc_ner config "${name%_trf}" --encoder "$encoder" -o "$cfg" > /dev/null || return 1
  if $PY -m spacy train "$cfg" --gpu-id 0 -o "$dir" --paths.train "$corpus/train.spacy" --paths.dev "$corpus/dev.spacy" \
      --training.max_steps 300 --training.eval_frequency 100 "$@" > "$dir.log" 2>&1; then
    $PY -m spacy evaluate "$dir/model-best" "$corpus/test.spacy" --gpu-id 0 --output "$dir/test.json" > /dev/null 2>&1
    $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print(f'{sys.argv[2]}: trained and evaluated on GPU in {int(sys.argv[3])} s, test ents_f {s[\"ents_f\"]:.3f}')" "$dir/test.json" "$name" $((SECONDS - start))
  else
    echo "$name: FAILED on GPU, last lines of $dir.log:"; tail -n 20 "$dir.log"
  fi
}

if wants train; then
  step "spacy train --gpu-id 0, 300 steps, then spacy evaluate --gpu-id 0"
  for name in $TRAIN; do train "$name" cpu; done
  if [ -n "$trf" ]; then
    for name in $TRAIN_TRF; do train "${name}_trf" trf --paths.transformer "$trf"; done
  fi
fi

if wants speed; then
  speed=(benchmarks/speed.py --train "$corpus/train.spacy" --test "$corpus/test.spacy" --n-train 300 --epochs 2 --repeat 1)
  step "words/s of every method, CPU tok2vec, on the GPU"
  $PY "${speed[@]}" --gpu-id 0 2> "$out/speed_gpu.log" | tee "$out/speed_gpu.md"
  step "words/s of every method, CPU tok2vec, on one CPU thread"
  $PY "${speed[@]}" 2> "$out/speed_cpu.log" | tee "$out/speed_cpu.md"
  if [ -n "$trf" ]; then
    step "words/s on the transformer base, fine-tuned and frozen (cached), on the GPU"
    $PY "${speed[@]}" --encoder trf --transformer "$trf" --methods spacy_ner ova_auc ce crf --gpu-id 0 2> "$out/speed_trf_gpu.log" | tee "$out/speed_trf_gpu.md"
  fi
fi
if wants study; then
  step "a study on the GPU: studies/preset_cpu.yaml, 50 sentences, 1 partition, --gpu-id 0"
  $PY -m auc_ner_lab study run studies/preset_cpu.yaml --corpora-dir "$(dirname "$corpus")" --set "corpora=[$(basename "$corpus")]" \
    --set 'sizes=[50]' --set 'partitions=1' --gpu-id 0 --workers 2 --results "$out/study_gpu" --no-progress
fi

step done
