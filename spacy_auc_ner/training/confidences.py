"""Predicted entities and a confidence in [0, 1] for each: the ``scores`` that the ``auc_ner``
pipe keeps in its span group (``doc.spans``), or, for spaCy's ``ner``, which has none, the
probability mass of the beam-search parses that hold the entity. `load_pipeline` loads the
trained pipeline that gives them (self-train's ``--model``, suggest's MODEL).
"""
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span
from thinc.api import Config
from tqdm import tqdm

from ..data.columns import DataError
from ..data.files import PathLike
from ..outputs import unfinished_run
from ..pipeline.component import AUCNER

RECOGNIZERS = ("auc_ner", "ner", "beam_ner")  # the factories of pipes whose entities have confidences
COMPONENT_KEY = "[self_training.component]"
# the widest beam of spaCy ner's confidences: spaCy's beam_parse takes a C int (wider ended in an
# OverflowError traceback), and a beam of a million parses took 3.8 GB for two short sentences
MAX_BEAM_WIDTH = 1024


def beam_width_error(value) -> str:
    """Why ``value`` is no beam width ("" when it is one): a whole number from 2 to `MAX_BEAM_WIDTH`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= MAX_BEAM_WIDTH:
        return f"must be a whole number from 2 to {MAX_BEAM_WIDTH}"
    return ""


def load_pipeline(model: PathLike) -> Language:
    """A trained pipeline from its folder; a missing or broken one (a file, a folder without
    meta.json) is one line naming it, not spaCy's [E053] on its own."""
    import spacy

    if not Path(model).exists():
        raise DataError(f"{model}: no such pipeline folder")
    record = unfinished_run(model)
    if record is not None:
        raise DataError(f"{model}: written by a run that did not finish ({record} says so), so it may be an early "
                        f"checkpoint, even the untrained one; rerun that run with --overwrite, or give a finished run's model")
    try:
        return spacy.load(model)
    except (OSError, ValueError, KeyError) as err:
        raise DataError(f"{model}: not a spaCy pipeline that loads ({' '.join(str(err).split())})") from None


def find_recognizer(factories: Dict[str, Optional[str]], component: Optional[str] = None, where: str = "the pipeline") -> str:
    """The pipe whose entities are pseudo-labels, from each pipe's factory (of a pipeline or of a
    config before it trains): ``component`` if given, else the last ``auc_ner`` or ``ner`` pipe."""
    names = ", ".join(factories) or "no pipes"
    if component is not None:
        if component not in factories:
            raise DataError(f"{COMPONENT_KEY} {where} has no pipe {component!r} (it has {names})")
        if factories[component] not in RECOGNIZERS:
            raise DataError(f"{COMPONENT_KEY} {component!r} is neither an auc_ner nor a spaCy ner pipe, so its entities have no confidence")
        return component
    found = [name for name, factory in factories.items() if factory in RECOGNIZERS]
    if not found:
        raise DataError(f"{where} ({names}) has no auc_ner or ner pipe to label the pool")
    return found[-1]


def pipe_factories(pipeline: Union[Language, Config]) -> Dict[str, Optional[str]]:
    """Each pipe of a pipeline, or of a config's pipeline, with the name of its factory."""
    if isinstance(pipeline, Language):
        return {name: pipeline.get_pipe_meta(name).factory for name in pipeline.pipe_names}
    components = pipeline.get("components", {})
    return {name: (components.get(name) or {}).get("factory") for name in pipeline.get("nlp", {}).get("pipeline", [])}


def scored_entities(
    nlp: Language,
    docs: Sequence[Doc],
    component: Optional[str] = None,
    beam_width: int = 16,
    batch_size: int = 256,
    progress: bool = True,
) -> List[Tuple[Doc, List[Span], numpy.ndarray]]:
    """Each doc with its predicted entities and a confidence in [0, 1] each (module docstring)."""
    name = find_recognizer(pipe_factories(nlp), component)
    pipe = nlp.get_pipe(name)
    out: List[Tuple[Doc, List[Span], numpy.ndarray]] = []
    bar = tqdm(total=len(docs), desc="labelling the pool", unit="sent", disable=None if progress else True, file=sys.stderr)
    for start in range(0, len(docs), batch_size):
        batch = list(docs[start : start + batch_size])
        if isinstance(pipe, AUCNER):
            key = pipe.cfg["spans_key"]
            for doc in nlp.pipe(batch, batch_size=batch_size):
                group = doc.spans[key]
                out.append((doc, list(group), numpy.asarray(group.attrs["scores"], dtype="f8")))
        else:
            # the components before the ner, then the beam and the greedy parse of the same docs
            before = nlp.pipe_names[: nlp.pipe_names.index(name)]
            with nlp.select_pipes(enable=before):
                plain = list(nlp.pipe(batch, batch_size=batch_size))
            beams = pipe.beam_parse(plain, beam_width=beam_width, beam_density=0.0001)
            marginals = pipe.scored_ents(beams)
            for doc, scores in zip(pipe.pipe(plain, batch_size=batch_size), marginals):
                ents = list(doc.ents)
                conf = [min(1.0, scores.get((e.start, e.end, e.label_), 0.0)) for e in ents]
                out.append((doc, ents, numpy.asarray(conf, dtype="f8")))
        bar.update(len(batch))
    bar.close()
    return out
