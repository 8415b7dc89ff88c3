"""docs/lowres_extras.md's table and sentences, from the raw scores committed in
results/lowres_extras/: single runs of 2026-11-22 of spaCy's `ner` on one NCBI-disease draw of
50 sentences per seed, alone and with each low-resource extra (augmentation on three seeds,
self-training and pretraining on seed 0). A first look, not evidence: no figure of it is typed."""
import json
from statistics import mean, stdev
from typing import Dict, List, Tuple

from ..stats import p_text, paired_t_test
from . import committed

FOLDER = "results/lowres_extras"
SEEDS = (0, 1, 2)
# (the table's row, the runs' keys: one per seed of `augmentation_ncbi50.json`, or seed 0's
# key in `test_scores_ncbi50_s0.json`)
AUGMENTED = [("alone", "base"), ("+ `Augmented.v1`, 2 copies (MR, LwTR)", "aug2"),
             ("+ `Augmented.v1`, 3 copies (MR, LwTR, SiS)", "aug3")]
SEED_0 = [("+ self-training, round 1 (threshold 0.9)", "self_train_round_1"),
          ("+ self-training, round 2", "self_train_round_2"),
          ("+ pretraining (characters, 2 epochs on the pool)", "pretrained_characters_2ep")]


def _read() -> Tuple[dict, dict, List[dict]]:
    folder = committed.ROOT / FOLDER
    augmentation = json.loads((folder / "augmentation_ncbi50.json").read_text(encoding="utf8"))
    seed_0 = json.loads((folder / "test_scores_ncbi50_s0.json").read_text(encoding="utf8"))
    lines = (folder / "self_train_ncbi50_s0_rounds.jsonl").read_text(encoding="utf8").splitlines()
    return augmentation, seed_0, [json.loads(line) for line in lines if line.strip()]


def _f(scores: Dict[str, float], key: str = "ents_f") -> str:
    return f"{scores[key]:.3f}"


def extras_table(augmentation: dict, seed_0: dict) -> str:
    """The table: test F1 per seed, mean ± sd, and the mean precision and recall."""
    lines = ["| spaCy `ner` | seed 0 | seed 1 | seed 2 | mean ± sd | P | R |", "|---|---:|---:|---:|---|---:|---:|"]
    for name, key in AUGMENTED:
        runs = [augmentation[f"{key}-seed{s}"] for s in SEEDS]
        f = [r["ents_f"] for r in runs]
        p, r = mean(x["ents_p"] for x in runs), mean(x["ents_r"] for x in runs)
        lines.append(f"| {name} | " + " | ".join(f"{x:.3f}" for x in f) + f" | {mean(f):.3f} ± {stdev(f):.3f} | {p:.3f} | {r:.3f} |")
    for name, key in SEED_0:
        run = seed_0[key]
        lines.append(f"| {name} | {_f(run)} | | | | {_f(run, 'ents_p')} | {_f(run, 'ents_r')} |")
    return "\n".join(lines) + "\n"


def extras_sentences(augmentation: dict, seed_0: dict, rounds: List[dict]) -> str:
    """The paired tests of augmentation against `ner` alone, seed 0's differences, and the
    self-training rounds' dev scores with the round dev would choose."""
    alone = [augmentation[f"base-seed{s}"]["ents_f"] for s in SEEDS]
    tests, significant = [], 0
    for copies, key in ((2, "aug2"), (3, "aug3")):
        t = paired_t_test([augmentation[f"{key}-seed{s}"]["ents_f"] for s in SEEDS], alone)
        tests.append(f"{copies} copies {100 * t.mean_diff:+.1f} ({p_text(t.p_value)}, n={t.n})")
        significant += t.p_value is not None and t.p_value < 0.05
    base = seed_0["self_train_round_0"]["ents_f"]
    diffs = [f"{100 * (seed_0[key]['ents_f'] - base):+.1f}" for key in ("self_train_round_1", "pretrained_characters_2ep")]
    dev = [r["dev"]["ents_f"] for r in sorted(rounds, key=lambda r: r["round"])]
    best = max(range(len(dev)), key=dev.__getitem__)
    same = seed_0["pretrain_config_without_weights"]["ents_f"] == base
    return (f"Paired differences to spaCy's `ner` alone (points of F1, two-sided paired t-test over the same three draws): "
            f"{', '.join(tests)}; {('neither is', 'one is', 'both are')[significant]} significant at the 5 % level with three draws. Self-training "
            f"and pretraining ran on seed 0 only ({diffs[0]} and {diffs[1]} points on that draw, no test possible). The "
            f"self-training rounds' dev F1 on the 300-sentence dev sample: {', '.join(f'{x:.3f}' for x in dev)} (rounds 0 to "
            f"{len(dev) - 1}), so choosing the round on dev picks round {best}. The pretraining config without pretrained "
            f"weights gave {'the same test F1 as' if same else 'another test F1 than'} `ner` alone on seed 0.\n")


def extras_texts() -> Dict[str, str]:
    """{path under docs/: text} of lowres_extras.md's generated blocks (none without the folder)."""
    if not (committed.ROOT / FOLDER).exists():
        return {}
    augmentation, seed_0, rounds = _read()
    return {"evidence/lowres_extras/table.md": extras_table(augmentation, seed_0),
            "evidence/lowres_extras/tests.md": extras_sentences(augmentation, seed_0, rounds)}
