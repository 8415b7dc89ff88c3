"""The commit a lent GPU machine's rows name (issue 45: every row traceable to a commit).

That machine gets a copy of the working tree without .git, so `provenance.environment` finds no
commit there and takes the one AUC_NER_LAB_COMMIT names, which setup.sh sets from what this
script stamped. A CPU row of a clean tree names its commit; of a tree with uncommitted changes
(tracked files outside projects/lab/results/, `provenance.git_commit`) "<commit>+changes" and the
digest of the diff kept in its store. A GPU row names the commit only, so the copy it ran from
must be exactly that commit's:

  python tree_stamp.py write DIR   (pack.sh, here) refuses a tree with uncommitted changes in one
      line (exit 1); else writes DIR/commit (HEAD) and DIR/manifest.json (the blob of every
      tracked file outside projects/lab/results/, `git ls-files -s`).
  python tree_stamp.py check DIR   (setup.sh, on the GPU machine, from the copy's root; here too,
      before the calls) hashes each of those files as git does and prints the commit when every
      one matches; else one line naming the files that differ (exit 1): the copy is not the
      commit (edited or committed after pack.sh), and its rows would name code they did not run.
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

# what provenance.git_commit counts as changes (its _CODE_PATHS; a lab test keeps them equal)
CODE_PATHS = ["--", ".", ":(exclude)projects/lab/results"]
SUBMODULE, SYMLINK = "160000", "120000"


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"tree_stamp.py: git {args[0]} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def write(folder: Path) -> None:
    dirty = _git("status", "--porcelain", "--untracked-files=no", *CODE_PATHS).splitlines()
    if dirty:
        raise SystemExit(f"tree_stamp.py: refusing to pack a working tree with uncommitted changes ({len(dirty)} tracked "
                         f"files outside projects/lab/results/, first: {dirty[0][3:]}): commit them, then pack "
                         "(GPU rows name the commit only)")
    commit = _git("rev-parse", "HEAD").strip()
    # "<mode> <blob> <stage>\t<path>" per file
    entries = [entry.split("\t", 1) for entry in _git("ls-files", "-s", "-z", *CODE_PATHS).split("\0") if entry]
    files = [[*meta.split()[:2], path] for meta, path in entries]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(json.dumps({"commit": commit, "files": files}) + "\n", encoding="utf8")
    (folder / "commit").write_text(commit + "\n", encoding="utf8")
    print(f"stamped {commit} ({len(files)} files) into {folder}", file=sys.stderr)


def blob_id(data: bytes, length: int = 40) -> str:
    """The id git gives a blob of `data` (sha1; sha256 in a repository of 64-digit ids)."""
    digest = hashlib.sha256 if length == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def differing(manifest: dict, root: Path) -> list:
    """The paths of `manifest` whose file under `root` is missing or holds another blob."""
    out = []
    for mode, blob, path in manifest["files"]:
        if mode == SUBMODULE:
            continue
        target = root / path
        if mode == SYMLINK and not target.is_symlink() and target.exists():
            continue  # a link that a carried folder replaced there: the files it points to are checked as themselves
        try:
            data = os.readlink(target).encode() if mode == SYMLINK else target.read_bytes()
        except OSError:
            out.append(path)
            continue
        if blob_id(data, len(blob)) != blob:
            out.append(path)
    return out


def check(folder: Path, root: Path) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf8"))
    changed = differing(manifest, root)
    if changed:
        raise SystemExit(f"tree_stamp.py: this tree is not commit {manifest['commit'][:12]} that {folder} was packed at "
                         f"({len(changed)} files differ, first: {changed[0]}): commit, run pack.sh again, call again "
                         "(its rows would name code they did not run)")
    print(manifest["commit"])


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        raise SystemExit("usage: python tree_stamp.py write|check DIR (from the repository root)")
    (write if sys.argv[1] == "write" else lambda f: check(f, Path.cwd()))(Path(sys.argv[2]))
