"""``spacy-auc-ner config``'s work: the full training configs of methods and recipes as text
(`full_configs`: each assembled by :mod:`.methods` and built once, so that a wrong key stops
here), and writing them (`write_configs`), never over a file they were read from."""
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Set

from .data.files import PathLike, read_text, write_text
from .extras import MissingExtra, install_command, missing_for
from .methods import ENCODERS, assemble, check_config, config_files, describe, method_names, recipe_encoder, recipe_names


class FullConfigs(NamedTuple):
    texts: Dict[str, str]  # file name -> the config's text, with its header
    inputs: Set[Path]  # the files they were assembled from
    skipped: Dict[str, List[str]]  # extra -> the file names that need it (with every_one only)


def full_configs(name: Optional[str], encoder: Optional[str], configs_dir: PathLike, every_one: bool = False) -> FullConfigs:
    """The full config of the method or recipe ``name`` (on ``encoder``: a method's default
    cpu; a recipe's its own), or with ``every_one`` of every method on both encoders and every
    recipe, those that need an extra that is not installed skipped."""
    recipes = recipe_names(configs_dir)
    if every_one:
        jobs = [(m, e) for m in method_names(configs_dir) for e in ENCODERS] + [(r, recipe_encoder(r)) for r in recipes]
    else:  # a recipe is on its own encoder unless encoder names another (config_files refuses that)
        jobs = [(str(name), encoder or (recipe_encoder(str(name)) if name in recipes else "cpu"))]
    texts: Dict[str, str] = {}
    inputs: Set[Path] = set()
    skipped: Dict[str, List[str]] = {}
    for method, enc in jobs:
        base, partials = config_files(method, enc, configs_dir)
        filename = f"{method}.cfg" if enc == "cpu" or method in recipes else f"{method}_trf.cfg"
        missing = missing_for("".join(read_text(p) for p in (base, *partials)))
        if missing and every_one:
            skipped.setdefault(missing[0], []).append(filename)
            continue
        if missing:
            raise MissingExtra(f"{partials[-1]} on {base} names functions of the {missing[0]!r} extra, which is not installed: {install_command(missing[0])}")
        cfg, sources = assemble(base, partials), [base, *partials]
        check_config(cfg, f"{partials[-1]} on {base}")
        command = method if method in recipes else f"{method} --encoder {enc}"
        header = (
            f"# Written by `spacy-auc-ner config {command}` from {', '.join(map(str, sources[:-1]))}\n"
            f"# and {sources[-1]}: edit those (or a copy, with --configs-dir), not this file.\n"
            f"# {describe(method, configs_dir)}\n"
        )
        texts[filename] = header + cfg.to_str(interpolate=False) + "\n"
        inputs.update(sources)
    return FullConfigs(texts, inputs, skipped)


def write_configs(targets: Dict[Path, str], inputs: Set[Path], overwrite: bool) -> None:
    """Write each target's text, once every target is checked (none is a file read, none exists
    unless ``overwrite``)."""
    from .outputs import check_output_file

    for path in targets:
        check_output_file(path, inputs, overwrite)
    for path, text in targets.items():
        write_text(path, text)
