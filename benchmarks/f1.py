"""Test entity F1 of named methods on low-resource draws of a corpus, several seeds.

Every method gets the same encoder settings (its config in configs/), the same training
sentences (``spacy_auc_ner.LowResource.v1`` with the seed), the same step budget and the
same dev-set early stopping (the config's [training] block), and is scored on the full test
split with strict-IOB2 seqeval and spaCy's scorer. Runs append to a JSONL file as they end,
so a rerun skips finished runs.

    python benchmarks/f1.py --corpus corpus/ncbi_disease --size 100 --seeds 0 1 2 \
        --methods ce spacy_ner ova_auc ova_bce two_task_auc --workers 2 --out results.jsonl
"""
import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_one(job):
    os.environ["OMP_NUM_THREADS"] = "1"
    sys.path.insert(0, str(ROOT))
    import torch

    torch.set_num_threads(1)
    from spacy_auc_ner.study.experiment import train_and_evaluate
    from spacy_auc_ner.study.methods import Method

    method = Method(job["method"], job["config"], job["overrides"])
    corpus = Path(job["corpus"])
    draw = {"@readers": "spacy_auc_ner.LowResource.v1", "path": str(corpus / "train.spacy"), "n": job["size"], "seed": job["seed"]}
    if job.get("train_reader"):  # e.g. masking: the wrapper takes the draw as its corpus, seeded alike
        draw = {**job["train_reader"], "seed": job["seed"], "corpus": draw}
    overrides = {
        "corpora.train": draw,
        "system.seed": job["seed"],
        **method.overrides,
    }
    start = time.perf_counter()
    try:
        result = train_and_evaluate(
            method.config_path(job["configs"]),
            train=corpus / "train.spacy",
            dev=corpus / "dev.spacy",
            test=corpus / "test.spacy",
            overrides=overrides,
        )
        error = None
    except Exception as e:  # recorded, the benchmark goes on
        result, error = {}, f"{type(e).__name__}: {e}"
    return {**job, "scores": result, "error": error, "seconds": time.perf_counter() - start}


def main():
    sys.path.insert(0, str(ROOT))
    from spacy_auc_ner.study.methods import METHODS, Method

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="folder with train/dev/test.spacy")
    parser.add_argument("--size", type=int, nargs="+", default=[100], help="training sentences")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--methods", nargs="+", default=["ce", "spacy_ner", "ova_auc", "ova_bce", "two_task_auc"])
    parser.add_argument(
        "--method", action="append", default=[], metavar="NAME=CONFIG[:KEY=JSON,...]",
        help="an extra method: a config file in --configs plus overrides, e.g. "
        "'focal=focal.cfg' or 'ova_vit=ova_auc.cfg:components.auc_ner.decoder=\"viterbi\"'",
    )
    parser.add_argument("--configs", type=Path, default=ROOT / "configs")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True, help="JSONL results (appended, resumable)")
    parser.add_argument("--max-steps", type=int, default=None, help="override [training] max_steps")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=JSON", help="a config override for every method, e.g. training.patience=300")
    parser.add_argument("--dev-size", type=int, default=0, help="early-stop on this many dev sentences (a fixed seed-0 draw); 0 = all")
    parser.add_argument("--train-reader", default=None, metavar="JSON", help="wrap the low-resource draw in this reader, e.g. '{\"@readers\": \"spacy_auc_ner.MaskedEntities.v1\", \"p\": 0.7}'")
    args = parser.parse_args()

    extra = {}
    for spec in args.method:
        name, _, rest = spec.partition("=")
        config, _, over = rest.partition(":")
        overrides = {}
        for item in filter(None, over.split(",")):
            key, _, value = item.partition("=")
            overrides[key] = json.loads(value)
        extra[name] = Method(name, config, overrides)
    methods = {**METHODS, **extra}
    names = args.methods + [n for n in extra if n not in args.methods]
    unknown = [n for n in names if n not in methods]
    if unknown:
        parser.error(f"unknown methods {unknown}; known: {sorted(methods)}")
    done = set()
    if args.out.exists():
        for line in args.out.read_text().splitlines():
            row = json.loads(line)
            if not row.get("error"):
                done.add((row["method"], row["size"], row["seed"]))
    jobs = []
    for size in args.size:
        for seed in args.seeds:
            for name in names:
                if (name, size, seed) in done:
                    continue
                m = methods[name]
                overrides = dict(m.overrides)
                if args.max_steps:
                    overrides["training.max_steps"] = args.max_steps
                for item in args.override:
                    key, _, value = item.partition("=")
                    overrides[key] = json.loads(value)
                if args.dev_size:
                    overrides["corpora.dev"] = {
                        "@readers": "spacy_auc_ner.LowResource.v1",
                        "path": str(args.corpus / "dev.spacy"), "n": args.dev_size, "seed": 0,
                    }
                jobs.append({
                    "method": name, "config": m.config, "overrides": overrides, "size": size, "seed": seed,
                    "corpus": str(args.corpus), "configs": str(args.configs),
                    "train_reader": json.loads(args.train_reader) if args.train_reader else None,
                })
    print(f"{len(jobs)} runs to do, {len(done)} done already", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_one, job) for job in jobs]
        for i, fut in enumerate(as_completed(futures), 1):
            row = fut.result()
            with args.out.open("a", encoding="utf8") as f:
                f.write(json.dumps(row) + "\n")
            f1 = row["scores"].get("ents_seqeval_micro_f")
            print(f"[{i}/{len(jobs)}] {row['method']} n={row['size']} seed={row['seed']}: "
                  f"{'ERROR ' + row['error'] if row['error'] else f'F1 {f1:.3f}'} ({row['seconds']:.0f}s)", file=sys.stderr)
    print_table(args.out, names)


def print_table(path: Path, names):
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows = [r for r in rows if not r.get("error") and r["method"] in names]
    sizes = sorted({r["size"] for r in rows})
    print("| method | n | runs | test F1 (seqeval strict, micro) mean ± sd | P | R | dev F1 | train s/run | test words/s |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for size in sizes:
        for name in names:
            rs = [r for r in rows if r["method"] == name and r["size"] == size]
            if not rs:
                continue
            f = [r["scores"]["ents_seqeval_micro_f"] for r in rs]
            p = statistics.mean(r["scores"]["ents_seqeval_micro_p"] for r in rs)
            rec = statistics.mean(r["scores"]["ents_seqeval_micro_r"] for r in rs)
            dev = statistics.mean((r["scores"].get("dev_score") or 0.0) for r in rs)
            secs = statistics.mean(r["scores"]["train_seconds"] for r in rs)
            wps = statistics.mean(r["scores"]["test_words_per_second"] for r in rs)
            sd = statistics.stdev(f) if len(f) > 1 else 0.0
            print(f"| {name} | {size} | {len(rs)} | {statistics.mean(f):.3f} ± {sd:.3f} | {p:.3f} | {rec:.3f} | {dev:.3f} | {secs:.0f} | {wps:,.0f} |")


if __name__ == "__main__":
    main()
