"""Move the rows of some methods out of a results file into an archive, keeping every row.

When a method's code changes what it computes (a bug fixed), its finished cells keep their ids
(ids hash the config's name and settings, not the code), so `study run` would skip them. This
moves those rows to ARCHIVE/<name>.jsonl (appended: nothing is lost), so that the study runs
the cells again with the new code and the tables read the new rows only:

    python scripts/archive_rows.py campaign_lowres results/archive/thinc_lstm --method bilstm_crf
"""
import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def archive(name: str, archive_dir: Path, methods: set, root: Path = ROOT) -> str:
    source = root / "results" / f"{name}.jsonl"
    if not source.is_file():
        raise SystemExit(f"Error: {source}: no such results file")
    keep, moved = [], []
    for number, line in enumerate(source.read_text(encoding="utf8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            method = json.loads(line)["method"]
        except (ValueError, KeyError):
            raise SystemExit(f"Error: {source}:{number}: not a results row (JSON with a 'method')")
        (moved if method in methods else keep).append(line)
    if not moved:
        raise SystemExit(f"Error: {source}: no row of {', '.join(sorted(methods))}; nothing moved")
    target = archive_dir / f"{name}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a", encoding="utf8") as out:  # the archive first: a crash between loses nothing
        out.write("".join(line + "\n" for line in moved))
    tmp = source.with_name(source.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in keep), encoding="utf8")
    tmp.replace(source)
    return f"{source.relative_to(root)}: {len(moved)} row(s) moved to {target.relative_to(root)}, {len(keep)} kept"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="results file: results/NAME.jsonl")
    parser.add_argument("archive", type=Path, help="folder of the archive (relative to the repository root)")
    parser.add_argument("--method", action="append", required=True, help="a method whose rows move (repeatable)")
    args = parser.parse_args()
    print(archive(args.name, ROOT / args.archive, set(args.method)))
