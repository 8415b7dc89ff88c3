"""Config files read as spaCy reads them, and spaCy's errors about a config as one line: a
parse error names the file and line (``base.cfg:9: section [nlp] appears twice``), a wrong
setting its full config key (``[components.auc_ner.loss.gama]``), wherever spaCy checked it
(a component as ``{factory: settings}``, a registered function as its own block).
"""
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from confection import ConfigValidationError

from .files import DataError, PathLike, read_text


def config_error_text(err) -> str:
    """A confection ConfigValidationError as one line: ``[section.key] message; ...`` (or,
    for a malformed file, the parser's message squeezed onto one line)."""
    parts = [f"[{'.'.join(str(p) for p in e.get('loc', []))}] {e.get('msg', '')}".strip() for e in getattr(err, "errors", None) or []]
    return "; ".join(parts) if parts else " ".join(str(err).split())


def config_syntax_error(text: str) -> Optional[Tuple[int, str]]:
    """(line, message) of the first thing in a config file's ``text`` that the config parser
    refuses, or None. confection passes some of these on as configparser's own exceptions (a
    traceback) and words the others without a line, so the text is parsed here first, as
    confection parses it (a ConfigParser with its defaults, keys kept as written)."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.MissingSectionHeaderError as err:
        line = str(err.line).strip()
        if line.startswith("["):  # a header without its closing bracket
            return err.lineno, f"cannot parse {line!r} (a section header is [name])"
        return err.lineno, "not a config file (no section header)"
    except configparser.DuplicateSectionError as err:
        return err.lineno or 0, f"section [{err.section}] appears twice"
    except configparser.DuplicateOptionError as err:
        return err.lineno or 0, f"{err.option} is set twice in [{err.section}]"
    except configparser.ParsingError as err:
        lineno = err.errors[0][0]
        return lineno, f"cannot parse {text.splitlines()[lineno - 1].strip()!r} (a setting is key = value)"
    return None


def load_config_file(path: PathLike, overrides: Optional[Dict[str, Any]] = None) -> Any:
    """A config file as a Config with ``overrides``, not interpolated; a missing file, one not
    UTF-8 or one the parser refuses is one line naming the file and, where there is one, the
    line: ``base.cfg:9: section [nlp] appears twice``."""
    if not Path(path).is_file():
        raise DataError(f"{path}: no such config file")
    try:
        text = read_text(path)
    except OSError as err:
        raise DataError(f"{path}: cannot read: {err.strerror or err}") from None
    return parse_config_text(text, path, overrides)


# text -> its Config, without overrides: a study assembles thousands of cells from a handful
# of files, and parsing was most of the time `lab.py docs` took; callers get copies (a Config
# is mutable)
_PARSED: Dict[str, Any] = {}
_PARSED_MAX = 256


def parse_config_text(text: str, where: PathLike, overrides: Optional[Dict[str, Any]] = None) -> Any:
    """A config's ``text`` as a Config with ``overrides``, not interpolated, in spaCy's order of
    the sections; what the parser refuses is one line naming ``where`` and, where there is one,
    the line. The one reader of config text: files, assembled recipes and overrides alike."""
    if overrides:
        return _parse_config_text(text, where, overrides)
    cached = _PARSED.get(text)
    if cached is None:
        cached = _parse_config_text(text, where, None)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[text] = cached
    return cached.copy()


def _parse_config_text(text: str, where: PathLike, overrides: Optional[Dict[str, Any]]) -> Any:
    from spacy.util import load_config_from_str

    error = config_syntax_error(text)  # configparser's own errors carry no file, and a traceback
    if error is not None:
        raise DataError(f"{where}:{error[0]}: {error[1]}")
    try:
        return load_config_from_str(text, overrides=overrides or {}, interpolate=False)
    except ConfigValidationError as err:
        # a section whose parent is missing, or a key and a section of the same name: the
        # error's location is that section, so its header gives the line
        loc = ((getattr(err, "errors", None) or [{}])[0]).get("loc") or []
        line = _section_line(text, ".".join(str(part) for part in loc))
        raise DataError(f"{where}{'' if line is None else f':{line}'}: {config_error_text(err)}") from None


def with_overrides(config: Any, overrides: Dict[str, Any], where: Any) -> Any:
    """A Config (assembled, not read from a file) with ``overrides`` applied as ``spacy train``
    applies them; an override that names no section is one line naming ``where``."""
    from spacy.util import load_config_from_str

    if not overrides:
        return config
    try:
        return load_config_from_str(config.to_str(interpolate=False), overrides=overrides, interpolate=False)
    except ConfigValidationError as err:
        raise DataError(f"{where}: {config_error_text(err)}") from None


def _section_line(text: str, section: str) -> Optional[int]:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() == f"[{section}]":
            return number
    return None


def located_error(err: Exception, config: Mapping[str, Any], blocks: Sequence[str], section: Optional[str]) -> Exception:
    """``err``, raised while spaCy resolved the ``blocks`` (dot names) of the interpolated
    ``config``, with the full config key of what failed. spaCy's errors do not carry it: a
    registered function's names its function (``auc_ner -> entity_bias``) or none (``[model]
    word_dropout must be ...``), a schema's is relative to its ``section``. The block is found
    by building each registered function of ``blocks`` alone, innermost first (`_failing_block`);
    the setting, for an error that does not name it, is the one whose default makes the block
    build (`_culprit`). A ConfigValidationError comes back as one with full locations and the
    values (cli.errors words it); another error as a DataError ``[key]: message``."""
    from spacy.util import dot_to_object

    found = None
    lang = (config.get("nlp") or {}).get("lang") or "xx"
    for name in blocks:
        found = _failing_block(dot_to_object(config, name), name, lang)
        if found is not None:
            break
    if found is None:  # no registered function fails alone: the schema of the section
        if isinstance(err, ConfigValidationError) and section is not None:
            return _relocated(err, [{**e, "loc": (section, *e.get("loc", ()))} for e in err.errors or []])
        return err
    path, block, failed = found
    if isinstance(failed, ConfigValidationError):
        # a function's error locates (function, setting): the setting is the block's
        errors = [{**e, "loc": (*path.split("."), *list(e.get("loc", ()))[-1:]),
                   "input": e.get("input", block.get(list(e.get("loc", ("",)))[-1]))} for e in failed.errors or []]
        return _relocated(failed, errors)
    text = str(failed).strip()
    if text.startswith("[") and "]" in text and not text.startswith(f"[{path}"):
        text = text.split("]", 1)[1].strip()  # the function's own short name of the block ([model])
    elif text.startswith(f"[{path}"):
        return DataError(text)  # it names its full key already
    key = _culprit(block)
    return DataError(f"[{path if key is None else f'{path}.{key}'}]: {text}")


def _relocated(err: ConfigValidationError, errors: List[Dict[str, Any]]) -> ConfigValidationError:
    return ConfigValidationError(config=err.config, errors=errors, title=err.title, show_config=False)


def _failing_block(block: Any, path: str, lang: str) -> Optional[Tuple[str, Dict[str, Any], BaseException]]:
    """(dot name, block, error) of the innermost block at or below ``block`` that fails to
    build alone: a registered function (an ``@`` key) or a component (a ``factory``)."""
    import spacy
    from spacy.util import registry

    if not isinstance(block, Mapping):
        return None
    for key, value in block.items():
        found = _failing_block(value, f"{path}.{key}", lang)
        if found is not None:
            return found
    block = dict(block)
    try:
        if "factory" in block:  # a component, built as spaCy builds it
            settings = {k: v for k, v in block.items() if k != "factory"}
            spacy.blank(lang).add_pipe(block["factory"], name=path.rsplit(".", 1)[-1], config=settings, validate=True)
        elif any(str(k).startswith("@") for k in block):
            registry.resolve({"block": block}, validate=True)
    except Exception as err:  # whatever it is, this is where it happens
        return path, block, err
    return None


def _culprit(block: Mapping[str, Any]) -> Optional[str]:
    """The setting of a registered function's ``block`` that fails it: the one whose value,
    set back to the function's default, lets the block build (None: no such single one)."""
    import inspect

    from spacy.util import registry

    ref = next((k for k in block if str(k).startswith("@")), None)
    if ref is None:
        return None
    try:
        parameters = inspect.signature(registry.get(ref[1:], block[ref])).parameters
    except Exception:
        return None
    for key, value in block.items():
        default = parameters[key].default if key in parameters else inspect.Parameter.empty
        if default is inspect.Parameter.empty or value == default or isinstance(value, Mapping):
            continue
        try:
            registry.resolve({"block": {**block, key: default}}, validate=True)
        except Exception:
            continue
        return key
    return None
