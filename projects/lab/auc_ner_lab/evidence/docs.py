"""Every generated text of the lab's documents from the committed rows (`fragments`: {path
relative to docs/: text}) and the command that writes or checks them with the documents'
generated blocks (`docs`: `python projects/lab/lab.py docs [--check]`)."""
import math
import tempfile
import warnings
from pathlib import Path

from spacy_auc_ner.api import recipe_config

from ..claims_file import load_claims
from ..stats import tested
from ..store import StoreError, UnreadableRow
from ..verdict_table import markdown_table
from ..verdicts import verdicts
from . import blocks, committed, heads, trf_rule
from .blocks import documents
from .budget import Shipped, budget_short, budget_text
from .caveats import caveats_text
from .claims import claim_sentences, subgroup_sentence
from .committed import cells_if_any, has_results, named_rows, results_by_cell, study_spec
from .expect import expect_table
from .extras import extras_texts
from .minilm import minilm_budget, minilm_table
from .nodev import chosen_budget_short, chosen_budget_text, cpu_text, protocol_text, run_minutes
from .pairs import paired_lists
from .readme import summary_fragments
from .recipe import RECIPE_CONTRASTS, RECIPE_SENTENCES, RERUN_CONTRASTS, contrast_table, named_contrasts, ratio_table, rerun_table
from .reports import OTHER_STUDIES, report_texts
from .selection import guard_text, readme_short, readme_text
from .status import spec_counts, status_table
from .trf_ablation import trf_ablation_texts
from .trf_recipe import trf_fragments


def _budget_texts() -> dict:
    """The budget studies' documents and README phrases: each schedule (the recipes', the peer's) chosen leaving one
    corpus out, against what it had when the rule was fixed and what it has today (the package's)."""
    epochs = int(recipe_config("lowres_best_trf")["budget"]["epochs"])
    averaged = bool(recipe_config("lowres_best_trf")["training"]["optimizer"].get("use_averages"))
    steps = int(recipe_config("lowres_best")["training"]["max_steps"])
    trf_now = (f"stage_e{epochs}_avg", f"{epochs} epochs, the weights' moving average kept") if averaged else (f"stage_e{epochs}", f"{epochs} epochs")
    studies = {"transformer/budget.md": ("campaign_trf_budget", Shipped("stage_e30", "30 epochs", *trf_now,
                                                                        plain=f"stage_e{epochs}" if averaged else None)),
               "transformer/cpu_budget.md": ("campaign_cpu_budget", Shipped("stage_s600", "600 steps", f"stage_s{steps}", f"{steps} steps")),
               "transformer/peer_budget.md": ("campaign_peer_budget", Shipped(*("peer_e30", "30 epochs") * 2, who="The no-dev peer of campaign_trf_nodev trains"))}
    # the steps `recipe` counts for the transformer recipe: epochs of batches of sentences
    # (batch_by_sequence), as tests/test_budget.py checks against the orchestrator
    size = int(recipe_config("lowres_best_trf")["training"]["batcher"]["size"])
    out = {"evidence/readme/trf_steps.md": f"{epochs * math.ceil(20 / size)} at 20 sentences, {epochs * math.ceil(50 / size)} at 50\n"}
    for document, (study, shipped) in studies.items():
        spec = study_spec(study)
        rows = named_rows(study, study) if has_results(study) else []
        settings = ([m.name for m in spec.methods], list(spec.corpora), spec.metric, len(spec.cells()), shipped)
        out[f"evidence/{document}"] = budget_text(rows, *settings)
        if study != "campaign_peer_budget":  # README quotes the recipe's schedules only
            out[f"evidence/readme/{Path(document).name}"] = budget_short(rows, *settings) + "\n"
    return out


def fragments() -> dict:
    """{path relative to docs/: text} of every generated file, computed from the committed
    rows (`results/`) now, in the lab folder (`committed.in_lab`): the studies' reports, the
    tables and sentences of the documents and of the repository's README (`docs/evidence/readme/`)."""
    return committed.in_lab(_fragments)


def _fragments() -> dict:
    """`fragments` in the lab folder: each generated file's text by its path, document by
    document (a new generated file is one more entry here)."""
    out = {"evidence/campaign_status.md": status_table(), "evidence/readme/expect.md": expect_table()}
    out.update(spec_counts())
    for spec in sorted((committed.ROOT / "studies").glob("campaign_*.yaml")):
        if has_results(spec.stem):
            out.update(report_texts(spec.stem))
    for name, baseline in OTHER_STUDIES.items():
        if has_results(name):
            out.update(report_texts(name, baseline))
            out[f"evidence/{name}/ablation.md"] = ratio_table(name, baseline)
    if has_results("lowres_recipe"):
        out["evidence/lowres_recipe/parts.md"] = contrast_table("lowres_recipe", RECIPE_CONTRASTS)
        by = results_by_cell("lowres_recipe")
        out.update(named_contrasts(by))
        for key, (a, b, sizes) in RECIPE_SENTENCES.items():
            xs, ys = paired_lists(by, a, b, sizes)
            at = "" if sizes is None else f" at {', '.join(map(str, sizes))} sentences"
            out[f"evidence/recipe/{key}.md"] = (tested(a, b, xs, ys) if xs else f"`{a}` against `{b}`: no pairs") + at + "\n"
        out["evidence/caveats.md"] = caveats_text()
    if has_results("lowres_recipe_rerun"):
        out["evidence/lowres_recipe/rerun.md"] = rerun_table("lowres_recipe", RERUN_CONTRASTS)
    out["evidence/campaign_minilm.md"] = minilm_table()
    out.update(extras_texts())
    if has_results("campaign_trf_recipe"):
        spec = study_spec("campaign_trf_nodev")
        nodev, dev = cells_if_any("campaign_trf_nodev", spec), results_by_cell("campaign_trf_recipe")
        cpu, cpu_dev = cells_if_any("campaign_cpu_nodev"), results_by_cell("lowres_recipe")
        text = protocol_text(nodev, dev, list(spec.corpora)).rstrip("\n")
        out["evidence/transformer/nodev.md"] = f"{text} And {cpu_text(cpu, cpu_dev)}"
        out.update(_budget_texts())
        sixty = study_spec("campaign_trf_nodev60")
        chosen = cells_if_any("campaign_trf_nodev60", sixty)
        sixty_rows = named_rows("campaign_trf_nodev60", "campaign_trf_nodev60") if chosen else []
        out["evidence/readme/trf_minutes.md"] = run_minutes(sixty_rows) + "\n"
        sixty_args = (chosen, nodev, dev, sixty.methods[0].name, len(sixty.cells()), list(sixty.corpora))
        out["evidence/transformer/nodev60.md"] = chosen_budget_text(*sixty_args)
        out["evidence/readme/nodev60.md"] = chosen_budget_short(*sixty_args) + "\n"
    out.update(selection_texts())
    out.update(minilm_budget())
    if has_results(trf_rule.STUDY):
        out.update(trf_ablation_texts())
    results = verdicts(load_claims(committed.ROOT / "studies" / "claims.yaml"))
    out["evidence/verdicts.md"] = markdown_table(results)
    out.update(claim_sentences(results))
    if has_results("campaign_resampling"):
        out["evidence/claims/resampling_subgroups.md"] = subgroup_sentence("campaign_resampling")
    if has_results("heads_lowres"):
        heads_summary: dict = {}
        recipe_summary: dict = {}
        heads_path, recipe_path = (committed.ROOT / "results" / name for name in ("heads_lowres", "lowres_recipe"))
        out["evidence/heads_lowres/table.md"] = heads.table(heads_path, recipe_path, heads_summary) + "\n"
        out["evidence/heads_lowres/screen.md"] = heads.screen(heads_path) + "\n"
        out["evidence/heads_lowres/recipe.md"] = heads.recipe_table(recipe_path, recipe_summary) + "\n"
        out.update(summary_fragments(heads_summary, recipe_summary, {v.claim.id: v for v in results}))
    out.update(trf_fragments())
    return out


def docs(check: bool = False, say=print, generated=None, docs_list=None) -> int:
    """Write every generated file and block from the rows (`fragments`, or `generated` when
    given), or with `check` only compare: one line per file or block that differs from what
    the rows give, and 1; 0 when nothing differs. `docs_list`: the documents (`documents()`).
    A row file the rows are read from that cannot be read is named; then nothing is written
    (a StoreError), and the check fails."""
    generated, unreadable = unread_rows(fragments) if generated is None else (generated, [])
    for line in unreadable:
        say(line)
    if unreadable and not check:  # a figure without its row would be written as if it were all
        raise StoreError(f"{len(unreadable)} unreadable row file(s) in the results stores (named above); nothing "
                         "written: put them right or train their cells again, then run docs again")
    texts = {(committed.ROOT / "docs" / rel).resolve(): text for rel, text in generated.items()}
    problems = []
    for path, text in texts.items():
        current = path.read_text(encoding="utf8") if path.exists() else None
        if current == text:
            continue
        if check:
            problems.append(f"{path.relative_to(committed.ROOT.parents[1].resolve())}: differs from what the rows give")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf8", dir=path.parent, delete=False, suffix=".tmp") as tmp:
                tmp.write(text)
            Path(tmp.name).replace(path)
            say(f"wrote {path}")
    for doc in documents() if docs_list is None else docs_list:
        if check:
            problems += blocks.drift(doc, doc.resolve().parent, texts)
        else:
            before = doc.read_text(encoding="utf8")
            blocks.refresh(doc, doc.resolve().parent, texts)
            if doc.read_text(encoding="utf8") != before:
                say(f"{doc}: generated blocks refreshed")
    repo = f"{committed.ROOT.parents[1].resolve()}/"
    for line in problems:
        say(line.replace(repo, ""))
    if problems:
        say(f"{len(problems)} generated text(s) differ from the rows: run `python projects/lab/lab.py docs` to rewrite them")
    if unreadable:
        say(f"{len(unreadable)} unreadable row file(s) in the results stores (named above)")
    return 1 if problems or unreadable else 0


def unread_rows(compute):
    """`compute()` and the row files its reads skipped (`store.UnreadableRow`), each named once;
    any other warning is shown as it would have been."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UnreadableRow)
        result = compute()
    for w in caught:
        if not issubclass(w.category, UnreadableRow):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return result, list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UnreadableRow)))


def selection_results():
    """(the spec of studies/campaign_selection.yaml, its results, the recipe's on random draws:
    campaign_trf_nodev's 20 and 50 sentences, campaign_trf_nodev100's 100), as `aggregate`'s maps."""
    spec = study_spec("campaign_selection")
    loop = cells_if_any(spec.name, spec)
    random = {k: r for study in ("campaign_trf_nodev", "campaign_trf_nodev100") if loop
              for k, r in cells_if_any(study).items()}
    return spec, loop, random


def selection_texts() -> dict:
    """The annotation loop's sentences from `selection_results`, read once: in full for the lab
    (`selection.readme_text`), short for the README (`selection.readme_short`), and the length
    guard's (`selection.guard_text`: studies/campaign_selection_guard.yaml against the loop)."""
    spec, loop, random = selection_results()
    rows = named_rows(spec.name, spec.name) if loop else []
    guard_spec = study_spec("campaign_selection_guard")
    guard = cells_if_any(guard_spec.name, guard_spec)
    return {"evidence/transformer/selection.md": readme_text(loop, random, list(spec.corpora), rows),
            "evidence/readme/selection.md": readme_short(loop, random),
            "evidence/transformer/selection_guard.md": guard_text(guard, loop, random, len(guard_spec.cells()))}
