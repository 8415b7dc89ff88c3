"""The package's public Python API: what a tool built on spacy-auc-ner (the lab in
``projects/lab`` is one) may import, each name with the reason a user would want it. Everything
registered (the ``auc_ner`` factory, architectures, losses, readers, callbacks, the scorer) is
public through spaCy's registry and its config name; everything else in the package is internal
and may change without notice. ``projects/lab/tests/test_api.py`` holds the lab to this list.

Methods and recipes (what ``spacy-auc-ner config`` assembles):
  DEFAULT_CONFIGS_DIR, ENCODERS, RECIPE_ENCODER  the shipped configs, the base per encoder, the recipes' encoder
  method_names, method_path, method_config   list, find and assemble a named method onto a base
  recipe_files, recipe_config, recipe_encoder  the files a recipe assembles from, its config, its encoder
  assemble, MethodError                      merge your own partial configs as methods are merged; its error
Training and scoring in process:
  load_training_config, train_config         a config with overrides read as ``spacy train`` reads it; ``spacy train`` in process
  missing_keys, unknown_override_keys        dotted keys a config lacks; override keys that name nothing (``recipe`` refuses them)
  budgeted, has_dev                          the step settings of a config's ``[budget]`` (epochs) and dev set; whether it has one
  train_steps                                pretrain -> train -> self-train (``spacy-auc-ner recipe``), as its config alone says
  write_unlabeled                            Docs as unlabeled text (.spacy, .jsonl, .txt) for self-training or pretraining
  predict, score_entities, dev_scores, METRICS  the package's scorer on any pipeline, and what each score means
  calibrate_entity_bias                      choose ``entity_bias`` on dev examples outside ``spacy train``
Choosing the sentences to annotate next (``spacy-auc-ner suggest``):
  suggest_docs, Suggestion                   the n sentences of a pool most worth annotating, with the model's entities
  sentence_uncertainty, select_sentences     each sentence's mnlp or entropy score; the ranking and diversity guard on them (pure)
  token_set, STRATEGIES                      what the guard compares (lower-cased token sets); the strategies' names
  DEFAULT_MAX_SIMILARITY                     the guard's default: the Jaccard similarity above which a sentence is skipped
Corpora:
  read_columns, parse_columns, write_columns, columns_text, Sentence  BIO/IOB1/BIOES column files, errors naming file and line
  read_docs, write_docs, sentences_to_docs, write_sentences            Docs from and to ``.spacy`` or column files
  doc_bio_tags, bio_layout                   a Doc's entities as IOB2 tags; which label index of a pipe is B/I of which type
  EntityArrays, PREFIX_O, PREFIX_B, PREFIX_I  a corpus's gold entities as flat arrays, for statistics of your own
  TOY_SENTENCES, write_toy_corpus            six hand-made sentences, and them as a toy corpus folder, for smoke runs
  CORPORA, CorpusSource                      the known corpora: sources at pinned commits, checksums of the reference copies
  data_dirs, locate_corpus                   where a local copy of a corpus is looked for (README's folders), and the one found
  draw_indices, draw_entity_ratio            the sentences ``LowResource.v1`` / ``EntityRatio.v1`` draw, to write them to a file
  rareness                                   the type rareness r_t that ``Resampled.v1`` weighs sentences by
Array maths (numpy or cupy) for a head of your own:
  crf_nll, posteriors, viterbi, pad, constrain, bio_constraints  the BIO linear-chain CRF: NLL and gradients, marginals, best path
  lstm_layer                                 thinc's LSTM with a correct result on a GPU (thinc's computes the first sentence only)
  resolve_encoder_name                       the transformer folder or Hub id a configured name loads (``minilm``, the env variable)
Files and errors of a command-line tool built on the package:
  main                                       run the command line, or your own typer ``app=`` with the same one-line usage errors
  app                                        the typer app of ``spacy-auc-ner``, to mount its commands in your own or list them
  one_line_errors, fail, EXPECTED            end your commands' expected failures (these errors and yours) as one ``Error:`` line
  DataError, config_error_text, os_error_text  the one-line data error; a config or OS error as one line
  PathLike, atomic_output, write_text, write_json  write a file whole or not at all
  OutputFolder                               an output folder that records what it wrote, so ``--overwrite`` removes only that
  check_output_file                          a single output file: never one of the inputs, replaced only with ``--overwrite``
  require                                    import an optional extra, or fail in one line naming the pip command
"""
from .annotation.selection import DEFAULT_MAX_SIMILARITY, STRATEGIES, select_sentences, token_set
from .annotation.suggestions import Suggestion, suggest_docs
from .annotation.uncertainty import sentence_uncertainty
from .cli import main
from .cli.app import app
from .cli.errors import EXPECTED, fail, one_line_errors
from .data.columns import Sentence, columns_text, parse_columns, read_columns, read_docs, sentences_to_docs, write_columns, write_docs, write_sentences
from .data.corpora import CORPORA, CorpusSource, data_dirs, locate_corpus
from .data.entity_arrays import PREFIX_B, PREFIX_I, PREFIX_O, EntityArrays
from .data.files import DataError, PathLike, atomic_output, config_error_text, os_error_text, write_json, write_text
from .data.toy import TOY_SENTENCES, write_toy_corpus
from .extras import require
from .labels import bio_layout, doc_bio_tags
from .methods import (
    DEFAULT_CONFIGS_DIR,
    ENCODERS,
    RECIPE_ENCODER,
    MethodError,
    assemble,
    method_config,
    method_names,
    method_path,
    recipe_config,
    recipe_encoder,
    recipe_files,
)
from .ml.crf import bio_constraints, constrain, crf_nll, pad, posteriors, viterbi
from .ml.encoders import resolve_encoder_name
from .ml.lstm import lstm_layer
from .outputs import OutputFolder, check_output_file
from .pipeline.calibration import calibrate_entity_bias
from .pipeline.scoring import METRICS, dev_scores, predict, score_entities
from .training.budget import budgeted, has_dev
from .training.readers import draw_entity_ratio, draw_indices
from .training.recipe import train_steps
from .training.resampling import rareness
from .training.spacy_training import load_training_config, missing_keys, train_config, unknown_override_keys
from .training.unlabeled import write_unlabeled

__all__ = [
    "DEFAULT_CONFIGS_DIR", "ENCODERS", "RECIPE_ENCODER", "method_names", "method_path", "method_config", "recipe_files",
    "recipe_config", "recipe_encoder", "assemble", "MethodError",
    "load_training_config", "train_config", "missing_keys", "unknown_override_keys", "budgeted", "has_dev", "train_steps",
    "write_unlabeled", "predict", "score_entities", "dev_scores", "METRICS", "calibrate_entity_bias",
    "suggest_docs", "Suggestion", "sentence_uncertainty", "select_sentences", "token_set", "STRATEGIES", "DEFAULT_MAX_SIMILARITY",
    "read_columns", "parse_columns", "write_columns", "columns_text", "Sentence", "read_docs", "write_docs",
    "sentences_to_docs", "write_sentences", "doc_bio_tags", "bio_layout", "EntityArrays", "PREFIX_O", "PREFIX_B",
    "PREFIX_I", "TOY_SENTENCES", "write_toy_corpus", "CORPORA", "CorpusSource", "data_dirs", "locate_corpus", "draw_indices", "draw_entity_ratio", "rareness",
    "crf_nll", "posteriors", "viterbi", "pad", "constrain", "bio_constraints", "lstm_layer", "resolve_encoder_name",
    "main", "app", "one_line_errors", "fail", "EXPECTED", "DataError", "config_error_text", "os_error_text", "PathLike",
    "atomic_output", "write_text", "write_json", "OutputFolder", "check_output_file", "require",
]
