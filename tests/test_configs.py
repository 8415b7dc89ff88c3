"""Configs: a base per encoder family, a short partial config per method and per recipe, one
assembly.

Every method assembles onto both bases and builds; the method files hold only what makes the
method (no shared block, no restated factory default); every method keeps the base's encoder
and training setup (a fair comparison); every recipe assembles to the full config it was
shipped as, its extras written once; `spacy-auc-ner config` writes what `spacy train` reads,
fails in one line and leaves no partial file.
"""
import inspect
from pathlib import Path

import pytest
import spacy
from spacy.language import Language
from spacy.util import load_config, load_model_from_config, registry
from typer.testing import CliRunner

from spacy_auc_ner.cli.app import app
from spacy_auc_ner.methods import (
    ENCODERS,
    MethodError,
    assemble,
    base_path,
    describe,
    method_config,
    method_names,
    method_path,
    recipe_config,
    recipe_names,
)

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"
METHODS = method_names(CONFIGS)
# the method names of the papers, of the README's tables and of the studies
PAPER_METHODS = {
    "ce", "spacy_ner", "ova_auc", "ova_auc_all", "ova_auc_sampled", "ova_bce", "two_task_auc", "ce_2t",
    "two_task_comauc", "crf", "bilstm_crf", "mom", "focal", "dice", "weighted_ce", "negative_sampling_uniform",
    "negative_sampling_weighted",
}
SHARED_TOP = {"paths", "system", "corpora", "training", "pretraining", "initialize"}
# the recipes as they were shipped until 2026-11-24, one full config file each (the rows of
# studies/lowres_recipe.yaml trained them)
FULL_RECIPES = Path(__file__).parent / "data" / "full_recipes"
RECIPES = ["lowres_best", "lowres_spacy_ner", "lowres_crf_auc"]
# the recipes on the transformer base (no full config before them; tests/test_transformer_configs.py)
TRF_RECIPES = ["lowres_best_trf"]


def _pipe(cfg):
    return cfg["components"][cfg["nlp"]["pipeline"][0]]


def _base_encoder(model):
    """The base's encoder block in a pipe's model: its tok2vec, or inside a wrapper of it
    (spacy_ner_bilstm: BiLSTMEncoder.v1 around the base's encoder)."""
    block = model["tok2vec"]
    while "tok2vec" in block:
        block = block["tok2vec"]
    return block


def test_the_papers_methods_are_there_and_nothing_else_is_in_configs():
    assert PAPER_METHODS <= set(METHODS)
    # the bases, the recipes' shared partials (self-training's settings, the extras) and the budget's defaults; the recipes are partials too
    assert sorted(p.name for p in CONFIGS.glob("*.cfg")) == sorted([*ENCODERS.values(), "lowres_extras.cfg", "self_training.cfg", "budget.cfg"])
    assert recipe_names(CONFIGS) == sorted(RECIPES + TRF_RECIPES)
    assert not set(METHODS) & set(RECIPES + TRF_RECIPES)
    assert all(describe(m, CONFIGS) for m in METHODS + RECIPES + TRF_RECIPES)


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
@pytest.mark.parametrize("name", METHODS)
def test_every_method_builds_on_every_encoder(name, encoder):
    cfg = method_config(name, encoder, CONFIGS, {"paths.transformer": "unused"} if encoder == "trf" else None)
    nlp = load_model_from_config(cfg, auto_fill=True, validate=True)
    assert nlp.pipe_names == cfg["nlp"]["pipeline"] and len(nlp.pipe_names) == 1


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
@pytest.mark.parametrize("name", METHODS)
def test_every_method_shares_the_bases_encoder_training_and_corpora(name, encoder):
    base = load_config(base_path(encoder, CONFIGS), interpolate=False)
    cfg = method_config(name, encoder, CONFIGS)
    for section in SHARED_TOP - {"initialize"}:
        assert cfg[section] == base[section], section
    assert cfg["nlp"]["batch_size"] == base["nlp"]["batch_size"]
    assert _base_encoder(_pipe(cfg)["model"]) == _pipe(base)["model"]["tok2vec"]
    if cfg["nlp"]["pipeline"] == ["auc_ner"] and not name.startswith("bilstm_"):
        # the architecture is named once, in the base
        assert _pipe(cfg)["model"]["@architectures"] == _pipe(base)["model"]["@architectures"]


@pytest.mark.parametrize("name", METHODS)
def test_method_files_hold_only_what_makes_the_method(name):
    cfg = load_config(method_path(name, CONFIGS), interpolate=False)
    assert not set(cfg) & SHARED_TOP
    assert set(cfg.get("nlp", {})) <= {"pipeline"}
    for pipe, block in cfg["components"].items():
        # the encoder belongs to the bases: a method may wrap it (naming a wrapper, not what it wraps)
        assert "tok2vec" not in block.get("model", {}).get("tok2vec", {}), "the encoder belongs to the bases"
        assert "tok2vec" not in block.get("model", {}) or name == "spacy_ner_bilstm"
        assert "spans_key" not in block
        # auc_ner's factory default is the package scorer; spaCy's ner names it to be scored alike
        assert "scorer" not in block or (pipe == "ner" and block["scorer"] == {"@scorers": "spacy_auc_ner.entity_scorer.v1"})
    n_lines = sum(1 for line in method_path(name, CONFIGS).read_text().splitlines() if line and not line.startswith("#"))
    assert n_lines <= 14


def _restated_defaults(block, defaults, where):
    """Leaf settings of `block` equal to `defaults` (a factory's default config or a registered
    function's signature defaults), recursing into sub-blocks of the same function."""
    found = []
    for key, value in block.items():
        if key.startswith("@"):
            continue
        if isinstance(value, dict):
            promise = next((k for k in value if k.startswith("@")), None)
            if promise is None:
                continue
            func = getattr(registry, promise[1:]).get(value[promise])
            params = {k: p.default for k, p in inspect.signature(func).parameters.items() if p.default is not inspect.Parameter.empty}
            found += _restated_defaults(value, params, f"{where}.{key}")
        elif key in defaults and defaults[key] == value:
            found.append(f"{where}.{key} = {value!r}")
    return found


@pytest.mark.parametrize("name", METHODS)
def test_method_files_restate_no_factory_default(name):
    spacy.blank("en")  # registers spaCy's own factories
    cfg = load_config(method_path(name, CONFIGS), interpolate=False)
    found = []
    for pipe, block in cfg["components"].items():
        defaults = Language.get_factory_meta(block.get("factory", pipe)).default_config
        found += _restated_defaults(block, defaults, f"components.{pipe}")
    assert not found, f"{name}: lines that restate a default: {found}"


def test_restated_default_check_can_fail(tmp_path):
    defaults = Language.get_factory_meta("auc_ner").default_config
    block = {"scheme": "ova", "entity_bias": 0.0, "loss": {"@losses": "spacy_auc_ner.AUCMargin.v1", "margin": 1.0, "mode": "batch"}}
    assert _restated_defaults(block, defaults, "c") == ["c.scheme = 'ova'", "c.entity_bias = 0.0", "c.loss.margin = 1.0"]


def test_spacy_ner_replaces_the_pipe_and_keeps_the_encoder():
    cpu = method_config("spacy_ner", "cpu", CONFIGS)
    assert cpu["nlp"]["pipeline"] == ["ner"] and set(cpu["components"]) == {"ner"}
    assert "auc_ner" not in cpu["initialize"]["components"]
    assert cpu["components"]["ner"]["model"]["tok2vec"] == _pipe(method_config("ce", "cpu", CONFIGS))["model"]["tok2vec"]
    trf = method_config("spacy_ner", "trf", CONFIGS)
    assert trf["components"]["ner"]["model"]["tok2vec"]["@architectures"] == "spacy_auc_ner.TransformerEncoder.v1"
    bilstm = method_config("bilstm_crf", "trf", CONFIGS)
    assert bilstm["components"]["auc_ner"]["model"]["@architectures"] == "spacy_auc_ner.BiLSTMTokenScorer.v2"
    assert bilstm["components"]["auc_ner"]["model"]["tok2vec"]["name"] == "${paths.transformer}"


def test_a_wrapper_of_the_encoder_gets_the_bases_encoder_inside():
    """spacy_ner_bilstm names BiLSTMEncoder.v1 and leaves out what it wraps: the assembly puts
    the base's encoder inside, on either base. A method that brings its own encoder (a
    listener, or a wrapper with its inner encoder) keeps it; a tok2vec that names no function
    is edits of the base's encoder."""
    for encoder in ENCODERS:
        cfg = method_config("spacy_ner_bilstm", encoder, CONFIGS)
        wrapper = cfg["components"]["ner"]["model"]["tok2vec"]
        assert wrapper["@architectures"] == "spacy_auc_ner.BiLSTMEncoder.v1"
        assert wrapper["tok2vec"] == _pipe(load_config(base_path(encoder, CONFIGS), interpolate=False))["model"]["tok2vec"]
    from spacy_auc_ner.methods import _encoder_slot

    listener = {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}
    assert _encoder_slot({"@architectures": "spacy.TransitionBasedParser.v2", "tok2vec": listener}) is None
    inner = {"@architectures": "spacy.Tok2Vec.v2"}
    own = {"@architectures": "spacy_auc_ner.BiLSTMEncoder.v1", "tok2vec": inner}
    assert _encoder_slot({"tok2vec": own}) is None
    bare = {"@architectures": "spacy_auc_ner.BiLSTMEncoder.v1"}
    assert _encoder_slot({"tok2vec": bare}) is bare
    assert _encoder_slot({"tok2vec": {"@architectures": "no.such.Architecture.v1"}}) is None
    edits = {"tok2vec": {"embed": {"@architectures": "spacy_auc_ner.MultiHashEmbed.v1"}}}  # no function: edits of the base's
    assert _encoder_slot(edits) is edits


@pytest.mark.parametrize("name", RECIPES)
def test_a_recipe_assembles_to_the_full_config_it_was(name):
    """A recipe is a short partial on the CPU base, assembled as a method is: it trains what
    its full config file trained, as written (so that its study cells keep their keys) and as
    spaCy fills it."""
    full = load_config(FULL_RECIPES / f"{name}.cfg", interpolate=False)
    assembled = recipe_config(name, CONFIGS)
    # since 2026-11-26 a recipe also holds its self-training settings, which spacy train never
    # reads, and its raw text is null unless given (it was the training file)
    assert assembled["self_training"] and assembled["corpora"]["pool"]["path"] == "${paths.raw_text}"
    assert (assembled["paths"]["raw_text"], full["paths"]["raw_text"]) == (None, "${paths.train}")
    for config in (assembled, full):
        config.pop("self_training", None)
        config["corpora"].pop("pool", None)
        config["paths"]["raw_text"] = None
    assert assembled == full
    filled = [load_model_from_config(c, auto_fill=True, validate=True).config for c in (assembled, full)]
    assert filled[0] == filled[1]


@pytest.mark.parametrize("name", RECIPES)
def test_recipe_files_hold_their_head_and_share_the_extras(name):
    """What every recipe adds (augmentation, the raw text, the pretraining block) is written
    once, in lowres_extras.cfg and pretrain/characters.cfg; a recipe's file holds its head and
    the pipe to pretrain, and at most the step budget its rows measured (lowres_best's 600 steps)."""
    cfg = load_config(CONFIGS / "recipes" / f"{name}.cfg", interpolate=False)
    assert set(cfg) <= {"nlp", "components", "training", "pretraining"}
    budget = {"max_steps", "eval_frequency", "patience"}
    assert set(cfg["pretraining"]) == {"component", "layer"} and set(cfg.get("training", {})) <= {"before_update"} | budget
    n_lines = sum(1 for line in (CONFIGS / "recipes" / f"{name}.cfg").read_text().splitlines() if line and not line.startswith("#"))
    assert n_lines <= 25


def test_config_help_names_the_partials_each_recipe_is_assembled_after():
    """`spacy-auc-ner config --help` says what `recipe_files` does: every layer of
    RECIPE_LAYERS for a CPU recipe, TRF_RECIPE_LAYERS for a _trf one (it left out
    self_training.cfg once)."""
    import re

    from spacy_auc_ner import methods
    from spacy_auc_ner.cli.app import config

    text = " ".join(config.__doc__.split())
    cpu, trf = re.search(r"CPU recipe shares \(([^)]*)\).*transformer base after (.*?)\.( |$)", text).group(1, 2)
    assert cpu.split(", ") == list(methods.RECIPE_LAYERS)
    assert trf.split(", ") == list(methods.TRF_RECIPE_LAYERS)


def test_a_tok2vec_without_a_function_edits_the_bases_encoder_and_a_tok2vec_pipe_is_it():
    encoder = _pipe(load_config(base_path("cpu", CONFIGS), interpolate=False))["model"]["tok2vec"]
    best = _pipe(recipe_config("lowres_best", CONFIGS))["model"]["tok2vec"]
    assert best["encode"] == encoder["encode"] and best["@architectures"] == encoder["@architectures"]
    assert best["embed"]["@architectures"] == "spacy_auc_ner.MultiHashEmbed.v1" and best["embed"]["word_dropout_rate"] == 0.3
    ner = recipe_config("lowres_spacy_ner", CONFIGS)
    assert ner["components"]["tok2vec"]["model"] == encoder
    assert ner["components"]["ner"]["model"]["tok2vec"]["@architectures"] == "spacy.Tok2VecListener.v1"


def test_the_papers_algorithms_are_the_named_methods():
    strategy = lambda name: _pipe(method_config(name, "cpu", CONFIGS)).get("strategy", {}).get("@misc")  # noqa: E731
    assert strategy("ova_auc") == "spacy_auc_ner.GroupedByPrefix.v1"  # Algorithm 1
    assert strategy("ova_auc_sampled") == "spacy_auc_ner.SampledClassifiers.v1"  # Algorithm 2
    assert strategy("ova_auc_all") is None  # the factory default: every classifier every step
    ce_2t = _pipe(method_config("ce_2t", "cpu", CONFIGS))
    assert ce_2t["scheme"] == "two_task" and ce_2t["loss"]["@losses"] == "spacy_auc_ner.BinaryCE.v1"


def test_overrides_apply_last_and_a_wrong_section_is_named(tmp_path):
    cfg = method_config("ce", "cpu", CONFIGS, {"training.max_steps": 7, "corpora.train": {"@readers": "spacy.Corpus.v1", "path": "x"}})
    assert cfg["training"]["max_steps"] == 7 and cfg["corpora"]["train"] == {"@readers": "spacy.Corpus.v1", "path": "x"}
    with pytest.raises(MethodError, match=r"ce.cfg: overrides \['nope.x'\]"):
        method_config("ce", "cpu", CONFIGS, {"nope.x": 1})


def test_unknown_and_transformer_names_point_to_the_method():
    with pytest.raises(MethodError, match="unknown method 'nope'; known: bilstm_crf, "):
        method_path("nope", CONFIGS)
    with pytest.raises(MethodError, match="the method 'ce' on encoder 'trf'"):
        method_path("ce_trf", CONFIGS)
    with pytest.raises(MethodError, match="unknown encoder 'gpu'"):
        base_path("gpu", CONFIGS)


def _configs_dir_with(tmp_path, name, text):
    folder = tmp_path / "configs"
    (folder / "methods").mkdir(parents=True)
    for base in ENCODERS.values():
        (folder / base).write_text((CONFIGS / base).read_text())
    (folder / "methods" / f"{name}.cfg").write_text(text)
    return folder


def test_config_command_writes_what_spacy_reads(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["config", "ova_auc", "--output", str(tmp_path / "ova_auc.cfg"), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    assert out.stderr.strip() == f"Wrote {tmp_path / 'ova_auc.cfg'}"  # the file, also when --output is a folder
    written = load_config(tmp_path / "ova_auc.cfg", interpolate=False)
    assert written == method_config("ova_auc", "cpu", CONFIGS)
    assert (tmp_path / "ova_auc.cfg").read_text().startswith("# Written by `spacy-auc-ner config ova_auc --encoder cpu`")
    listed = runner.invoke(app, ["config", "--list", "--configs-dir", str(CONFIGS)])
    assert listed.exit_code == 0 and "ova_auc_sampled\tOVA-AUC-MAML (Algorithm 2" in listed.output
    assert "lowres_best\tThe low-resource recipe (20-100 sentences)" in listed.output
    # --list with a name listed everything and dropped the name without a word
    named = runner.invoke(app, ["config", "ova_auc", "--list", "--configs-dir", str(CONFIGS)])
    assert named.exit_code == 1 and named.stdout == ""
    assert named.stderr.strip() == "Error: --list lists every method and recipe: give it alone, without ova_auc"
    assert runner.invoke(app, ["config", "--list", "--output", str(tmp_path / "x")]).stderr.strip().endswith("give it alone, without --output")
    both = runner.invoke(app, ["config", "ova_auc", "--all", "--output", str(tmp_path / "both")])
    assert both.exit_code == 1 and both.stderr.strip() == "Error: give a method or recipe (ova_auc) or --all, not both"
    assert not (tmp_path / "x").exists() and not (tmp_path / "both").exists()
    # a recipe, as README tells a user to write it for spacy train
    out = runner.invoke(app, ["config", "lowres_best", "--output", str(tmp_path / "lowres_best.cfg"), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    assert load_config(tmp_path / "lowres_best.cfg", interpolate=False) == recipe_config("lowres_best", CONFIGS)
    assert (tmp_path / "lowres_best.cfg").read_text().startswith("# Written by `spacy-auc-ner config lowres_best` from ")


def test_config_command_all_writes_every_method_on_both_encoders(tmp_path):
    configs = _configs_dir_with(tmp_path, "ova_auc", (CONFIGS / "methods" / "ova_auc.cfg").read_text())
    (configs / "methods" / "spacy_ner.cfg").write_text((CONFIGS / "methods" / "spacy_ner.cfg").read_text())
    out = CliRunner().invoke(app, ["config", "--all", "--output", str(tmp_path / "full"), "--configs-dir", str(configs)])
    assert out.exit_code == 0, out.output
    names = sorted(p.name for p in (tmp_path / "full").iterdir())
    assert names == ["ova_auc.cfg", "ova_auc_trf.cfg", "spacy_ner.cfg", "spacy_ner_trf.cfg"]
    # the package's configs: every method on both encoders, every recipe on its one
    out = CliRunner().invoke(app, ["config", "--all", "--output", str(tmp_path / "all"), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == sorted([f"{m}{e}.cfg" for m in METHODS for e in ("", "_trf")] + [f"{r}.cfg" for r in RECIPES + TRF_RECIPES])
    trf = load_config(tmp_path / "full" / "ova_auc_trf.cfg", interpolate=False)
    assert trf == method_config("ova_auc", "trf", CONFIGS)


@pytest.mark.parametrize(
    "args,message",
    [
        (["nope"], "Error: unknown method 'nope'; known: "),
        (["ce", "--encoder", "gpu"], "Error: unknown encoder 'gpu'; choose one of cpu, trf"),
        (["lowres_best", "--encoder", "trf"], "Error: 'lowres_best' is a recipe, built on the cpu base (base_cpu.cfg) only, not on 'trf'"),
        (["lowres_best_trf", "--encoder", "cpu"], "Error: 'lowres_best_trf' is a recipe, built on the trf base (base_trf.cfg) only, not on 'cpu'"),
        (["--all"], "Error: --all writes one file per method and encoder and per recipe: give an --output folder"),
        ([], "Error: name one method or recipe, or give --all"),
    ],
)
def test_config_command_errors_are_one_line_and_write_nothing(tmp_path, args, message):
    target = tmp_path / "out.cfg"
    out = CliRunner().invoke(app, ["config", *args, "--output", str(target), "--configs-dir", str(CONFIGS)] if args != ["--all"] else ["config", "--all", "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 1
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(message), out.output
    assert not target.exists() and not list(tmp_path.iterdir())


def test_a_wrong_key_in_a_method_file_is_named_and_nothing_is_written(tmp_path):
    configs = _configs_dir_with(tmp_path, "typo", "[components]\n\n[components.auc_ner]\nschme = \"softmax\"\n")
    target = tmp_path / "out" / "typo.cfg"
    out = CliRunner().invoke(app, ["config", "typo", "--output", str(target), "--configs-dir", str(configs)])
    assert out.exit_code == 1
    (line,) = [line for line in out.output.splitlines() if line.strip()]
    assert str(configs / "methods" / "typo.cfg") in line and "schme" in line
    assert not target.exists()
    broken = _configs_dir_with(tmp_path / "b", "broken", "[components.auc_ner]\nscheme = \"softmax\"\n")
    with pytest.raises(MethodError, match=r"broken.cfg:1: \[components.auc_ner\] Section 'components' is not defined"):
        method_config("broken", "cpu", broken)
    malformed = _configs_dir_with(tmp_path / "m", "malformed", "[components]\nscheme softmax\n")
    with pytest.raises(MethodError, match=r"malformed.cfg:2: cannot parse 'scheme softmax' \(a setting is key = value\)$"):
        method_config("malformed", "cpu", malformed)


FOCAL = (CONFIGS / "methods" / "focal.cfg").read_text()


@pytest.mark.parametrize("added,line,message", [
    # configparser's own exceptions, which confection lets through as a traceback
    ("[components.auc_ner]\nthreshold = 0.3\n", 9, "section [components.auc_ner] appears twice"),
    ("[training]\nmax_steps = 1\nmax_steps = 2\n", 11, "max_steps is set twice in [training]"),
    # confection's, which it words without the line
    ("[training]\n\n[training.optimizer.learn_rate]\ninitial_rate = 0.1\n", 11, "[training.optimizer.learn_rate] Section 'optimizer' is not defined"),
])
def test_a_file_the_parser_refuses_is_named_with_its_line(tmp_path, added, line, message):
    configs = _configs_dir_with(tmp_path, "focal", FOCAL + added)
    target = tmp_path / "out.cfg"
    out = CliRunner().invoke(app, ["config", "focal", "--output", str(target), "--configs-dir", str(configs)])
    assert out.exit_code == 1
    assert out.stderr.strip() == f"Error: {configs / 'methods' / 'focal.cfg'}:{line}: {message}"
    assert not target.exists()
    # a file that is no config at all (a corpus given by mistake)
    (configs / "methods" / "corpus.cfg").write_text("Identification\tO\nof\tO\n")
    with pytest.raises(MethodError, match=r"corpus.cfg:1: not a config file \(no section header\)$"):
        method_config("corpus", "cpu", configs)


@pytest.mark.parametrize("added,message", [
    ("[training]\nmax_stepz = 5\n", "[training.max_stepz] names nothing in the base (base_cpu.cfg) and is not a setting of [training] (did you mean max_steps?)"),
    ("[trainin]\nmax_steps = 5\n", "[trainin] names nothing in the base (base_cpu.cfg) and is not a section that spaCy or spacy-auc-ner reads (did you mean training?)"),
    ("[initialize]\nvocab_dat = null\n", "[initialize.vocab_dat] names nothing in the base (base_cpu.cfg) and is not a setting of [initialize] (did you mean vocab_data?)"),
    ("[pretraining]\nmax_epoch = 2\n", "[pretraining.max_epoch] names nothing in the base (base_cpu.cfg) and is not a setting of [pretraining] (did you mean max_epochs?)"),
    ("[self_training]\nrunds = 1\n", "[self_training.runds] names nothing in the base (base_cpu.cfg) and is not a setting of [self_training] (did you mean rounds?)"),
])
def test_a_key_that_nothing_reads_is_refused_outside_the_components_too(tmp_path, added, message):
    """spaCy takes these without a word and trains as if they were not there."""
    configs = _configs_dir_with(tmp_path, "focal", FOCAL + "\n" + added)
    target = tmp_path / "out.cfg"
    out = CliRunner().invoke(app, ["config", "focal", "--output", str(target), "--configs-dir", str(configs)])
    assert out.exit_code == 1 and out.stderr.strip() == f"Error: {configs / 'methods' / 'focal.cfg'}: {message}"
    assert not target.exists()


def test_what_a_method_file_may_add_to_its_base(tmp_path):
    """New blocks that spaCy or the package read, variables, and a registered function's
    arguments (spaCy checks those against its signature, named by their full key)."""
    added = (
        "[paths]\nraw_text = null\n\n[corpora]\n\n[corpora.pool]\n@readers = \"spacy_auc_ner.RawText.v1\"\npath = ${paths.raw_text}\n\n"
        "[training]\nmax_steps = 10\n\n[training.optimizer]\n@optimizers = \"SGD.v1\"\nlearn_rate = 0.1\n\n"
        "[pretraining]\nmax_epochs = 1\n\n[pretraining.objective]\n@architectures = \"spacy.PretrainCharacters.v1\"\n"
        "maxout_pieces = 3\nhidden_size = 30\nn_characters = 2\n\n[self_training]\nrounds = 1\n\n[budget]\nepochs = 3\n"
    )
    configs = _configs_dir_with(tmp_path, "focal", FOCAL + "\n" + added)
    out = CliRunner().invoke(app, ["config", "focal", "--output", str(tmp_path / "out.cfg"), "--configs-dir", str(configs)])
    assert out.exit_code == 0, out.output
    config = load_config(tmp_path / "out.cfg", interpolate=False)
    assert config["training"]["optimizer"] == {"@optimizers": "SGD.v1", "learn_rate": 0.1}
    assert config["self_training"] == {"rounds": 1} and config["corpora"]["pool"]["path"] == "${paths.raw_text}"


@pytest.mark.parametrize("edit,key", [
    (("@losses = \"spacy_auc_ner.Focal.v1\"\n", "@losses = \"spacy_auc_ner.Focal.v1\"\ngama = 3.0\n"), "[components.auc_ner.loss.gama] unexpected argument: 'gama'"),
    (("scheme = \"softmax\"\n", "scheme = \"softmax\"\nthreshhold = 0.3\n"), "[components.auc_ner.threshhold] unexpected argument: 'threshhold'"),
    (("[components]\n", "[training]\n\n[training.optimizer]\nbta1 = 0.9\n\n[components]\n"), "[training.optimizer.bta1] unexpected argument: 'bta1'"),
    # a block nested deeper in [training], and one inside the component's model
    (("[components]\n", "[training]\n\n[training.batcher]\ntolerence = 0.2\n\n[components]\n"), "[training.batcher.tolerence] unexpected argument: 'tolerence'"),
    (("scheme = \"softmax\"\n", "scheme = \"softmax\"\n\n[components.auc_ner.model]\nhiden_width = 8\n"), "[components.auc_ner.model.hiden_width] unexpected argument: 'hiden_width'"),
])
def test_a_wrong_setting_is_named_by_its_full_key(tmp_path, edit, key):
    """spaCy locates a setting from the component's factory or the registered function's
    block (auc_ner.loss.gama, optimizer.bta1): the error names the key of the file."""
    configs = _configs_dir_with(tmp_path, "focal", FOCAL.replace(*edit))
    out = CliRunner().invoke(app, ["config", "focal", "--configs-dir", str(configs)])
    assert out.exit_code == 1 and out.stderr.strip().endswith(f"focal.cfg on {configs / 'base_cpu.cfg'}: {key}"), out.stderr


def test_all_writes_nothing_when_one_method_fails(tmp_path):
    configs = _configs_dir_with(tmp_path, "typo", "[components]\n\n[components.auc_ner]\nscheme = \"nope\"\n")
    (configs / "methods" / "ce.cfg").write_text((CONFIGS / "methods" / "ce.cfg").read_text())
    out = CliRunner().invoke(app, ["config", "--all", "--output", str(tmp_path / "full"), "--configs-dir", str(configs)])
    assert out.exit_code == 1 and "typo.cfg" in out.output
    assert not (tmp_path / "full").exists()


def test_a_pipeline_without_its_block_is_refused(tmp_path):
    configs = _configs_dir_with(tmp_path, "lost", "[nlp]\npipeline = [\"tagger\"]\n")
    with pytest.raises(MethodError, match="pipeline names 'tagger' but neither the method nor base_cpu.cfg has"):
        assemble(configs / "base_cpu.cfg", configs / "methods" / "lost.cfg")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ova_auc", "spacy_ner"])
def test_spacy_train_runs_a_written_config(tmp_path, toy_corpus, name):
    """What README tells a user: write the config, then `spacy train` it."""
    from spacy.cli.train import train

    out = CliRunner().invoke(app, ["config", name, "--output", str(tmp_path / f"{name}.cfg"), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    overrides = {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
                 "training.max_steps": 4, "training.eval_frequency": 2}
    train(tmp_path / f"{name}.cfg", tmp_path / "model", overrides=overrides)
    nlp = spacy.load(tmp_path / "model" / "model-last")
    assert nlp.pipe_names == [name == "spacy_ner" and "ner" or "auc_ner"]


@pytest.mark.slow
@pytest.mark.parametrize("name,pipes", [("lowres_best", ["auc_ner"]), ("lowres_spacy_ner", ["tok2vec", "ner"]), ("lowres_crf_auc", ["auc_ner"])])
def test_spacy_train_and_pretrain_run_the_recipe(tmp_path, toy_corpus, name, pipes):
    """The recipe lowres_best (and the spaCy-ner and CRF + AUC variants), written out by
    `spacy-auc-ner config`, trains alone (its Augmented.v1 reader around the training file;
    [self_training] and [corpora.pool] ignored), and spacy pretrain, on the filled config and
    with the training file as raw text, writes
    weights that it trains from through --paths.init_tok2vec (a layer mismatch would fail at
    initialize)."""
    from spacy.cli.init_config import fill_config
    from spacy.cli.train import train
    from spacy.training.pretrain import pretrain
    from spacy.util import load_config

    recipe = tmp_path / f"{name}.cfg"
    out = CliRunner().invoke(app, ["config", name, "--output", str(recipe), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    base = {"paths.train": str(toy_corpus / "train.spacy"), "paths.dev": str(toy_corpus / "dev.spacy"),
            "training.max_steps": 4, "training.eval_frequency": 2}
    train(recipe, tmp_path / "model", overrides=base)
    nlp = spacy.load(tmp_path / "model" / "model-last")
    assert nlp.pipe_names == pipes
    # spacy pretrain, given the training file as its raw text
    fill_config(tmp_path / "filled.cfg", recipe)
    config = load_config(tmp_path / "filled.cfg", overrides={"paths.raw_text": str(toy_corpus / "train.spacy"), "pretraining.max_epochs": 1}, interpolate=False)
    assert config["corpora"]["pretrain"]["@readers"] == "spacy_auc_ner.RawText.v1"
    (tmp_path / "pretrain").mkdir()
    pretrain(config.interpolate(), tmp_path / "pretrain", silent=True)
    weights = tmp_path / "pretrain" / "model-last.bin"
    assert weights.exists()
    train(recipe, tmp_path / "pretrained", overrides={**base, "paths.init_tok2vec": str(weights)})
    assert (tmp_path / "pretrained" / "model-best").exists()


def test_the_configs_ship_with_the_package():
    """Every base, method, recipe, the recipes' shared partial and every pretraining objective
    is package data (a pip install without the checkout has them: the default of every
    --configs-dir and of `recipe --config`),
    and configs/ in the checkout is the same folder."""
    import fnmatch

    import tomllib

    from spacy_auc_ner.methods import DEFAULT_CONFIGS_DIR

    package = ROOT / "spacy_auc_ner"
    assert DEFAULT_CONFIGS_DIR == package / "configs" and CONFIGS.resolve() == DEFAULT_CONFIGS_DIR
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["spacy_auc_ner"]
    shipped = {p.relative_to(package).as_posix() for p in DEFAULT_CONFIGS_DIR.rglob("*.cfg")
               if "full" not in p.relative_to(DEFAULT_CONFIGS_DIR).parts}  # configs/full/: spacy project's output
    assert {"configs/recipes/lowres_best.cfg", "configs/lowres_extras.cfg", "configs/base_cpu.cfg", "configs/methods/ce.cfg",
            "configs/pretrain/characters.cfg"} <= shipped
    unmatched = sorted(f for f in shipped if not any(fnmatch.fnmatch(f, p) and f.count("/") == p.count("/") for p in patterns))
    assert not unmatched, f"configs not in pyproject's package-data: {unmatched}"
    assert method_names() == METHODS  # the default folder is the checkout's


def _without_transformers(monkeypatch):
    """spacy-transformers reported missing, as in a plain install (`pip install .`)."""
    import spacy_auc_ner.extras as extras

    monkeypatch.setattr(extras, "installed", lambda extra: extra != "transformers")


def test_all_without_the_transformers_extra_writes_the_cpu_configs_and_names_the_rest(tmp_path, monkeypatch):
    _without_transformers(monkeypatch)
    out = CliRunner().invoke(app, ["config", "--all", "--output", str(tmp_path / "all"), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == sorted([f"{m}.cfg" for m in METHODS] + [f"{r}.cfg" for r in RECIPES])
    lines = out.stderr.splitlines()
    assert lines[0] == f"Wrote {len(METHODS) + len(RECIPES)} config(s) to {tmp_path / 'all'}"
    assert len(lines) == 2 and lines[1].startswith(f"Skipped {len(METHODS) + len(TRF_RECIPES)} config(s) that need the 'transformers' extra, which is not installed (")
    assert lines[1].endswith("_trf.cfg, ...): pip install 'spacy-auc-ner[transformers]'")


def test_one_transformer_config_without_the_extra_is_a_one_line_error(tmp_path, monkeypatch):
    _without_transformers(monkeypatch)
    target = tmp_path / "ova_auc_trf.cfg"
    out = CliRunner().invoke(app, ["config", "ova_auc", "--encoder", "trf", "--output", str(target), "--configs-dir", str(CONFIGS)])
    assert out.exit_code == 1 and not target.exists()
    (line,) = [line for line in out.output.splitlines() if line.strip()]
    assert line.startswith(f"Error: {CONFIGS / 'methods' / 'ova_auc.cfg'} on {CONFIGS / 'base_trf.cfg'} names functions of the 'transformers' extra")
    assert line.endswith("pip install 'spacy-auc-ner[transformers]'")


def test_any_command_failing_on_a_function_of_a_missing_extra_names_the_extra(monkeypatch):
    """spaCy's own error for a config naming spacy-transformers' functions without it (what
    `spacy-auc-ner recipe` or `self-train` with a *_trf config met) gets the pip command."""
    from spacy_auc_ner.cli.errors import one_line_errors

    def command():
        raise ValueError("[E892] Unknown function registry: 'span_getters'.\n\nAvailable names: architectures")

    runner = typer_app_of(one_line_errors(command))
    assert "pip install" not in CliRunner().invoke(runner, []).output  # installed: spaCy's message alone
    _without_transformers(monkeypatch)
    out = CliRunner().invoke(runner, [])
    assert out.exit_code == 1
    assert out.output.strip() == ("Error: [E892] Unknown function registry: 'span_getters'. Available names: architectures "
                                  "(a function of the 'transformers' extra, which is not installed: pip install 'spacy-auc-ner[transformers]')")


def typer_app_of(command):
    import typer

    one = typer.Typer()
    one.command()(command)
    return one


def test_a_header_without_its_bracket_and_a_missing_configs_folder(tmp_path):
    configs = _configs_dir_with(tmp_path, "broken", "[components.auc_ner\nscheme = \"ova\"\n")
    out = CliRunner().invoke(app, ["config", "broken", "--configs-dir", str(configs)])
    assert out.exit_code == 1 and out.stderr.strip().endswith("broken.cfg:1: cannot parse '[components.auc_ner' (a section header is [name])")
    out = CliRunner().invoke(app, ["config", "ce", "--configs-dir", str(tmp_path / "nope")])
    assert out.exit_code == 1 and out.stderr.strip() == f"Error: {tmp_path / 'nope'}: no such configs folder (it holds base_cpu.cfg and methods/)"


def _with_parent_sections(block: str) -> str:
    """A config excerpt of the docs as a whole config: the parent sections it leaves out
    ([components] before [components.auc_ner]) added, the '...' that elides lines dropped."""
    import re

    lines, seen = [], set()
    for line in block.splitlines():
        if line.strip() == "...":
            continue
        header = re.fullmatch(r"\[([^\]]+)\]", line.strip())
        if header:
            parts = header.group(1).split(".")
            for i in range(1, len(parts)):
                parent = ".".join(parts[:i])
                if parent not in seen:
                    lines.append(f"[{parent}]")
                    seen.add(parent)
            seen.add(header.group(1))
        lines.append(line)
    return "\n".join(lines)


@pytest.mark.parametrize("doc", ["README.md", "docs/guide.md", "docs/reference.md", "docs/recipes.md"])
def test_every_config_excerpt_of_the_docs_parses_without_a_comment_inside_a_value(doc):
    """spaCy's config parser keeps a '# comment' after a value as part of the value: an excerpt a
    user copies with one fails to train (a registry name with the comment in it)."""
    import re

    from thinc.api import Config

    blocks = re.findall(r"```ini\n(.*?)```", (ROOT / doc).read_text(encoding="utf8"), flags=re.S)
    assert blocks
    for block in blocks:
        config = Config().from_str(_with_parent_sections(block), interpolate=False)
        stack = [("", config)]
        while stack:
            where, section = stack.pop()
            for key, value in section.items():
                if isinstance(value, dict):
                    stack.append((f"{where}.{key}", value))
                else:
                    assert not (isinstance(value, str) and "#" in value), f"{doc}: [{where[1:]}] {key} = {value!r}"
