"""Refresh the generated tables of the lab's documents (docs/*.md) from the files they come from.

A generated block in a document reads

    <!-- generated: evidence/verdicts.md -->
    ...the file's text...
    <!-- /generated -->

and this script replaces what stands between the markers with the named file's current text
(paths relative to the document's folder). `spacy project run evidence` writes those files from
the committed results and then runs this script, so every table regenerates with one command.
A marker naming a missing file is an error (one line), and a document is written whole or not
at all. Arguments: documents, or folders whose *.md are refreshed (default: docs/).
"""
import re
import sys
from pathlib import Path

BLOCK = re.compile(r"(<!-- generated: (?P<path>[^ ]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


def refresh(readme: Path, root: Path) -> int:
    text = readme.read_text(encoding="utf8")
    missing = [m["path"] for m in BLOCK.finditer(text) if not (root / m["path"]).exists()]
    if missing:
        raise SystemExit(f"Error: {readme}: generated block names missing file(s) {', '.join(missing)}; run `spacy project run evidence`")

    def body(m: re.Match) -> str:
        new = (root / m["path"]).read_text(encoding="utf8").rstrip("\n") + "\n"
        return m.group(1) + new + m.group(4)

    new_text, n = BLOCK.subn(body, text)
    tmp = readme.with_name(readme.name + ".tmp")
    tmp.write_text(new_text, encoding="utf8")
    tmp.replace(readme)
    return n


def documents(args) -> list:
    """The documents named, a folder standing for its *.md files."""
    paths = [Path(a) for a in args] or [Path("docs")]
    return [d for p in paths for d in (sorted(p.glob("*.md")) if p.is_dir() else [p])]


if __name__ == "__main__":
    for doc in documents(sys.argv[1:]):
        n = refresh(doc, doc.resolve().parent)
        if n:
            print(f"{doc}: {n} generated block(s) refreshed")
