import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from spacy_auc_ner.pipeline.component import AUCNER
from toy_data import TOY, fit_toy, make_examples

PIPE_CONFIGS = [
    {"scheme": "ova"},
    {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.AUCMargin.v1", "mode": "batch"}},
    {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.AUCMargin.v1", "alpha_update": "pesg"}},
    {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}},
    {"scheme": "ova", "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}},
    {"scheme": "ova", "strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 2}},
    {"scheme": "softmax"},
    {"scheme": "two_task"},
    {"scheme": "crf"},
]


def ents(doc):
    return [(e.start, e.end, e.label_) for e in doc.ents]


@pytest.mark.parametrize("config", PIPE_CONFIGS)
def test_every_scheme_learns_the_toy_corpus(config):
    nlp, examples, losses = fit_toy(config)
    assert numpy.isfinite(losses[-1])
    scores = nlp.evaluate(examples)
    assert scores["ents_f"] > 0.9, scores
    # the memorised sentences come back with their entities
    n_exact = sum(ents(nlp(eg.reference.text)) == ents(eg.reference) for eg in examples)
    assert n_exact >= len(examples) - 1
    assert scores["ents_seqeval_micro_f"] == pytest.approx(scores["ents_f"])
    doc = nlp("John Smith lives in Berlin")
    group = doc.spans["auc_ner"]
    assert [(e.start, e.end, e.label_) for e in group] == [(e.start, e.end, e.label_) for e in doc.ents]
    assert group.attrs["scores"].shape == (len(group),)
    assert ((group.attrs["scores"] > 0) & (group.attrs["scores"] <= 1)).all()


def test_two_task_names_types_on_multi_type_corpus():
    nlp, _, _ = fit_toy({"scheme": "two_task"}, n_iter=60)
    assert nlp.get_pipe("auc_ner").columns == ["ENTITY", "BEGIN", "TYPE-Disease", "TYPE-LOC", "TYPE-PER"]
    doc = nlp("Mary met Anna in Rome .")
    assert {(e.text, e.label_) for e in doc.ents} == {("Mary", "PER"), ("Anna", "PER"), ("Rome", "LOC")}


def test_labels_and_columns(toy_examples):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("auc_ner")
    nlp.initialize(lambda: toy_examples)
    assert ner.labels == ("Disease", "LOC", "PER")
    assert ner.columns == ["O", "B-Disease", "I-Disease", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert ner.model.get_ref("output").get_dim("nO") == 7
    assert sum(ner.cfg["class_counts"]) == sum(len(w) for w, _ in TOY)
    with pytest.raises(ValueError, match="after the model is initialised"):
        ner.add_label("ORG")


def test_initialize_with_labels_from_init_labels(toy_examples):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("auc_ner")
    nlp.initialize(lambda: toy_examples)
    labels = ner.label_data
    nlp2 = spacy.blank("en")
    ner2 = nlp2.add_pipe("auc_ner")
    ner2.initialize(lambda: toy_examples, labels=labels + ["ORG"])
    assert ner2.labels == ("Disease", "LOC", "ORG", "PER")


@pytest.mark.parametrize("scheme", ["ova", "two_task", "softmax", "crf"])
def test_no_entities_at_all_trains_with_a_warning_and_predicts_nothing(scheme):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("auc_ner", config={"scheme": scheme})
    data = [(w, ["O"] * len(w)) for w, _ in TOY]
    examples = make_examples(nlp, data)
    with pytest.warns(UserWarning, match=r"no entity labels.*\[initialize.components.auc_ner\] labels"):
        optimizer = nlp.initialize(lambda: examples)
    assert ner.labels == () and ner.label_data == []
    for _ in range(3):
        assert numpy.isfinite(nlp.update(examples, sgd=optimizer)["auc_ner"])
    docs = list(nlp.pipe(["Mary met Anna in Rome .", ""]))
    assert [d.ents for d in docs] == [(), ()]
    assert len(docs[0].spans["auc_ner"]) == 0


def test_labels_of_the_initialize_block_win_over_the_data(toy_examples, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner")
    nlp.initialize(lambda: toy_examples)
    path = tmp_path / "auc_ner.json"
    srsly.write_json(path, nlp.get_pipe("auc_ner").label_data)  # what `spacy init labels` writes
    config = nlp.config.copy()
    config["initialize"]["components"]["auc_ner"] = {"labels": {"@readers": "spacy.read_labels.v1", "path": str(path)}}
    nlp2 = spacy.util.load_model_from_config(config, auto_fill=True)
    no_entities = make_examples(nlp2, [(w, ["O"] * len(w)) for w, _ in TOY])
    nlp2.initialize(lambda: no_entities)
    assert nlp2.get_pipe("auc_ner").labels == ("Disease", "LOC", "PER")


def test_labels_that_are_not_a_list_of_types_name_the_initialize_key(toy_examples):
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("auc_ner")
    with pytest.raises(ValueError, match=r"^\[initialize.components.auc_ner.labels\] must be a list of entity types"):
        ner.initialize(lambda: toy_examples, labels={"moves": ["B-PER"]})


@pytest.mark.parametrize("label", ["", "  "])
def test_an_empty_entity_label_is_refused(toy_examples, label):
    ner = spacy.blank("en").add_pipe("auc_ner")
    with pytest.raises(ValueError, match=r"^\[auc_ner\] labels must be non-empty strings"):
        ner.initialize(lambda: toy_examples, labels=["DISEASE", label])


@pytest.mark.parametrize("config", PIPE_CONFIGS)
def test_batches_without_entities_or_with_empty_docs_never_give_nan(config):
    nlp, _, _ = fit_toy(config, n_iter=2)
    ner = nlp.get_pipe("auc_ner")
    words = ["no", "entity", "here"]
    batches = [
        [Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["O"] * 3))],
        [Example(Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[]))],
        [Example(Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[])), Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-ORG", "O", "O"]))],
        [Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=[None, None, None]))],
    ]
    optimizer = nlp.create_optimizer()
    for batch in batches:
        losses = nlp.update(batch, sgd=optimizer, losses={})
        assert numpy.isfinite(losses["auc_ner"])
        for name in ner.model.get_ref("output").param_names:
            assert numpy.isfinite(ner.model.get_ref("output").get_param(name)).all()
    docs = list(nlp.pipe(["", "a b", ""]))
    assert [len(d.ents) for d in docs][0] == 0


def test_missing_gold_gets_no_gradient(nlp):
    nlp, examples, _ = fit_toy({"scheme": "ova"}, n_iter=1)
    ner = nlp.get_pipe("auc_ner")
    words = "John lives in Rome".split()
    full = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-PER", "O", "O", "B-LOC"]))
    part = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words, ents=["B-PER", None, None, "B-LOC"]))
    scores = ner.model.predict([full.predicted])
    _, d_full = ner.get_loss([full], scores)
    _, d_part = ner.get_loss([part], scores)
    assert numpy.abs(d_part[0][1:3]).sum() == 0
    assert numpy.abs(d_full[0][1:3]).sum() > 0


def test_alpha_stays_non_negative_and_dam_params_train():
    nlp, _, _ = fit_toy({"scheme": "ova"}, n_iter=30)
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    alpha = head.get_param("dam_alpha")
    assert (alpha >= 0).all() and alpha.max() > 0
    assert not numpy.allclose(head.get_param("dam_a"), 1.0)


def test_grouped_makes_one_optimizer_step_per_prefix_group():
    nlp, examples, _ = fit_toy({"scheme": "ova", "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}}, n_iter=1)
    ner = nlp.get_pipe("auc_ner")
    calls = []

    class Counting:
        def __init__(self, opt):
            self.opt = opt

        def __call__(self, *args, **kwargs):
            calls.append(args[0])
            return self.opt(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.opt, name)

    optimizer = Counting(nlp.create_optimizer())
    ner.finish_update(optimizer)  # the training loop's first finish_update hands it over
    calls.clear()
    ner.update(examples, sgd=None)  # like Language.update: no optimizer passed
    W_key = (ner.model.get_ref("output").id, "W")
    assert calls.count(W_key) == 2  # B and I groups inside update; O by the loop's finish_update
    ner.finish_update(optimizer)
    assert calls.count(W_key) == 3


@pytest.mark.parametrize("config", [PIPE_CONFIGS[0], PIPE_CONFIGS[6], PIPE_CONFIGS[7], PIPE_CONFIGS[8]])
def test_serialization_round_trip(tmp_path, config):
    nlp, _, _ = fit_toy(config, n_iter=15)
    texts = ["Aspirin treats breast cancer in Paris .", "Mary met Anna in Rome ."]
    before = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)]
    scores_before = [d.spans["auc_ner"].attrs["scores"] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    nlp2 = spacy.load(tmp_path / "pipe")
    ner2 = nlp2.get_pipe("auc_ner")
    assert isinstance(ner2, AUCNER) and ner2.labels == nlp.get_pipe("auc_ner").labels
    after = [[(e.start, e.end, e.label_) for e in d.ents] for d in nlp2.pipe(texts)]
    assert before == after
    for a, b in zip(scores_before, [d.spans["auc_ner"].attrs["scores"] for d in nlp2.pipe(texts)]):
        assert numpy.allclose(a, b)
    h1, h2 = nlp.get_pipe("auc_ner").model.get_ref("output"), ner2.model.get_ref("output")
    assert h1.param_names == h2.param_names
    for name in h1.param_names:
        assert numpy.array_equal(h1.get_param(name), h2.get_param(name))
    assert nlp2.config["components"]["auc_ner"] == nlp.config["components"]["auc_ner"]
    assert ner2.cfg["n_updates"] == nlp.get_pipe("auc_ner").cfg["n_updates"] == 15
    b = nlp.get_pipe("auc_ner").to_bytes()
    ner3 = spacy.blank("en").add_pipe("auc_ner", config=config).from_bytes(b)
    assert ner3.labels == ner2.labels


AUC = "spacy_auc_ner.AUCMargin.v1"
TWO_TASK = "spacy_auc_ner.TwoTask.v1"
BAD_SETTINGS = [
    ({"scheme": "crf2"}, "scheme", "unknown scheme 'crf2'"),
    ({"decoder": "beam"}, "decoder", "unknown decoder 'beam'"),
    ({"spans_key": ""}, "spans_key", "must be a non-empty string"),
    ({"scheme": "softmax", "loss": {"@losses": AUC}}, "loss", "AUCMargin.v1 cannot train scheme 'softmax'"),
    ({"loss": {"@losses": AUC, "margin": 0.0}}, "loss.margin", "must be > 0 and finite, not 0.0"),
    ({"loss": {"@losses": AUC, "mode": "online"}}, "loss.mode", "must be 'learned' or 'batch'"),
    ({"loss": {"@losses": AUC, "alpha_update": "sgd"}}, "loss.alpha_update", "must be 'ascent' or 'pesg'"),
    ({"loss": {"@losses": AUC, "alpha_lr": -0.1}}, "loss.alpha_lr", "must be > 0"),
    ({"loss": {"@losses": "spacy_auc_ner.Compositional.v1", "k": 0}}, "loss.k", "must be >= 1, not 0"),
    ({"loss": {"@losses": "spacy_auc_ner.Compositional.v1", "auc": {"@losses": AUC, "margin": -1.0}}}, "loss.auc.margin", "must be > 0"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.MoM.v1", "lam": 1.5}}, "loss.lam", "must be in [0, 1], not 1.5"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.MoM.v1", "loss": {"@losses": "spacy_auc_ner.Focal.v1", "gamma": -1.0}}}, "loss.loss.gamma", "must be >= 0"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1", "rate": 0.0}}, "loss.rate", "must be in (0, 1]"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1", "temperature": 0.0}}, "loss.temperature", "must be > 0"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "level": "span"}}, "loss.level", "must be 'token' or 'batch'"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.WeightedCE.v1", "beta": 0.5}}, "loss.beta", "must be >= 1"),
    ({"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.MoM.v1"}}, "loss.loss", "SoftmaxCE.v1 cannot train scheme 'ova'"),
    ({"scheme": "two_task", "strategy": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}}, "strategy", "'grouped' (it picks OVA classifiers) cannot train scheme 'two_task'"),
    ({"strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": 0}}, "strategy.m", "must be a whole number >= 1, not 0"),
    # `x = inf` (unquoted) or a quoted number in a config file reaches the blocks as the string
    # (confection checks that it reads as the type, and passes it on as written): an infinite
    # setting diverged with "lower the learn rate", a string one raised a TypeError
    ({"loss": {"@losses": AUC, "margin": "inf"}}, "loss.margin", "must be > 0 and finite, not inf"),
    ({"loss": {"@losses": AUC, "alpha_update": "pesg", "alpha_lr": "inf"}}, "loss.alpha_lr", "must be > 0 and finite, not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Focal.v1", "gamma": "inf"}}, "loss.gamma", "must be >= 0 and finite, not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "alpha": "inf"}}, "loss.alpha", "must be >= 0 and finite, not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.Dice.v1", "delta": "inf"}}, "loss.delta", "must be > 0 and finite"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.WeightedCE.v1", "beta": "inf"}}, "loss.beta", "and finite, not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1", "mu": "inf"}}, "loss.mu", "must be >= 0 and finite, not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1", "temperature": "inf"}}, "loss.temperature", "must be > 0 and finite (or null), not inf"),
    ({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.NegativeSampling.v1", "seed": -1}}, "loss.seed", "must be a whole number >= 0, not -1"),
    ({"entity_bias": "inf"}, "entity_bias", "must be a finite number in [-1000000, 1000000], not 'inf'"),
    # finite but near float32's range: NaN span scores (crf), no entity at all (softmax)
    ({"entity_bias": 1e38}, "entity_bias", "must be a finite number in [-1000000, 1000000], not 1e+38"),
    ({"strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "m": "2"}}, "strategy.m", "must be a whole number >= 1, not '2'"),
    ({"strategy": {"@misc": "spacy_auc_ner.SampledClassifiers.v1", "seed": "2"}}, "strategy.seed", 'must be a whole number >= 0, not "2"'),
    # a block of another registry in the slot (an AttributeError on a missing method)
    ({"loss": {"@misc": "spacy_auc_ner.AllClassifiers.v1"}}, "loss", "must be a loss block (@losses = "),
    ({"strategy": {"@losses": AUC}}, "strategy", "must be a strategy block (@misc = "),
    # a scheme block: its own settings under its key, the pair checked by capabilities
    ({"scheme": {"@misc": TWO_TASK, "lam": -1.0}}, "scheme.lam", "must be a finite number >= 0, not -1.0"),
    ({"scheme": {"@misc": TWO_TASK, "threshold": 1.0}}, "scheme.threshold", "must be a number in (0, 1), not 1.0"),
    ({"scheme": {"@misc": TWO_TASK, "threshold": 0.0}}, "scheme.threshold", "must be a number in (0, 1), not 0.0"),
    ({"scheme": {"@misc": "spacy_auc_ner.GroupedByPrefix.v1"}}, "scheme", "must be a scheme name or a registered scheme block"),
    (
        {"scheme": {"@misc": "spacy_auc_ner.Softmax.v1"}, "loss": {"@losses": AUC}}, "loss",
        "AUCMargin.v1 cannot train scheme 'softmax': it needs sigmoid columns, and [components.ner.scheme] offers bio, o_column, one_class, softmax",
    ),
]


@pytest.mark.parametrize("config, key, message", BAD_SETTINGS, ids=[k for _, k, _ in BAD_SETTINGS])
def test_bad_settings_are_refused_naming_the_full_config_key(config, key, message):
    with pytest.raises(ValueError) as err:
        spacy.blank("en").add_pipe("auc_ner", name="ner", config=config)
    text = str(err.value)
    assert text.startswith(f"[components.ner.{key}] ") and message in text, text
    assert "\n" not in text


def test_hidden_layer_head_trains_and_round_trips(tmp_path):
    model = {
        "@architectures": "spacy_auc_ner.TokenScorer.v2",
        "hidden_width": 32,
        "tok2vec": {
            "@architectures": "spacy.HashEmbedCNN.v2", "width": 48, "depth": 2, "embed_size": 500,
            "window_size": 1, "maxout_pieces": 3, "subword_features": True, "pretrained_vectors": None,
        },
    }
    nlp, examples, _ = fit_toy({"scheme": "ova", "model": model}, n_iter=40)
    assert nlp.evaluate(examples)["ents_f"] > 0.9
    nlp.to_disk(tmp_path / "pipe")
    texts = ["Mary met Anna in Rome ."]
    assert [[(e.start, e.end, e.label_) for e in d.ents] for d in spacy.load(tmp_path / "pipe").pipe(texts)] == [
        [(e.start, e.end, e.label_) for e in d.ents] for d in nlp.pipe(texts)
    ]


@pytest.mark.parametrize("alpha_update", ["ascent", "pesg"])
def test_get_loss_leaves_the_learned_loss_parameters_alone(alpha_update):
    config = {"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.AUCMargin.v1", "alpha_update": alpha_update}}
    nlp, examples, _ = fit_toy(config, n_iter=5)
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    before = {k: head.get_param(k).copy() for k in ("dam_a", "dam_b", "dam_alpha")}
    grads = {k: head.get_grad(k).copy() for k in before if head.has_grad(k)}
    scores = nlp.get_pipe("auc_ner").model.predict([eg.predicted for eg in examples])
    loss, d_scores = nlp.get_pipe("auc_ner").get_loss(examples, scores)
    assert numpy.isfinite(loss) and len(d_scores) == len(examples)
    for k, value in before.items():
        assert numpy.array_equal(head.get_param(k), value)
    for k, grad in grads.items():
        assert numpy.array_equal(head.get_grad(k), grad)


@pytest.mark.parametrize(
    "scheme, loss, decoder",
    [("ova", AUC, "greedy"), ("two_task", AUC, "greedy"), ("softmax", "spacy_auc_ner.SoftmaxCE.v1", "greedy"), ("crf", "spacy_auc_ner.CRFLoss.v1", "viterbi")],
)
def test_the_config_names_the_loss_and_decoder_a_null_setting_resolved_to(tmp_path, scheme, loss, decoder):
    nlp, _, _ = fit_toy({"scheme": scheme}, n_iter=1)
    settings = nlp.config["components"]["auc_ner"]
    assert settings["loss"]["@losses"] == loss and settings["decoder"] == decoder
    if loss == AUC:  # filled with the loss's defaults
        assert settings["loss"]["margin"] == 1.0 and settings["loss"]["mode"] == "learned"
    nlp.to_disk(tmp_path / "pipe")
    saved = spacy.util.load_config(tmp_path / "pipe" / "config.cfg")["components"]["auc_ner"]
    assert saved["loss"]["@losses"] == loss and saved["decoder"] == decoder
    texts = ["Mary met Anna in Rome .", "Colon cancer is rare"]
    assert [ents(d) for d in spacy.load(tmp_path / "pipe").pipe(texts)] == [ents(d) for d in nlp.pipe(texts)]


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"scheme": "ova"}, {"dam_a": (7,), "dam_b": (7,), "dam_alpha": (7,)}),
        ({"scheme": "ova", "loss": {"@losses": AUC, "mode": "batch"}}, {}),
        ({"scheme": "two_task"}, {"dam_a": (2,), "dam_b": (2,), "dam_alpha": (2,)}),
        ({"scheme": "softmax"}, {}),
        ({"scheme": "crf"}, {"crf_trans": (7, 7), "crf_start": (7,), "crf_end": (7,)}),
        ({"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.Compositional.v1"}}, {"dam_a": (7,), "dam_b": (7,), "dam_alpha": (7,)}),
    ],
)
def test_the_head_holds_the_parameters_the_loss_declares(config, expected):
    nlp, _, _ = fit_toy(config, n_iter=0)
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    assert {n: head.get_param(n).shape for n in head.param_names} == {"W": head.get_param("W").shape, "b": head.get_param("b").shape, **expected}
    assert head.get_param("b").shape == (len(nlp.get_pipe("auc_ner").columns),)
    if "dam_a" in expected:
        assert (head.get_param("dam_a") == 1).all() and (head.get_param("dam_b") == 0).all()


def test_a_pipeline_loaded_with_another_loss_is_a_clear_error(tmp_path):
    nlp, _, _ = fit_toy({"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    with pytest.raises(ValueError, match=r"\[components.auc_ner.loss\] spacy_auc_ner.AUCMargin.v1 learns dam_a .* trained with another loss"):
        spacy.load(tmp_path / "pipe", config={"components": {"auc_ner": {"loss": {"@losses": AUC}}}})


def test_a_saved_pipe_with_a_lost_cfg_or_another_scheme_or_a_damaged_model_is_a_clear_error(tmp_path):
    """Loaded with another scheme (ova's weights read as softmax's: the same columns), a pipe
    predicted with them; with its cfg file lost, it loaded with no labels and predicted nothing;
    a truncated model file failed in msgpack's words, naming no file."""
    nlp, _, _ = fit_toy({"scheme": "ova", "loss": {"@losses": "spacy_auc_ner.BinaryCE.v1"}}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    softmax = {"components": {"auc_ner": {"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.SoftmaxCE.v1"}}}}
    with pytest.raises(ValueError, match=r"auc_ner: the pipe was trained with scheme 'ova', but \[components.auc_ner.scheme\] is 'softmax'"):
        spacy.load(tmp_path / "pipe", config=softmax)
    (tmp_path / "pipe" / "auc_ner" / "cfg").unlink()
    with pytest.raises(ValueError, match=r"auc_ner: the saved model has 7 output columns, but the labels of the pipe's cfg \(none\) make 1"):
        spacy.load(tmp_path / "pipe")
    model = tmp_path / "pipe" / "auc_ner" / "model"
    model.write_bytes(model.read_bytes()[:100])
    with pytest.raises(ValueError, match=r"auc_ner: cannot read the saved pipe \(a damaged model or cfg file, or a model config "):
        spacy.load(tmp_path / "pipe")


@pytest.mark.parametrize("counts", [["3", "9"], "many", [1.0, -2.0]])
def test_a_hand_edited_cfg_with_bad_class_counts_names_the_pipe(tmp_path, counts):
    nlp, _, _ = fit_toy({"scheme": "softmax", "loss": {"@losses": "spacy_auc_ner.WeightedCE.v1"}}, n_iter=1)
    nlp.to_disk(tmp_path / "pipe")
    cfg = tmp_path / "pipe" / "auc_ner" / "cfg"
    srsly.write_json(cfg, {**srsly.read_json(cfg), "class_counts": counts})
    with pytest.raises(ValueError, match=r"auc_ner: the class_counts of the pipe's cfg must be a list of counts, not "):
        spacy.load(tmp_path / "pipe")


def test_bilstm_v2_head_holds_the_crf_parameters_and_round_trips(tmp_path):
    model = {
        "@architectures": "spacy_auc_ner.BiLSTMTokenScorer.v2",
        "hidden_width": 8,
        "tok2vec": {
            "@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1, "embed_size": 300,
            "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
        },
    }
    nlp, _, losses = fit_toy({"scheme": "crf", "model": model}, n_iter=3)
    assert numpy.isfinite(losses[-1])
    head = nlp.get_pipe("auc_ner").model.get_ref("output")
    assert set(head.param_names) == {"W", "b", "crf_trans", "crf_start", "crf_end"}
    assert abs(head.get_param("crf_trans")).sum() > 0  # trained from 0
    nlp.to_disk(tmp_path / "pipe")
    texts = ["Mary met Anna in Rome ."]
    assert [ents(d) for d in spacy.load(tmp_path / "pipe").pipe(texts)] == [ents(d) for d in nlp.pipe(texts)]


# -- issue 45 R11: auc_ner discarded the entities set before it (an entity_ruler's) ---------------


def _with_ruler(nlp, patterns):
    ruler = nlp.add_pipe("entity_ruler", before="auc_ner")
    ruler.add_patterns(patterns)
    return nlp


def _ents(doc):
    return [(e.start, e.end, e.label_) for e in doc.ents]


def test_entities_set_before_the_pipe_are_kept_as_spacys_ner_keeps_them(tmp_path):
    """Preset entities win; a prediction that overlaps one is dropped, the others are set; with
    overwrite_ents the predictions win, as before. Both survive to_disk/from_disk."""
    nlp, _, _ = fit_toy({"scheme": "ova"}, n_iter=40)
    words = "John Smith lives in Berlin".split()
    predicted = _ents(nlp(" ".join(words)))
    assert len(predicted) >= 2, predicted  # the toy fit finds John Smith and Berlin
    (first_start, _, _), *rest = predicted
    _with_ruler(nlp, [{"label": "RULED", "pattern": words[first_start]}])  # the first token of the first prediction
    doc = nlp(" ".join(words))
    assert _ents(doc) == [(first_start, first_start + 1, "RULED"), *rest]
    assert [(s.start, s.end, s.label_) for s in doc.spans["auc_ner"]] == rest  # the pipe's own entities, scored
    assert len(doc.spans["auc_ner"].attrs["scores"]) == len(rest)
    assert doc[first_start + 1].ent_iob_ in ("O", "B")  # the dropped prediction leaves no I of its own
    # annotating the same doc again (calibration does, once per bias) replaces the pipe's own
    # entities of the earlier pass and keeps the ruler's
    pipe = nlp.get_pipe("auc_ner")
    pipe.set_annotations([doc], pipe.predict([doc]), entity_bias=-1e4)
    assert _ents(doc) == [(first_start, first_start + 1, "RULED")] and not list(doc.spans["auc_ner"])
    pipe.set_annotations([doc], pipe.predict([doc]))
    assert _ents(doc) == [(first_start, first_start + 1, "RULED"), *rest]
    nlp.to_disk(tmp_path / "keep")
    assert _ents(spacy.load(tmp_path / "keep")(" ".join(words))) == _ents(doc)
    # overwrite_ents: the pipe's predictions replace what was there
    overwriting = spacy.load(tmp_path / "keep", config={"components": {"auc_ner": {"overwrite_ents": True}}})
    assert _ents(overwriting(" ".join(words))) == predicted
    overwriting.to_disk(tmp_path / "overwrite")
    assert _ents(spacy.load(tmp_path / "overwrite")(" ".join(words))) == predicted


def test_a_pipeline_saved_without_the_setting_loads_and_keeps_preset_entities(tmp_path):
    """Pipelines saved before overwrite_ents existed (no line in their config) load with the
    factory's default."""
    nlp, _, _ = fit_toy({"scheme": "ova"}, n_iter=40)
    _with_ruler(nlp, [{"label": "RULED", "pattern": "Berlin"}])
    nlp.to_disk(tmp_path / "pipe")
    config = (tmp_path / "pipe" / "config.cfg").read_text()
    assert "overwrite_ents = false" in config
    (tmp_path / "pipe" / "config.cfg").write_text(config.replace("overwrite_ents = false\n", ""))
    doc = spacy.load(tmp_path / "pipe")("John Smith lives in Berlin")
    assert (4, 5, "RULED") in _ents(doc)


def test_overwrite_ents_must_be_true_or_false():
    from spacy_auc_ner.pipeline.component import AUCNER, DEFAULT_MODEL

    with pytest.raises(ValueError, match=r"auc_ner -> overwrite_ents"):  # spaCy checks the config's type
        spacy.blank("en").add_pipe("auc_ner", config={"overwrite_ents": "yes"})
    model = spacy.util.registry.resolve({"model": DEFAULT_MODEL})["model"]
    with pytest.raises(ValueError, match=r"^\[components.auc_ner.overwrite_ents\] must be true or false, not 'yes'$"):
        AUCNER(spacy.blank("en").vocab, model, overwrite_ents="yes")  # the class checks it when made from Python


@pytest.mark.parametrize("scheme", ["ova", "crf", "two_task", "softmax"])
def test_no_entity_starts_on_whitespace_or_crosses_a_sentence_an_earlier_pipe_set(scheme):
    # as spaCy's ner: every token would be an entity under this bias, yet none may start on
    # whitespace, and none may run over the sentencizer's boundary
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    pipe = nlp.add_pipe("auc_ner", config={"scheme": scheme})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    pipe.cfg["entity_bias"] = 1e4
    doc = nlp("He had breast  cancer. Ovarian\n\ncancer is rare.  ")
    assert doc.ents and any(t.is_space for t in doc)
    for ent in doc.ents:
        assert not ent[0].is_space and not any(t.is_sent_start for t in ent[1:])
    assert [e.text for e in doc.spans["auc_ner"]] == [e.text for e in doc.ents]
    assert all(not e.text.isspace() for e in nlp(" \n ").ents)


def test_two_pipes_with_one_spans_key_are_refused_and_their_own_keys_keep_both():
    nlp = spacy.blank("en")
    first = nlp.add_pipe("auc_ner", name="ner_a")
    nlp.add_pipe("auc_ner", name="ner_b")
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    first.cfg["entity_bias"] = 1e4  # ner_a labels every word
    with pytest.raises(ValueError, match=r"^\[components.ner_b.spans_key\] is 'auc_ner', where pipe 'ner_a' keeps its entities"):
        nlp("Germline mutations of BRCA1.")
    nlp.get_pipe("ner_b").cfg["spans_key"] = "b"
    doc = nlp("Germline mutations of BRCA1.")
    assert len(doc.spans["auc_ner"]) and [e.text for e in doc.ents] == [e.text for e in doc.spans["auc_ner"]]  # ner_b kept ner_a's
    assert doc.spans["auc_ner"].attrs["pipe"] == "ner_a" and doc.spans["b"].attrs["pipe"] == "ner_b"
    assert nlp(doc).ents == doc.ents  # a pipe's own earlier pass is replaced, not refused


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_scores_that_diverged_are_refused_in_one_line(bad):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("auc_ner")
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    scores = pipe.predict([eg.predicted for eg in examples])
    scores[0][0, 0] = bad  # one score alone: an inf sums to inf, not NaN
    with pytest.raises(ValueError, match=r"^\[auc_ner\] NaN or inf in the model's scores \(it diverged\); lower \[training.optimizer.learn_rate\]$"):
        pipe.get_loss(examples, scores)


def test_a_type_the_pipe_has_no_columns_for_is_warned_of_once():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("auc_ner")
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    doc = nlp.make_doc("Alice met Bob")
    new = Example.from_dict(doc, {"entities": ["U-NEWTYPE", "O", "U-PER"]})  # BILUO tags
    assert "PER" in pipe.labels and [e.label_ for e in new.reference.ents] == ["NEWTYPE", "PER"]
    with pytest.warns(UserWarning, match=r"^\[auc_ner\] the training data has entity types the pipe was not initialised with \(NEWTYPE; it knows "):
        nlp.update([new, *examples])
    import warnings as _warnings

    with _warnings.catch_warnings():
        _warnings.simplefilter("error")
        nlp.update([new])  # once per type
        nlp.update(examples)  # known types: no warning


def test_an_empty_training_corpus_says_what_spacy_corpus_reads():
    nlp = spacy.blank("en")
    nlp.add_pipe("auc_ner")
    with pytest.raises(ValueError, match=r"^\[auc_ner\] initialize got no examples: .*'spacy-auc-ner convert'"):
        nlp.initialize(lambda: iter([]))  # a reader of a file that is not .spacy yields nothing
