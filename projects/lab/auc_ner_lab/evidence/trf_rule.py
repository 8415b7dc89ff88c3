"""Which parts `recipes/lowres_best_trf.cfg` keeps: the dev-only ablation
(`studies/campaign_trf_ablation.yaml`) read by a rule fixed early in the ablation.

The rule (`PARTS`) was committed on 2026-11-26 in 486802e1 (`RULE_COMMIT`), whose tree holds 6
reported rows of the ablation's then 126 cells (lowres_best_trf's three and no_bias's three at
NCBI-disease 20); 8 had finished by then (no_augment's first two too), and they already leaned
toward dropping the bias and augmentation (`rule_fixed` says by how much, from the rows). It is
not changed after:
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
- Word-piece dropout (`piece_dropout`, the transformer's counterpart of the CPU recipe's word
  dropout, which issue 31 lists among the parts) was added on 2026-11-26, when 90 of the other
  methods' cells had rows and none of its own existed, with the rule "gain", augmentation's:
  the other regulariser, which nothing calibrates on the dev sample. The rule for the other
  parts is unchanged.
- Rows superseded by a fix of the code they ran (`store.superseded`: the self-training cells
  read re-tokenized text until later on 2026-11-26; the rule was not changed with the fix) are
  left out, so that every pair is of one procedure; their cells are trained again.
"""
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..aggregate import row_score
from ..stats import METRIC_NAME, draw_means, p_text, paired_difference
from .pairs import paired_lists

RECIPE = "lowres_best_trf"
# campaign_trf_recipe's name for the recipe as first proposed (studies/configs/lowres_best_trf_hypothesis.cfg)
HYPOTHESIS = "lowres_best_trf_hypothesis"
STUDY = "campaign_trf_ablation"
ALPHA = 0.05
# The rule's commit (`git log -S "PARTS = [" -- projects/lab/scripts/trf_ablation.py`, the file
# this module was until 2026-11-27), its commit time, the reported cells of the spec then and
# the reported rows its tree holds; the same for word-piece dropout's part, added later (the
# other methods' cells with rows in its tree, none of its own). Constants, as git is not part of the rows: tests/test_trf_ablation.py
# checks them against `git show <commit>:...` where the history is there.
RULE_COMMIT, RULE_TIME, RULE_CELLS, RULE_ROWS = "486802e1", "2026-11-26T13:38:00+00:00", 126, 6
PIECE_COMMIT, PIECE_TIME, PIECE_CELLS = "e52955ec", "2026-11-26T23:06:36+00:00", 90


def _tok2vec(config: dict) -> dict:
    return config["components"]["auc_ner"]["model"]["tok2vec"]


def _rounds(config: dict) -> int:
    return int((config.get("self_training") or {}).get("rounds", 0))


class Part(NamedTuple):
    what: str
    variant: str  # the ablation's method
    removes: bool  # True: the variant is the recipe without the part; False: with a change
    rule: str  # "gain", "significant gain", "no loss", or "" (shown, not chosen)
    # whether a recipe config has the part (makes the change), as its variant's override reads it
    in_config: Optional[Callable[[dict], bool]] = None


PARTS = [
    Part("the calibrated entity bias", "no_bias", True, "significant gain",
         lambda c: bool(c["training"].get("before_update"))),
    Part("augmentation", "no_augment", True, "gain",
         lambda c: c["corpora"]["train"].get("@readers") == "spacy_auc_ner.Augmented.v1"),
    Part("self-training (one round on the pool)", "no_self_train", True, "significant gain", lambda c: _rounds(c) >= 1),
    Part("a second self-training round", "self_train_rounds2", False, "significant gain", lambda c: _rounds(c) >= 2),
    Part("partial fine-tuning (the top 3 of MiniLM's 6 layers)", "top3_layers", False, "no loss",
         lambda c: _tok2vec(c).get("trainable_layers") == 3),
    Part("word-piece dropout (15 % of pieces masked)", "piece_dropout", False, "gain",
         lambda c: float(_tok2vec(c).get("piece_dropout") or 0.0) > 0.0),
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


def rule_fixed(rows: Sequence[dict], metric: str = "ents_seqeval_micro_f") -> str:
    """When the rule was fixed, for the sentences that cite it: its commit, the rows the commit
    holds and the cells of the spec then (constants, checked against git by the tests), and,
    from `rows` (the store's), the reported rows that had finished by the commit's time and
    each part's d on them (the rule's d: a draw's sizes averaged), what they leaned toward."""
    from datetime import datetime

    when = datetime.fromisoformat(RULE_TIME)
    before = [r for r in rows if r.get("status") == "ok" and not r.get("tuning") and r.get("finished")
              and datetime.fromisoformat(r["finished"]) < when]
    score = {(r["method"], r["corpus"], r["size"], r["partition"]): row_score(r, metric) for r in before}
    leaned = []
    for part in PARTS:
        pairs = [((c, k), score[(RECIPE, c, n, k)], v) for (m, c, n, k), v in sorted(score.items(), key=repr)
                 if m == part.variant and v is not None and score.get((RECIPE, c, n, k)) is not None]
        if not part.rule or not pairs:
            continue
        d = [a - b if part.removes else b - a for a, b in draw_means(pairs).values()]
        mean = sum(d) / len(d)
        leaned.append(f"{part.what} {100 * mean:+.1f} points over {len(d)} draw{'s' if len(d) != 1 else ''}"
                      + (", toward dropping it" if mean < 0 else ""))
    text = f"fixed in commit {RULE_COMMIT}, whose tree holds {RULE_ROWS} reported rows of its then {RULE_CELLS} cells"
    if before:
        text += f" ({len(before)} had finished by then" + ("; d on them: " + ", ".join(leaned) if leaned else "") + ")"
    return text + f"; word-piece dropout's part added in {PIECE_COMMIT}, when {PIECE_CELLS} other cells had rows and none of its own"


def null_keep_rate(draws: int, sizes: int, trials: int = 20000, seed: int = 0) -> float:
    """How often "significant gain" keeps self-training that does nothing, where round 0 trains
    what `no_self_train` trains (the CPU): `best_round` keeps a student only when its dev F1 is
    higher than its teacher's, so a cell's d is max(0, e), e the student's dev F1 minus the
    teacher's, symmetric about 0 without an effect (simulated standard normal; the scale does not
    matter to a t-test); a draw's d the mean over its `sizes`, the rule's test over `draws`.
    Seeded: the same rate each time."""
    import warnings

    import numpy as np
    from scipy import stats

    d = np.maximum(0.0, np.random.default_rng(seed).standard_normal((trials, draws, sizes))).mean(axis=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-equal draws: no spread, p NaN (then all 0: not kept)
        p = np.nan_to_num(stats.ttest_1samp(d, 0.0, axis=1).pvalue, nan=0.0)
    return float(np.mean((d.mean(axis=1) > 0) & (p < ALPHA)))


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


KEPT = ("**keep**", "**adopt**")  # the choices that put a part in the recipe (`verdict`)


class Judged(NamedTuple):
    part: Part
    diffs: List[float]  # d per draw (points / 100)
    test: object  # stats.PairedTest of the draws' pairs, None without a pair
    interval: str  # "+1.2 [-0.3, +2.7]" (points), "" without a pair
    complete: bool  # both methods have every cell of the spec
    choice: str  # `verdict`


def judge(by: Dict[tuple, object], planned: int, **where) -> List[Judged]:
    """Every part of `PARTS` read by its rule. `by`: {(method, corpus, size): MethodResult} of
    the study's reported cells (dev scores); `planned`: one method's cells in the spec;
    `where`: `paired_lists`'s sizes or corpus, for a column of the table."""
    counts = cell_counts(by)
    out = []
    for part in PARTS:
        xs, ys = paired_lists(by, part.variant, RECIPE, **where)
        a, b = (ys, xs) if part.removes else (xs, ys)
        diffs = [x - y for x, y in zip(a, b)]
        test, interval = paired_difference(a, b) if a else (None, "")
        complete = counts[part.variant] == planned and counts[RECIPE] == planned
        out.append(Judged(part, diffs, test, interval, complete,
                          verdict(part, diffs, getattr(test, "p_value", None), complete and bool(diffs))))
    return out


def cell_counts(by: Dict[tuple, object]) -> Dict[str, int]:
    """Reported cells with rows, per method of the ablation (the recipe first)."""
    methods = [RECIPE] + [p.variant for p in PARTS]
    return {m: sum(len(r.scores) for (k, _, _), r in by.items() if k == m) for m in methods}


def parts_table(by: Dict[tuple, object], corpora: Sequence[str], sizes: Sequence[int], partitions: int, fixed: str = "") -> str:
    """The ablation's table: per part, d pooled over the draws (95 % interval, p, draws), per
    size (one pair per draw at that size) and per corpus (sizes averaged), and the rule's
    choice once both methods have every cell (`judge`); `fixed`: `rule_fixed` of the store's rows."""
    fixed = fixed or rule_fixed([])

    planned = len(corpora) * len(sizes) * partitions
    columns = [judge(by, planned, sizes=(n,)) for n in sizes] + [judge(by, planned, corpus=c) for c in corpora]
    lines = ["| part | rule | d, dev F1 points (95 % CI) | p (draws) | "
             + " | ".join(f"{n} sentences" for n in sizes) + " | " + " | ".join(corpora) + " | choice |",
             "|---|---|---:|---:|" + "---:|" * len(columns) + "---|"]
    for i, j in enumerate(judge(by, planned)):
        head = f"| {j.part.what} (`{j.part.variant}`) | {j.part.rule or '–'} |"
        if not j.diffs:
            lines.append(f"{head} – | – (n=0) |" + " – |" * len(columns) + f" {j.choice} |")
            continue
        cols = [f"{100 * sum(c[i].diffs) / len(c[i].diffs):+.1f} (n={len(c[i].diffs)})" if c[i].diffs else "–" for c in columns]
        lines.append(f"{head} {j.interval} | {p_text(j.test.p_value)} (n={j.test.n}) | " + " | ".join(cols) + f" | {j.choice} |")
    counts = cell_counts(by)
    lines += ["", f"{METRIC_NAME} on the 200-sentence dev sample (the study is scored on dev only). d: for a part, "
              f"`{RECIPE}` minus the variant without it; for a change, the variant with it minus `{RECIPE}`; one pair "
              "per draw (corpus and partition, its sizes averaged), two-sided paired t-test; per size and per corpus: "
              f"the mean d and its draws. Cells with rows: `{RECIPE}` {counts[RECIPE]} of {planned}, "
              + ", ".join(f"`{p.variant}` {counts[p.variant]}" for p in PARTS) + f" of {planned} each. The rule, "
              f"{fixed} (then in `scripts/trf_ablation.py`, now `auc_ner_lab/evidence/trf_rule.py`): gain = keep when the mean d is above 0; significant gain = "
              f"also p < {ALPHA} (self-training and the bias, whose dev gain is optimistic: they are chosen and "
              "calibrated on this dev sample); no loss = adopt a cheaper change when the mean d is at least 0."]
    return "\n".join(lines) + "\n"


def _progress(by: Dict[tuple, object], planned: int) -> Tuple[List[Judged], int, int]:
    """(the parts with a rule, `judge`d; the ablation's cells with rows; its cells, the CRF head's too)."""
    return [j for j in judge(by, planned) if j.part.rule], sum(cell_counts(by).values()), planned * (len(PARTS) + 1)


def ablation_sentence(by: Dict[tuple, object], planned: int, fixed: str = "", guard: str = "") -> str:
    """The ablation in words, for docs/evidence/transformer.md: how far it is, or what the
    rule chose; `fixed`: `rule_fixed` of the store's rows; `guard`: what self-training's keep
    rests on (`self_training_guard`), after the parts kept."""
    fixed = fixed or rule_fixed([])
    judged, done, total = _progress(by, planned)
    if done < total:  # every cell, the CRF head's too: the sentence speaks for the whole ablation
        return f"its parts are chosen on dev once its ablation is in, by a rule {fixed} ({done} of {total} dev cells so far)"

    def told(j: Judged) -> str:
        return f"{j.part.what} ({j.interval} points, {p_text(j.test.p_value)}, {j.test.n} draws)"  # type: ignore[attr-defined]

    kept = [told(j) for j in judged if j.choice in KEPT]
    left = [told(j) for j in judged if j.choice not in KEPT]
    return (f"its parts chosen on dev by a rule {fixed}, {total} dev cells: kept or adopted "
            + ("; ".join(kept) or "none") + (f" ({guard})" if guard else "") + "; dropped or not adopted " + ("; ".join(left) or "none"))


def shipped_check(judged: Sequence["Judged"], config: Dict[str, Any], name: str = f"recipes/{RECIPE}.cfg") -> Tuple[str, List[str]]:
    """Whether the shipped recipe `config` (assembled, not interpolated) has the parts the rule
    chose: a sentence for parts.md and the parts where they disagree (none before every cell
    is in, when the config is the hypothesis)."""
    chosen_parts = [j for j in judged if j.part.rule and j.part.in_config is not None]
    has = {j.part.variant: bool(j.part.in_config(config)) for j in chosen_parts}  # type: ignore[misc]
    now = "; ".join(f"{j.part.what}: {'yes' if has[j.part.variant] else 'no'}" for j in chosen_parts)
    if not all(j.complete for j in chosen_parts):
        return f"`{name}` now (the hypothesis, until the rule has chosen every part): {now}.\n", []
    wrong = [f"{j.part.what} ({'in' if has[j.part.variant] else 'not in'} the config, the rule: {j.choice.strip('*')})"
             for j in chosen_parts if has[j.part.variant] != (j.choice in KEPT)]
    if not wrong:
        return f"`{name}` has the parts the rule chose: {now}.\n", []
    return (f"**`{name}` differs from the rule's choice**: " + "; ".join(wrong)
            + ". Edit it as the rule chose, then train its test cells again (campaign_trf_recipe).\n", wrong)
