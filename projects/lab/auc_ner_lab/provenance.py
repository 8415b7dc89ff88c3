"""What a results row says ran its cell besides its config: the libraries' versions, the
checkout's git commit and, for a working tree with uncommitted changes, the digest of its diff
(kept in the results store before any cell trains from it, `runner.store_tree_diff`)."""
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Dict, Optional

from .store import diff_digest

# the checkout the lab runs from: projects/lab/auc_ner_lab/../../.. (tests point it elsewhere)
CHECKOUT = Path(__file__).resolve().parents[3]
# what "+changes" and the stored diff look at: tracked files outside the results a campaign appends to
_CODE_PATHS = ["--", ".", ":(exclude)projects/lab/results"]


def _git(checkout: Path, *args: str, timeout: int = 10, text: bool = True) -> Optional[subprocess.CompletedProcess]:
    """``git -C checkout args``; None outside a git checkout or where git cannot run."""
    if not (checkout / ".git").exists():
        return None
    try:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=text, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def git_commit(checkout: Path) -> Optional[str]:
    """The checkout's commit, with "+changes" when tracked files outside projects/lab/results/
    differ from it (the commit alone then does not say what ran); None outside a git checkout."""
    head = _git(checkout, "rev-parse", "HEAD")
    dirty = _git(checkout, "status", "--porcelain", "--untracked-files=no", *_CODE_PATHS)
    if head is None or dirty is None or head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def tree_diff(checkout: Path) -> Optional[bytes]:
    """What "+changes" in `git_commit` stands for, as `git diff HEAD --binary` prints it; None
    for a clean tree or outside a git checkout."""
    diff = _git(checkout, "diff", "HEAD", "--binary", *_CODE_PATHS, timeout=60, text=False)
    return diff.stdout if diff is not None and diff.returncode == 0 and diff.stdout else None


def environment() -> Dict[str, Optional[str]]:
    """What a cell's numbers depend on besides its config: the libraries' versions, the git
    commit and, for a commit with "+changes", the sha256 of the tree's diff (`git_diff_digest`).
    The tree is read again for each cell; the libraries once."""
    found: Dict[str, Optional[str]] = dict(_library_versions())
    # a copy without .git (a GPU machine's) names the commit it was copied from in AUC_NER_LAB_COMMIT
    found["git_commit"] = git_commit(CHECKOUT) or os.environ.get("AUC_NER_LAB_COMMIT")
    diff = tree_diff(CHECKOUT) if str(found["git_commit"] or "").endswith("+changes") else None
    if diff:
        found["git_diff_digest"] = diff_digest(diff)
    return found


@lru_cache(maxsize=1)
def _library_versions() -> Dict[str, Optional[str]]:
    from importlib.metadata import PackageNotFoundError, version

    found: Dict[str, Optional[str]] = {}
    for name in ("spacy_auc_ner", "spacy", "thinc", "numpy", "torch", "spacy-transformers", "transformers"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found
