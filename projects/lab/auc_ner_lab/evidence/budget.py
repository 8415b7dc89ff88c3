"""A no-dev recipe's schedule chosen leaving one corpus out (issue 44 points 1 and 2:
studies/campaign_trf_budget.yaml for the transformer recipe, campaign_cpu_budget.yaml for the
CPU one): for each setting of the recipe's supervised stage (its budget, a held-out share of the
user's own draw) and corpus, the mean F1 of its cells on the lab's dev sample and on test; the
setting each corpus gets from the OTHER corpora's dev scores (`nodev_choice.leave_one_corpus_out`);
on each corpus the test F1 of its choice against the schedule the recipe shipped when the rule
was fixed, paired by draw; and whether the recipe ships the choice now (`Shipped`, which the
caller reads from the package). A partition's 20 sentences are the first 20 of its 50, so the
draw (corpus, partition) is the unit: its sizes are averaged (`stats.draw_means`).

Pure functions of the latest ok rows, so that tests give them hand-made rows.
"""
from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

from ..nodev_choice import leave_one_corpus_out
from ..tuning import TuningError
from .nodev import difference, short_difference
from .pairs import draw_lists


@dataclass(frozen=True)
class Shipped:
    """The recipe's schedule as the study names its settings: ``before`` what it shipped when the
    rule was fixed, ``now`` what it ships today, each with its words ("30 epochs")."""
    before: str
    before_said: str
    now: str
    now_said: str
    plain: Optional[str] = None  # `now` without the weights' average, where it has one: the text reads now - plain
    who: str = "The recipe ships"  # whose schedule it is: the recipe's, or the peer's it is set against


def _score(row: Mapping[str, Any], metric: str, dev: bool) -> float:
    return float((row["scores"]["dev_scores"] if dev else row["scores"])[metric])


def _mean(values: List[float]) -> str:
    return f"{100 * sum(values) / len(values):.1f}" if values else "–"


def table(rows: Sequence[Mapping[str, Any]], methods: Sequence[str], corpora: Sequence[str], metric: str) -> str:
    """Markdown: per setting and corpus, "dev / test" mean F1 of its cells (sizes and partitions
    pooled) and how many cells have rows."""
    lines = ["| setting | " + " | ".join(f"{c}: dev / test" for c in corpora) + " | cells |",
             "|---|" + "---:|" * (len(corpora) + 1)]
    for method in methods:
        mine = [r for r in rows if r["method"] == method]
        cols = [" / ".join(_mean([_score(r, metric, dev) for r in mine if r["corpus"] == corpus])
                           for dev in (True, False)) for corpus in corpora]
        lines.append(f"| `{method}` | " + " | ".join(cols) + f" | {len(mine)} |")
    return "\n".join(lines) + "\n"


def chosen_vs_before(rows: Sequence[Mapping[str, Any]], chosen: Mapping[str, str], metric: str, before: str):
    """(xs, ys): per draw, the test F1 of the setting chosen for its corpus and of `before`,
    over the draws where both have rows at every size they share."""
    by = {(r["method"], r["corpus"], r["size"], r["partition"]): r for r in rows}
    return draw_lists(((c, k), _score(by[(chosen[c], c, n, k)], metric, False), _score(row, metric, False))
                      for (m, c, n, k), row in sorted(by.items(), key=str)
                      if m == before and (chosen.get(c), c, n, k) in by)


def _verdict(rows, methods, corpora, metric, before: str):
    """(choices, {corpus: setting}, xs, ys): `leave_one_corpus_out`'s choices and, where one is
    not the schedule shipped before, `chosen_vs_before`'s pairs (else empty); None before any setting
    has its rows on the other corpora."""
    try:
        choices = leave_one_corpus_out(rows, methods, corpora, metric)
    except TuningError:
        return None
    chosen = {c: choice.point["method"] for c, choice in choices.items()}
    xs, ys = ([], []) if all(m == before for m in chosen.values()) else chosen_vs_before(rows, chosen, metric, before)
    return choices, chosen, xs, ys


def budget_text(rows: Sequence[Mapping[str, Any]], methods: Sequence[str], corpora: Sequence[str], metric: str, total: int,
                shipped: Shipped) -> str:
    """The document's text: the cells so far (of the spec's `total`), the table, each corpus's
    choice, what it gives on that corpus's test set against the schedule shipped before, and
    whether the recipe ships the choice today."""
    head = f"{len(rows)} of {total} cells have rows" + ("" if len(rows) >= total else " so far (interim)")
    text = [head + ". Mean F1 (%) of each setting's cells on the lab's 200-sentence dev sample / on test:", "", table(rows, methods, corpora, metric)]
    verdict = _verdict(rows, methods, corpora, metric, shipped.before)
    if verdict is None:
        return "\n".join(text) + "\nNo choice yet: no setting has its rows on two corpora.\n"
    choices, chosen, xs, ys = verdict
    said = "; ".join(f"{c}: `{m}` ({100 * choices[c].dev_score:.1f} mean dev F1 on the other corpora, "
                     f"{choices[c].candidates} of {len(methods)} settings with every row)" for c, m in chosen.items())
    text.append(f"Chosen leaving the corpus out (the best mean dev score on the other corpora; test never read): {said}.")
    if all(m == shipped.before for m in chosen.values()):
        text.append(f"The schedule shipped when the rule was fixed (`{shipped.before}`: {shipped.before_said}, the last step kept) "
                    "is the choice on every corpus.")
    else:
        against = difference(xs, ys) if xs else "no pairs yet"
        text.append(f"The schedule shipped when the rule was fixed (`{shipped.before}`) is not the choice on every corpus. On each corpus's "
                    f"own draws, its choice minus that schedule in test F1: {against}.")
    now = "the choice on every corpus" if all(m == shipped.now for m in chosen.values()) else "not the choice on every corpus"
    text.append(f"{shipped.who} {shipped.now_said} (`{shipped.now}`): {now}.")
    if shipped.plain:
        xs, ys = chosen_vs_before(rows, {c: shipped.now for c in corpora}, metric, shipped.plain)
        text.append(f"The average minus the last step's weights (`{shipped.now}` - `{shipped.plain}`), on test: "
                    f"{difference(xs, ys) if xs else 'no pairs yet'}.")
    return "\n".join(text) + "\n"


def budget_short(rows: Sequence[Mapping[str, Any]], methods: Sequence[str], corpora: Sequence[str], metric: str, total: int,
                 shipped: Shipped) -> str:
    """README's phrase on the schedule: what the recipe ships, whether the other corpora's dev
    scores choose it for each corpus, and what the choice gives against the schedule shipped
    before (interim while cells are missing)."""
    interim = "" if len(rows) >= total else f" (interim, {len(rows)} of {total} cells)"
    verdict = _verdict(rows, methods, corpora, metric, shipped.before)
    if verdict is None:
        return f"{shipped.now_said}, not chosen yet{interim}"
    _, chosen, xs, ys = verdict
    before = ""
    if any(m != shipped.before for m in chosen.values()):
        before = f"; the choice minus the {shipped.before_said} shipped before, on test: {short_difference(xs, ys) if xs else 'no pairs yet'}"
    if all(m == shipped.now for m in chosen.values()):
        return f"{shipped.now_said}, what the other corpora's dev samples choose for each corpus, leaving it out (`{shipped.now}`{before}){interim}"
    said = ", ".join(f"{c} `{m}`" for c, m in chosen.items())
    return f"{shipped.now_said}, not what the other corpora's dev samples choose on every corpus ({said}{before}){interim}"
