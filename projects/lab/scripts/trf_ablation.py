"""Which parts `recipes/lowres_best_trf.cfg` keeps: the dev-only ablation
(`studies/campaign_trf_ablation.yaml`) read by a rule fixed before its rows.

The rule (`PARTS`) was written on 2026-11-26, when 5 of the ablation's 126 reported cells had
rows (lowres_best_trf's three and no_bias's two at NCBI-disease 20), and is not changed after:
- The unit is the draw (corpus, partition): a draw's 20- and 50-sentence cells share its seed,
  dev sample and first 20 sentences, so they are averaged into one pair (`stats.draw_means`);
  9 draws when every cell is in.
- For a part of the recipe, d = recipe - the recipe without it; for a change the recipe does
  not make, d = the recipe with it - the recipe. Dev F1 (seqeval, on the 200-sentence dev
  sample), in points.
- "gain": keep the part (adopt the change) when the mean of d over the draws is above 0.
- "significant gain": only when the mean is above 0 and the two-sided paired t-test gives
  p < 0.05. Used where the dev ablation is optimistic by construction (the campaign spec's
  caveat): self-training chooses its round on the same dev sample, round 0 among them, and
  the entity bias is calibrated on it, so a plain "mean above 0" would keep them on noise.
- "no loss": adopt a cheaper change when the mean of d is at least 0 (partial fine-tuning
  trains and back-propagates through fewer layers).
- Each part is judged on its own, against the whole recipe (one-at-a-time ablation: parts
  that only help together are not seen).
- The choice waits for every cell of both methods; before that the table says how many
  draws it has.
"""
from typing import Dict, List, NamedTuple, Optional, Sequence

RECIPE = "lowres_best_trf"
STUDY = "campaign_trf_ablation"
ALPHA = 0.05


class Part(NamedTuple):
    what: str
    variant: str  # the ablation's method
    removes: bool  # True: the variant is the recipe without the part; False: with a change
    rule: str  # "gain", "significant gain", "no loss", or "" (shown, not chosen)


PARTS = [
    Part("the calibrated entity bias", "no_bias", True, "significant gain"),
    Part("augmentation", "no_augment", True, "gain"),
    Part("self-training (one round on the pool)", "no_self_train", True, "significant gain"),
    Part("a second self-training round", "self_train_rounds2", False, "significant gain"),
    Part("partial fine-tuning (the top 3 of MiniLM's 6 layers)", "top3_layers", False, "no loss"),
    Part("every part at once (the CRF head alone)", "crf", True, ""),
]


def chosen(diffs: Sequence[float], p_value: Optional[float], rule: str) -> bool:
    """Whether `rule` keeps the part (adopts the change) given d per draw and the paired
    test's p-value."""
    mean = sum(diffs) / len(diffs)
    if rule == "gain":
        return mean > 0
    if rule == "significant gain":
        return mean > 0 and p_value is not None and p_value < ALPHA
    if rule == "no loss":
        return mean >= 0
    raise ValueError(f"unknown rule {rule!r}")


def verdict(part: Part, diffs: Sequence[float], p_value: Optional[float], complete: bool) -> str:
    """The choice column: keep / drop (adopt / not adopted), or why there is none yet."""
    if not part.rule:
        return "(not a choice)"
    if not complete:
        return "waits for every cell"
    keep = chosen(diffs, p_value, part.rule)
    if part.removes:
        return "**keep**" if keep else "**drop**"
    return "**adopt**" if keep else "**not adopted**"


def parts_table(by: Dict[tuple, object], corpora: Sequence[str], sizes: Sequence[int], partitions: int) -> str:
    """The ablation's table: per part, d pooled over the draws (95 % interval, p, draws), per
    size (one pair per draw at that size) and per corpus (sizes averaged), and the rule's
    choice once both methods have every cell. `by`: {(method, corpus, size): MethodResult}
    of the study's reported cells (dev scores)."""
    from scripts.evidence import METRIC_NAME, p_text, paired_difference, paired_lists

    def pairs(part: Part, **where):
        xs, ys = paired_lists(by, part.variant, RECIPE, **where)
        return (ys, xs) if part.removes else (xs, ys)

    def cells(method: str) -> int:
        return sum(len(r.scores) for (m, _, _), r in by.items() if m == method)

    planned = len(corpora) * len(sizes) * partitions
    lines = ["| part | rule | d, dev F1 points (95 % CI) | p (draws) | "
             + " | ".join(f"{n} sentences" for n in sizes) + " | " + " | ".join(corpora) + " | choice |",
             "|---|---|---:|---:|" + "---:|" * (len(sizes) + len(corpora)) + "---|"]
    for part in PARTS:
        a, b = pairs(part)
        if not a:
            lines.append(f"| {part.what} (`{part.variant}`) | {part.rule or '–'} | – | – (n=0) |"
                         + " – |" * (len(sizes) + len(corpora)) + f" {verdict(part, [], None, False)} |")
            continue
        t, diff = paired_difference(a, b)
        columns: List[str] = []
        for where in [{"sizes": (n,)} for n in sizes] + [{"corpus": c} for c in corpora]:
            ca, cb = pairs(part, **where)
            columns.append(f"{100 * (sum(ca) - sum(cb)) / len(ca):+.1f} (n={len(ca)})" if ca else "–")
        complete = cells(part.variant) == planned and cells(RECIPE) == planned
        choice = verdict(part, [x - y for x, y in zip(a, b)], t.p_value, complete)
        lines.append(f"| {part.what} (`{part.variant}`) | {part.rule or '–'} | {diff} | {p_text(t.p_value)} (n={t.n}) | "
                     + " | ".join(columns) + f" | {choice} |")
    lines += ["", f"{METRIC_NAME} on the 200-sentence dev sample (the study is scored on dev only). d: for a part, "
              f"`{RECIPE}` minus the variant without it; for a change, the variant with it minus `{RECIPE}`; one pair "
              "per draw (corpus and partition, its sizes averaged), two-sided paired t-test; per size and per corpus: "
              f"the mean d and its draws. Cells with rows: `{RECIPE}` {cells(RECIPE)} of {planned}, "
              + ", ".join(f"`{p.variant}` {cells(p.variant)}" for p in PARTS) + f" of {planned} each. The rule, fixed "
              "before the rows (`scripts/trf_ablation.py`): gain = keep when the mean d is above 0; significant gain = "
              f"also p < {ALPHA} (self-training and the bias, whose dev gain is optimistic: they are chosen and "
              "calibrated on this dev sample); no loss = adopt a cheaper change when the mean d is at least 0."]
    return "\n".join(lines) + "\n"


def round_zero_check(rows: Sequence[dict]) -> str:
    """The spec's caveat assumes the recipe's round 0 trains what no_self_train trains; this
    counts the (corpus, size, partition) cells where their round-0 dev F1 (spaCy's ents_f, what
    chooses the round) is the same, and how often the recipe kept round 0."""
    def round0(method: str) -> dict:
        out = {}
        for r in rows:
            found = ((r.get("scores") or {}).get("extras") or {}).get("rounds") or []
            if r["method"] == method and found:
                out[(r["corpus"], r["size"], r["partition"])] = found[0].get("dev_f")
        return out

    recipe, alone = round0(RECIPE), round0("no_self_train")
    shared = sorted(set(recipe) & set(alone))
    kept = [((r.get("scores") or {}).get("extras") or {}).get("chosen_round") for r in rows if r["method"] == RECIPE]
    same = sum(recipe[k] is not None and alone[k] is not None and abs(recipe[k] - alone[k]) < 1e-9 for k in shared)
    return (f"Round 0 of `{RECIPE}` and `no_self_train` give the same dev F1 in {same} of the {len(shared)} cells both "
            f"have (the caveat's premise: the same training on the same draw); `{RECIPE}` kept round 0 in "
            f"{sum(c == 0 for c in kept)} of its {len(kept)} cells, round 1 in {sum(c == 1 for c in kept)}.\n")
