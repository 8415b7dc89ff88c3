"""Bring the results of a study running in another clone into this one, safely.

Campaigns run in a separate clone with its own venv (so that code changes here never touch
running cells) and append to that clone's `projects/lab/results/<name>.jsonl`. This copies, for each named
results file, the complete lines of the source (a line still being written is left for next
time) over this repository's copy, but only when nothing is lost: every row already here must
be in the source. Run from projects/lab, then `python -m scripts.evidence`; the source is the
other clone's root (or its projects/lab):

    python scripts/collect_results.py ../../../campaign campaign_lowres

One results file takes one writing process. To run more cells of a study at once, start each
extra process on a copy of the file (`cp results/x.jsonl results/x_b.jsonl`, then
`study run ... --results results/x_b.jsonl`) and name the copies after a `+`: the lines of
`x_b` that `x` lacks are appended to it. Lines, not cells, are compared, so give the processes
disjoint cells (other methods, corpora or sizes): a cell that two of them ran lands twice.

    python scripts/collect_results.py ../../../campaign lowres_recipe+lowres_recipe_b
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def complete_lines(path: Path) -> list:
    text = path.read_text(encoding="utf8")
    return [line for line in text[: text.rfind("\n") + 1].splitlines() if line.strip()]


def results_file(source_root: Path, name: str) -> Path:
    """The results file `name` of the other clone: `source_root` is its root (the lab is in
    projects/lab there) or its lab folder."""
    lab = source_root / "projects" / "lab"
    source = (lab if lab.is_dir() else source_root) / "results" / f"{name}.jsonl"
    if not source.is_file():
        raise SystemExit(f"Error: {source}: no such results file")
    return source


def source_lines(sources: list) -> list:
    """The complete lines of the first results file, then the lines of each copy that it lacks
    (a copy begins with the lines the file had when it was made)."""
    lines = complete_lines(sources[0])
    seen = set(lines)
    for copy in sources[1:]:
        for line in complete_lines(copy):
            if line not in seen:
                seen.add(line)
                lines.append(line)
    return lines


def collect(source_root: Path, name: str, root: Path = ROOT) -> str:
    name, *copies = name.split("+")
    target = root / "results" / f"{name}.jsonl"
    sources = [results_file(source_root, n) for n in [name, *copies]]
    new = source_lines(sources)
    old = complete_lines(target) if target.exists() else []
    missing = set(old) - set(new)
    if missing:
        where = " + ".join(map(str, sources))
        raise SystemExit(f"Error: {target}: {len(missing)} row(s) here are not in {where}; not overwriting them")
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in new), encoding="utf8")
    tmp.replace(target)
    return f"{target.relative_to(root)}: {len(old)} -> {len(new)} rows"


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: python scripts/collect_results.py SOURCE_CLONE NAME[+COPY...] [NAME ...]")
    for results_name in sys.argv[2:]:
        print(collect(Path(sys.argv[1]), results_name))
