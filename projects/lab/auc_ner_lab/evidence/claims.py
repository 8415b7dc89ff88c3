"""The claims' sentences for the documents' prose (evidence/claims/<id>.md: a claim's paired
difference, its draws and its Holm-adjusted p) and how exploratory a study's subgroups are."""
from ..aggregate import aggregate
from ..claims_file import side_name
from ..spec import load_spec
from ..stats import holm, p_words
from ..verdict_table import family_verdict
from . import committed
from .committed import results_store


def claim_sentences(results) -> dict:
    """{evidence/claims/<id>.md: what a claim's test gives, as a sentence part}, for the
    documents' prose: "`ova_auc` - `ce` = +2.5 points [+1.1, +3.9] over 10 draws (20 cells;
    p = 0.003 alone, Holm p = 0.078 over the 27 claims: not confirmed after Holm ...)"."""
    out = {}
    for v, p_holm in zip(results, holm([v.p_value for v in results])):
        c = v.claim
        if not v.n:
            text = f"`{side_name(c.a)}` against `{side_name(c.b)}`: no finished pairs yet"
        else:
            ci = f" [{100 * v.diff_low:+.1f}, {100 * v.diff_high:+.1f}]" if v.diff_low is not None else ""
            what = (f"the slope of the gap `{side_name(c.a)}` - `{side_name(c.b)}` per doubling of the {c.trend} is {100 * v.mean_diff:+.1f} points{ci}"
                    if c.trend else f"`{side_name(c.a)}` - `{side_name(c.b)}` = {100 * v.mean_diff:+.1f} points{ci}")
            p_alone = "no p-value" if v.p_value is None else f"{p_words(v.p_value)} alone"
            holm_text = "" if p_holm is None else f", Holm {p_words(p_holm)} over the {len(results)} claims"
            text = f"{what} over {v.n} draws ({v.cells} cells; {p_alone}{holm_text}: {family_verdict(v, p_holm)})"
        out[f"evidence/claims/{c.id}.md"] = text + "\n"
    return out


def subgroup_sentence(name: str) -> str:
    """How many of a study's per-cell tests against its baseline (each method or value at each
    corpus and size, over its draws) reach p < 0.05 uncorrected, and the smallest p after Holm
    over all of them: subgroups are exploratory, and this says how exploratory."""
    spec = load_spec(committed.ROOT / "studies" / f"{name}.yaml")
    results = aggregate(results_store(name).rows_for(spec.cells()), metric=spec.metric, baseline=spec.baseline)
    ps = [r.vs_baseline.p_value for r in results if r.vs_baseline is not None and r.vs_baseline.p_value is not None]
    low = sum(p < 0.05 for p in ps)
    adjusted = [p for p in holm(ps) if p is not None]
    return (f"{low} of the {len(ps)} per-cell tests against {spec.baseline} (each at one corpus and size, over its draws) "
            f"have p < 0.05 uncorrected; after Holm over the {len(ps)} the smallest p is {min(adjusted):.2f}\n")
