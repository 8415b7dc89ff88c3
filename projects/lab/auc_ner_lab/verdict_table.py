"""The verdicts' table (`markdown_table`), corrected for testing many claims at once: a verdict
that rests on p < 0.05 (a confirmed difference or trend, any contradiction) stands only when
its Holm-adjusted p is below 0.05 too; otherwise it reads *not confirmed after Holm*, with what
the claim's own test said (`family_verdict`)."""
from typing import List, Optional, Sequence

from .claims_file import side_name
from .stats import holm, p_text, pct
from .verdicts import Verdict


def family_verdict(verdict: Verdict, p_holm: Optional[float], alpha: float = 0.05) -> str:
    """`verdict`'s verdict among all the claims of a table: one that rests on p < `alpha`
    (confirmed better/worse/trend, contradicted) but whose Holm-adjusted p is not below
    `alpha` is one of the findings that many tests make by chance, so it is not confirmed;
    a ``similar`` claim confirmed by its interval needs no correction."""
    rests_on_p = verdict.verdict == "contradicted" or (verdict.verdict == "confirmed" and verdict.claim.expect != "similar")
    if rests_on_p and (p_holm is None or p_holm >= alpha):
        return f"not confirmed after Holm ({verdict.verdict} at p < {alpha} alone)"
    return verdict.verdict


UNIT_NOTE = (
    "Unit: the training draw (a corpus's partition in a setting). The cells of one draw (its sizes, masking "
    "rates or entity shares: one seed, one dev sample, one test set, a smaller draw a subset of a larger one) "
    "are averaged into one pair, then a two-sided paired t-test over the draws (a trend: one slope of the gap "
    "per draw, t-test over the draws); Holm's adjustment over every claim of the table. Means and differences "
    "are over the draws. Per corpus: each corpus's draws alone, uncorrected, exploratory (a subgroup is read "
    "beside its claim, not as a finding). Counted by cell: the same test with every cell a pair, as the table "
    "counted before, with its Holm p and verdict where the verdict differs. \"k without versions\": cell pairs "
    "with a row that records no library versions or commit (written before rows recorded them, not rerun)."
)


def _per_corpus_text(v: Verdict) -> str:
    return "; ".join(f"{c} {pct(d, True)} ({p_text(p)}, n={n})" for c, d, p, n in v.per_corpus) or "–"


def markdown_table(results: Sequence[Verdict]) -> str:
    """`UNIT_NOTE`, then one row per claim in the columns its header names (for a trend claim the
    difference is the mean slope of the gap per doubling of its axis), its p adjusted by Holm's
    method over every claim of the table with a test (many claims tested at 0.05 find some by
    chance) and the verdict after that correction (`family_verdict`); then the claims' notes."""
    lines = [
        UNIT_NOTE, "",
        "| claim | paper | ours: a vs b (F1 %) | paired difference (points, 95 % CI) | p (draws; cells) | pairs cover | Holm p | verdict | per corpus (exploratory, uncorrected) | counted by cell: Holm p, verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    adjusted = holm([v.p_value for v in results])
    cell_adjusted = holm([v.by_cell.p_value if v.by_cell else None for v in results])
    notes = []
    for v, p_holm, p_cell in zip(results, adjusted, cell_adjusted):
        c = v.claim
        if v.n == 0:
            ours, diff = f"`{side_name(c.a)}` vs `{side_name(c.b)}`: no finished pairs yet", "–"
        else:
            rel = "" if v.relative is None else f" ({v.relative * 100:+.0f} %)"
            ours = f"`{side_name(c.a)}` {pct(v.mean_a)} vs `{side_name(c.b)}` {pct(v.mean_b)}{rel}"
            ci = f" [{pct(v.diff_low, True)}, {pct(v.diff_high, True)}]" if v.diff_low is not None else ""
            diff = f"{pct(v.mean_diff, True)}{ci}"
            if c.trend:
                diff = f"slope of the gap {diff} per doubling of {c.trend}"
        pairs = f"n={v.n} draws; {v.cells} cells" + (f", {v.unversioned} without versions" if v.unversioned else "")
        if c.note:
            notes.append(f"- {c.claim}: {c.note}")
        verdict = family_verdict(v, p_holm)
        before = "–"
        if v.by_cell is not None and v.by_cell.n:
            was = family_verdict(v.by_cell, p_cell)
            before = "same verdict" if was == verdict else f"{p_text(p_cell).replace('p=', '')}, {was}"
        lines.append(f"| {c.claim} | {c.paper} | {ours} | {diff} | {p_text(v.p_value)} ({pairs}) | {v.covers or '–'} | "
                     f"{p_text(p_holm).replace('p=', '')} | {verdict} | {_per_corpus_text(v)} | {before} |")
    if notes:
        lines += ["", "Notes:", ""] + notes
    return "\n".join(lines + encoder_columns(results, adjusted)) + "\n"


def encoder_columns(results: Sequence[Verdict], adjusted: Sequence[Optional[float]]) -> List[str]:
    """The claims that another claim repeats on a second encoder (``repeats``), side by side:
    each encoder's paired difference, p-value (pairs) and verdict after Holm, from the rows of
    the table above (so the same Holm correction)."""
    by_id = {v.claim.id: (v, p) for v, p in zip(results, adjusted)}
    repeats = [(by_id[v.claim.repeats], (v, p)) for v, p in zip(results, adjusted) if v.claim.repeats in by_id]
    if not repeats:
        return []

    def cell(v: Verdict, p_holm: Optional[float]) -> str:
        if v.n == 0:
            return "not measured"
        return f"{pct(v.mean_diff, True)} points, {p_text(v.p_value)} (n={v.n} draws): {family_verdict(v, p_holm)}"

    lines = ["", "The claims measured on both encoders (the repeat's name and pairs in the table above):", "",
             "| claim | CPU tok2vec | repeated on |", "|---|---|---|"]
    for (first, p_first), (again, p_again) in repeats:
        lines.append(f"| {first.claim.claim} | {cell(first, p_first)} | {again.claim.claim.split(':')[0]}: {cell(again, p_again)} |")
    return lines
