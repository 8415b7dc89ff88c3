"""GPU checks (issue 31 point 5): mixed precision, trainable_layers and the entity-bias callback
under `spacy train --gpu-id 0`, MiniLM fine-tuned with the CRF head, on a 50-sentence
NCBI-disease draw (LowResource.v1, seed 0), the 200-sentence dev sample, 150 steps of
8-sentence batches; each variant beside the plain run, all four at once on the one GPU, then
`spacy evaluate --gpu-id 0` on the test split. Usage: gpu_checks.py CORPUS_DIR OUT_DIR"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import spacy
from thinc.api import Config

corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
GPU = os.environ.get("GPU_ID", "0")  # -1 and STEPS=4: a dry run of this script on a CPU
STEPS = int(os.environ.get("STEPS", "150"))
out.mkdir(parents=True, exist_ok=True)
base_cfg = out / "crf_trf.cfg"
subprocess.run([sys.executable, "-m", "spacy_auc_ner", "config", "crf", "--encoder", "trf", "-o", str(base_cfg)], check=True)


def draw(split, n):
    return {"@readers": "spacy_auc_ner.LowResource.v1", "path": f"${{paths.{split}}}", "n": n, "seed": 0}


common = {
    "paths.transformer": "minilm",
    "corpora.train": draw("train", 50),
    "corpora.dev": draw("dev", 200),
    "training.max_steps": STEPS, "training.max_epochs": 0, "training.eval_frequency": max(STEPS // 6, 1), "training.patience": 1000,
    "training.batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 8, "get_length": None},
    "training.optimizer.learn_rate.initial_rate": 0.0003,
    "training.optimizer.learn_rate.warmup_steps": max(STEPS // 10, 1),
    "training.optimizer.learn_rate.total_steps": STEPS,
}
enc = "components.auc_ner.model.tok2vec"
variants = {
    "plain": {},
    "mixed_precision": {f"{enc}.mixed_precision": True},
    "trainable_layers_2": {f"{enc}.trainable_layers": 2},
    "entity_bias_callback": {"training.before_update": {"@callbacks": "spacy_auc_ner.calibrate_entity_bias.v1"}},
}
procs = {}
for name, extra in variants.items():
    config = Config().from_disk(base_cfg, interpolate=False)
    for key, value in {**common, **extra}.items():
        *parents, leaf = key.split(".")
        node = config
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    cfg = out / f"{name}.cfg"
    config.to_disk(cfg)
    log = open(out / f"{name}.log", "w")
    cmd = [sys.executable, "-m", "spacy", "train", str(cfg), "--gpu-id", GPU, "-o", str(out / name),
           "--paths.train", str(corpus / "train.spacy"), "--paths.dev", str(corpus / "dev.spacy")]
    procs[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), time.perf_counter())
rows = []
for name, (proc, start) in procs.items():
    code = proc.wait()
    seconds = time.perf_counter() - start
    row = {"variant": name, "exit": code, "train_seconds": round(seconds, 1)}
    if code == 0:
        best = out / name / "model-best"
        ev = subprocess.run([sys.executable, "-m", "spacy", "evaluate", str(best), str(corpus / "test.spacy"), "--gpu-id", GPU,
                             "--output", str(out / f"{name}_test.json")], capture_output=True, text=True)
        if ev.returncode == 0:
            scores = json.loads((out / f"{name}_test.json").read_text())
            row["test_ents_f"] = round(scores["ents_f"], 4)
        else:
            row["evaluate_error"] = ev.stderr[-500:]
        nlp = spacy.load(best)
        row["entity_bias"] = nlp.get_pipe("auc_ner").cfg.get("entity_bias")
        row["model_best_config"] = {k: nlp.config["components"]["auc_ner"]["model"]["tok2vec"].get(k) for k in ("mixed_precision", "trainable_layers")}
    else:
        row["log_tail"] = (out / f"{name}.log").read_text()[-1500:]
    rows.append(row)
    print(json.dumps(row), flush=True)
(out / "gpu_checks.json").write_text(json.dumps(rows, indent=1) + "\n")
