"""The package's public Python API: what a tool built on spacy-auc-ner (the lab in
``projects/lab`` is one) may import, each name with the reason a user would want it. Everything
registered (the ``auc_ner`` factory; architectures such as ``BiLSTMEncoder.v1``; losses such as
``CRFLoss.v1`` and schemes such as ``CRF.v1``, with the CRF maths; readers; callbacks such as
``calibrate_entity_bias.v1``; the scorer) is public through spaCy's registry and its config name;
everything else in the package is internal and may change without notice. ``projects/lab/tests/test_api.py`` holds the lab to this list, and
the list to fewer than 45 names (issue 46): a new name makes room by another leaving.

Methods and recipes (what ``spacy-auc-ner config`` assembles):
  DEFAULT_CONFIGS_DIR, ENCODERS              the shipped configs; the base config per encoder family
  method_path, method_config                 find a named method's file (an unknown name fails with the known ones); assemble it onto a base
  recipe_files, recipe_config                the base and partial files a recipe assembles from (its base says its encoder); its config
  assemble, MethodError                      merge your own partial configs as methods are merged; its error
Training and scoring in process:
  load_training_config, train_config         a config with overrides read as ``spacy train`` reads it; ``spacy train`` in process
  unknown_override_keys                      the override keys that name nothing in a config, filled defaults counted (``recipe`` refuses them)
  budgeted, has_dev                          the step settings of a config's ``[budget]`` (epochs) and dev set; whether it has one
  train_steps                                pretrain -> train -> self-train (``spacy-auc-ner recipe``), as its config alone says
  write_unlabeled                            Docs as unlabeled text (.spacy, .jsonl, .txt) for self-training or pretraining
  predict, score_entities, dev_scores, METRICS  the package's scorer on any pipeline, and what each score means
Choosing the sentences to annotate next (``spacy-auc-ner suggest``):
  suggest_docs                               the n sentences of a pool most worth annotating, with the model's entities (random: no model needed)
  STRATEGIES, DEFAULT_MAX_SIMILARITY         its strategies' names; its diversity guard's default (the Jaccard similarity above which a sentence is skipped)
Corpora:
  read_docs, write_docs                      Docs from a ``.spacy`` or BIO/IOB1/BIOES column file (errors naming file and line); to ``.spacy``
  parse_columns, Sentence, write_sentences   column text as sentences with BIO labels; them to ``.spacy`` or ``token<TAB>BIO`` by suffix
  doc_bio_tags, bio_layout                   a Doc's entities as IOB2 tags; which label index of a pipe is B/I of which type
  write_toy_corpus                           six hand-made sentences as a toy corpus folder, for smoke runs
  CORPORA, locate_corpus                     the known corpora (sources at pinned commits, reference checksums); the local copy README's folders hold
  draw_indices                               the sentences ``LowResource.v1`` draws, to write them to a file (``EntityRatio.v1``: its ``indices``)
Transformer encoders:
  resolve_encoder_name                       the transformer folder or Hub id a configured name loads (``minilm``, the env variable)
Files and errors of a command-line tool built on the package:
  main                                       run the command line, or your own typer ``app=`` with the same one-line usage errors
  one_line_errors, EXPECTED                  end your commands' expected failures (these errors and yours) as one ``Error:`` line
  DataError                                  the one-line data error (``one_line_errors`` prints it as ``Error: ...``)
  PathLike                                   the path type the package's functions take (a str or a Path)
  atomic_output, write_text, write_json      write a file whole or not at all: any writer's, text, JSON (NaN as null)
  OutputFolder                               an output folder that records what it wrote, so ``--overwrite`` removes only that
  check_output_file                          a single output file: never one of the inputs, replaced only with ``--overwrite``
"""
from .annotation.selection import DEFAULT_MAX_SIMILARITY, STRATEGIES
from .annotation.suggestions import suggest_docs
from .cli import main
from .cli.errors import EXPECTED, one_line_errors
from .data.columns import Sentence, parse_columns, read_docs, write_docs, write_sentences
from .data.corpora import CORPORA, locate_corpus
from .data.files import DataError, PathLike, atomic_output, write_json, write_text
from .data.toy import write_toy_corpus
from .labels import bio_layout, doc_bio_tags
from .methods import (
    DEFAULT_CONFIGS_DIR,
    ENCODERS,
    MethodError,
    assemble,
    method_config,
    method_path,
    recipe_config,
    recipe_files,
)
from .ml.encoders import resolve_encoder_name
from .outputs import OutputFolder, check_output_file
from .pipeline.scoring import METRICS, dev_scores, predict, score_entities
from .training.budget import budgeted
from .training.no_dev import has_dev
from .training.readers import draw_indices
from .training.recipe import train_steps
from .training.spacy_training import load_training_config, train_config, unknown_override_keys
from .training.unlabeled import write_unlabeled

__all__ = [
    "DEFAULT_CONFIGS_DIR", "ENCODERS", "method_path", "method_config", "recipe_files", "recipe_config", "assemble", "MethodError",
    "load_training_config", "train_config", "unknown_override_keys", "budgeted", "has_dev", "train_steps",
    "write_unlabeled", "predict", "score_entities", "dev_scores", "METRICS",
    "suggest_docs", "STRATEGIES", "DEFAULT_MAX_SIMILARITY",
    "read_docs", "write_docs", "parse_columns", "Sentence", "write_sentences", "doc_bio_tags", "bio_layout", "write_toy_corpus",
    "CORPORA", "locate_corpus", "draw_indices",
    "resolve_encoder_name",
    "main", "one_line_errors", "EXPECTED", "DataError", "PathLike",
    "atomic_output", "write_text", "write_json", "OutputFolder", "check_output_file",
]
