"""The lab's evidence: every generated text of its documents, computed from the committed rows
(`results/`), one module per document.

`docs` computes (`fragments`) and writes or checks every generated file and the documents'
generated blocks (`blocks`) for `lab.py docs [--check]`; `committed` reads the lab folder's rows;
`pairs` pairs methods over the draws. The other modules are one document each: `status`,
`reports`, `recipe`, `caveats`, `minilm`, `claims`, `heads`, `nodev`, `budget`, `selection`,
`extras`, `trf_ablation` (with its rule, `trf_rule`, and the checks of its pairs, `trf_checks`),
`trf_recipe` and `readme` (the README's figures). scripts/evidence.py adds the plots and the
corpus tables, which need more than the rows.
"""
