"""The lab's evidence: every generated text of its documents, computed from the committed rows
(`results/`), one module per document.

- `docs`: `fragments` ({path relative to docs/: text}, every generated file) and `docs`, which
  writes or checks them and the documents' generated blocks (`lab.py docs [--check]`);
  `blocks`: the generated blocks themselves;
- `committed`: the lab folder and its committed rows; `pairs`: methods paired over the draws
  (the tests' text is `auc_ner_lab.stats`');
- one module a document: `status` (campaign_status.md), `reports` (each study's report),
  `recipe` (the recipe ablation's tables), `caveats` (caveats.md), `minilm`
  (campaign_minilm.md), `claims` (the claims' sentences), `heads` (heads_lowres/), `nodev`
  (the no-dev protocol's sentences), `trf_ablation` (campaign_trf_ablation/parts.md, with its
  rule, `trf_rule`, and the checks of its pairs, `trf_checks`), `trf_recipe` (the README's
  sentences on the transformer recipe and the peer), `readme` (the README's figures).

scripts/evidence.py adds the plots and the corpus tables, which need more than the rows.
"""
