"""A tiny hand-made two-type corpus shared by the tests, and the one way they fit a pipeline to it."""
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_auc_ner.data.toy import TOY_SENTENCES

# A tiny two-type corpus: (words, BIO tags), the first five of the package's toy sentences
TOY = [(text.split(), list(tags)) for text, tags in TOY_SENTENCES[:5]]

# Four drug/disease texts with character-offset entities (one without any), for the losses' training tests
TEXTS = [
    ("Aspirin treats headache in adults .", [(0, 7, "DRUG"), (15, 23, "DISEASE")]),
    ("Ibuprofen can cause stomach ulcers .", [(0, 9, "DRUG"), (20, 34, "DISEASE")]),
    ("The patient had no symptoms .", []),
    ("Migraine responds to aspirin .", [(0, 8, "DISEASE"), (21, 28, "DRUG")]),
]


def make_examples(nlp, data=TOY):
    return [Example(Doc(nlp.vocab, words=w), Doc(nlp.vocab, words=w, ents=t)) for w, t in data]


def fit_toy(config=None, n_iter=40, *, factory="auc_ner", data=TOY, seed=0):
    """A blank English pipeline with one ``factory`` pipe (``config``), initialised on ``data``
    and updated ``n_iter`` times on all of it, seeded: (nlp, examples, each update's loss)."""
    spacy.util.fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe(factory, config=config or {})
    examples = make_examples(nlp, data)
    optimizer = nlp.initialize(lambda: examples)
    losses = [nlp.update(examples, sgd=optimizer, losses={})[factory] for _ in range(n_iter)]
    return nlp, examples, losses
