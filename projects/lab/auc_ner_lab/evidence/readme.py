"""The sentences generated from the heads' and the recipe's summaries (`heads.table`,
`heads.recipe_table`) and the claims' verdicts: the fixed heads against spaCy's `ner` and the
recipe decision, short for the README (docs/evidence/readme/) and in full for docs/recipe.md
(evidence/recipe/decision.md), and MiniLM's CRF head for docs/evidence/transformer.md
(evidence/transformer/minilm.md)."""
from ..stats import agreement, holm, p_words, paired_difference, span
from ..verdict_table import family_verdict
from .heads import HEAD_EXTRAS, NER_EXTRAS
from .minilm import minilm_cells


def summary_fragments(heads: dict, recipe: dict, by_claim: dict) -> dict:
    """{path relative to docs/: sentence} from the heads' and the recipe's summaries and the
    claims' verdicts by id."""
    out = {}
    fixed, plain = heads.get("bilstm_crf_cal_wd"), heads.get("bilstm_crf")
    if fixed and plain and "p" in fixed:
        out["evidence/readme/heads.md"] = (
            f"×{fixed['mean_ratio']:.2f} spaCy's default `ner` on average over the {fixed['cells']} corpus × size cells, "
            f"{fixed['diff']:+.1f} points of entity F1 (paired t-test over the {fixed['draws']} draws, a draw's two "
            f"sizes averaged, {p_words(fixed['p'])}), no cell below ×{fixed['low']:.2f} (s800 at 20: the plain BiLSTM-CRF "
            f"was ×{plain['ratios'][('s800', 20)]:.2f})" + ("; the spaCy `ner` rows of this comparison record no library versions" if fixed["unversioned"] else "") + "\n")
    if all(key in recipe for key in ("dev", "test", HEAD_EXTRAS, NER_EXTRAS)):
        dev, test, opt = recipe["dev"], recipe["test"], recipe["optimism"]
        best, ner = recipe["lowres_best"], recipe["lowres_spacy_ner"]
        out["evidence/readme/recipe.md"] = (
            f"the dev comparison, run after the switch on the same draws, {agreement(dev[0] - dev[1], dev[2])}: `lowres_best` "
            f"{dev[0] - dev[1]:+.1f} points of dev F1 over `lowres_spacy_ner` ({p_words(dev[2])}, {dev[3]} draws; test "
            f"{test[0] - test[1]:+.1f}, {p_words(test[2])}), and on test it scores ×{best[0] / best[1]:.2f} spaCy's default `ner` "
            f"({best[0] - best[1]:+.1f} points, {p_words(best[2])}, {best[3]} draws)\n")
        out["evidence/recipe/decision.md"] = (
            f"the dev comparison, run after the switch on the same draws, {agreement(dev[0] - dev[1], dev[2])}: `lowres_best` {dev[0] - dev[1]:+.1f} points of dev F1 "
            f"over `lowres_spacy_ner` (paired t-test over {dev[3]} draws, {p_words(dev[2])}; test {test[0] - test[1]:+.1f}, {p_words(test[2])}). "
            f"About {opt['lowres_best'] - opt['lowres_spacy_ner']:.1f} points of the dev gap may be the optimism of the entity bias, "
            f"calibrated on the dev sample that scores it: dev minus test averages {opt['lowres_best']:+.1f} points for `lowres_best` and "
            f"{opt['lowres_spacy_ner']:+.1f} for `lowres_spacy_ner` on these cells. On test `lowres_best` scores ×{best[0] / best[1]:.2f} spaCy's "
            f"default `ner` ({best[0] - best[1]:+.1f}, {p_words(best[2])}, {best[3]} draws), `lowres_spacy_ner` ×{ner[0] / ner[1]:.2f} "
            f"({ner[0] - ner[1]:+.1f}, {p_words(ner[2])})\n")
    crf_vs = by_claim.get("minilm_ova_auc_vs_crf")
    ce_vs = by_claim.get("minilm_ova_auc_vs_ce")
    by, recipe_cells = minilm_cells()
    crf = {(c, n): r for (m, c, n), r in by.items() if m == "crf"}
    if crf and crf_vs and ce_vs and crf_vs.n and ce_vs.n:
        adjusted = dict(zip(by_claim, holm([v.p_value for v in by_claim.values()])))

        def scores(corpus):
            return " / ".join(f"{100 * crf[(corpus, n)].summary.mean:.1f}" for n in sorted(n for c, n in crf if c == corpus))

        gaps = []
        for (c, n), r in sorted(crf.items()):
            other = recipe_cells.get(("lowres_best", c, n))
            if other is not None:
                shared = sorted(set(r.scores) & set(other.scores))
                if len(shared) >= 2:
                    t, _ = paired_difference([r.scores[i] for i in shared], [other.scores[i] for i in shared])
                    gaps.append((100 * t.mean_diff, t.p_value, len(shared)))
        gap_text = ""
        if gaps:
            gap_text = (f"; {min(g for g, _, _ in gaps):+.1f} to {max(g for g, _, _ in gaps):+.1f} points over the tok2vec `lowres_best` "
                        f"on the same draws (paired p {min(p for _, p, _ in gaps):.3f}-{max(p for _, p, _ in gaps):.3f}, "
                        f"{span([n for _, _, n in gaps])} pairs each), a tuned protocol against an untuned one, "
                        "so not the encoder's gain alone")

        def corpora(v):
            return ", ".join(f"{c} {100 * d:+.1f}" for c, d, _, _ in v.per_corpus)

        out["evidence/transformer/minilm.md"] = (
            f"the CRF head on MiniLM scores {scores('conll2003')} entity F1 on CoNLL 2003 at 20 / 50 sentences and "
            f"{scores('ncbi_disease')} on NCBI-disease (learn rate tuned per method){gap_text}. "
            f"OVA-AUC against the CRF: {100 * crf_vs.mean_diff:+.1f} points over {crf_vs.n} draws (a draw's sizes averaged; "
            f"{p_words(crf_vs.p_value)}, Holm over the {len(by_claim)} claims {adjusted['minilm_ova_auc_vs_crf']:.2f}: "
            f"{family_verdict(crf_vs, adjusted['minilm_ova_auc_vs_crf'])}; "
            f"by corpus, exploratory: {corpora(crf_vs)}); against CE: {100 * ce_vs.mean_diff:+.1f} ({p_words(ce_vs.p_value)}, "
            f"{ce_vs.n} draws, Holm {adjusted['minilm_ova_auc_vs_ce']:.2f}), its sign differing by corpus ({corpora(ce_vs)})\n")
    return out
