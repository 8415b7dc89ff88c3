"""What `--overwrite` may remove is bounded by the output folder, whatever its record says
(issue 32, point 1): a record naming something absolute, empty, `.` or `..` is not one this
package wrote and is refused whole; nothing is removed or written through a symbolic link; a
link that is itself a recorded entry is removed as a link. Tested on `OutputFolder`, which
every command that writes a folder (recipe, self-train, a study cell's steps) goes through."""
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_auc_ner.data.files import DataError
from spacy_auc_ner.outputs import MANIFEST, OutputFolder


def _snapshot(root: Path):
    """Every entry under `root`, links not followed: a link by its target, a file by its bytes."""
    out = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", path.read_bytes())
    return out


def _record(folder: Path, names, command: str = "demo") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps({"command": command, "written": names}))


def _user_files(tmp_path: Path) -> Path:
    user = tmp_path / "user"
    (user / "corpus").mkdir(parents=True)
    (user / "corpus" / "train.spacy").write_bytes(b"gold train")
    (user / "corpus" / "dev.spacy").write_bytes(b"gold dev")
    (user / "notes.txt").write_text("the user's")
    return user


@pytest.mark.parametrize("name", ["..", ".", "", "./", "data/..", "../user", "a//b", "/etc", "x/../../user"])
def test_a_record_naming_outside_or_the_folder_itself_is_refused_and_nothing_removed(tmp_path, name):
    user = _user_files(tmp_path)
    out = user / "out"  # the folder's parent holds the user's files: '..' would have emptied it
    (out / "mine.txt").parent.mkdir(parents=True)
    (out / "mine.txt").write_text("the user's, in the output folder")
    _record(out, [name.replace("/etc", str(user))])
    before = _snapshot(tmp_path)
    with pytest.raises(DataError, match=rf"^{out / MANIFEST}: not a record this package wrote \(.*\); nothing was removed"):
        OutputFolder(out, "demo")
    assert _snapshot(tmp_path) == before


def test_an_absolute_name_is_refused(tmp_path):
    user = _user_files(tmp_path)
    _record(tmp_path / "out", [str(user / "notes.txt")])
    with pytest.raises(DataError, match="is not a relative path"):
        OutputFolder(tmp_path / "out", "demo")
    assert (user / "notes.txt").read_text() == "the user's"


def test_a_record_that_is_not_a_list_of_names_is_refused(tmp_path):
    for written in ("model-best", [["model-best"]], [None], {"a": 1}):
        _record(tmp_path / "out", written)
        with pytest.raises(DataError, match="not a record"):
            OutputFolder(tmp_path / "out", "demo")


def test_a_data_folder_replaced_by_a_link_to_the_users_corpus_loses_nothing(tmp_path):
    """The issue's case: the run's OUT/data replaced by a link to the user's corpus folder, then
    a rerun with --overwrite: the record names data/train.spacy, which lies in the corpus."""
    user = _user_files(tmp_path)
    out = tmp_path / "out"
    _record(out, ["data/train.spacy", "data/dev.spacy", "model-best"])
    (out / "data").symlink_to(user / "corpus", target_is_directory=True)
    before = _snapshot(tmp_path)
    folder = OutputFolder(out, "demo")
    with pytest.raises(DataError, match=rf"^{out / 'data'} is a symbolic link: nothing is removed or written through it"):
        folder.claim(["data/train.spacy", "data/dev.spacy", "model-best"], [], overwrite=True, what="a demo run")
    with pytest.raises(DataError, match="is a symbolic link"):
        folder.clear()  # even without claim first
    assert _snapshot(tmp_path) == before
    with pytest.raises(DataError, match="is a symbolic link"):
        folder.record("data/train.spacy")  # nor written through it


def test_a_recorded_entry_that_is_a_link_is_removed_as_a_link(tmp_path):
    user = _user_files(tmp_path)
    out = tmp_path / "out"
    _record(out, ["model-best", "notes.txt"])
    (out / "model-best").symlink_to(user / "corpus", target_is_directory=True)
    (out / "notes.txt").symlink_to(user / "notes.txt")
    before = _snapshot(user)
    folder = OutputFolder(out, "demo")
    folder.claim(["model-best", "notes.txt"], [], overwrite=True, what="a demo run")
    folder.clear()
    assert not os.path.lexists(out / "model-best") and not os.path.lexists(out / "notes.txt")
    assert _snapshot(user) == before


def test_a_link_inside_the_folder_to_another_entry_is_not_followed(tmp_path):
    out = tmp_path / "out"
    (out / "keep").mkdir(parents=True)
    (out / "keep" / "f.txt").write_text("the user's")
    _record(out, ["alias/f.txt"])
    (out / "alias").symlink_to(out / "keep", target_is_directory=True)
    with pytest.raises(DataError, match="alias is a symbolic link"):
        OutputFolder(out, "demo").claim(["alias/f.txt"], [], overwrite=True, what="a demo run")
    assert (out / "keep" / "f.txt").read_text() == "the user's"


def test_a_foreign_entry_is_refused_without_suggesting_overwrite(tmp_path):
    """The refusal of an entry no earlier run recorded does not send the user to --overwrite,
    which would refuse it too."""
    (tmp_path / "out" / "model-best").mkdir(parents=True)
    folder = OutputFolder(tmp_path / "out", "demo")
    for overwrite in (False, True):
        with pytest.raises(DataError) as err:
            folder.claim(["model-best"], [], overwrite=overwrite, what="a demo run")
        assert "model-best not written by an earlier 'demo' run here" in str(err.value)
        assert "choose another output folder or overwrite it" not in str(err.value)


def test_bad_name():
    from spacy_auc_ner.outputs import bad_name

    for name in ("data/train.spacy", "model-best", "..x", "a..b/c"):
        assert bad_name(name) is None, name
    for name in ("", ".", "..", "/a", "a/", "a//b", "./a", "a/./b", "a/../b", "a\\..\\b", MANIFEST, 3, None):
        assert bad_name(name) is not None, name


# -- property: whatever the record and the folder's links, nothing outside the folder changes ---

KINDS = ("absent", "file", "dir", "link_user_dir", "link_user_file", "link_inside", "dangling")
ENTRIES = ("data", "model-best", "x", "keep")
NAMES = ("data", "data/train.spacy", "model-best", "model-best/meta.json", "x", "x/y", "keep/f.txt")
BAD = ("", ".", "..", "../user", "../user/notes.txt", "data/..", "data/../..", "./x", "USER")


def _make(out: Path, user: Path, name: str, kind: str) -> None:
    path = out / name
    if kind == "file":
        path.write_text(f"{name} in the folder")
    elif kind == "dir":
        path.mkdir()
        for child in ("train.spacy", "meta.json", "y", "f.txt"):
            (path / child).write_text(f"{name}/{child}")
    elif kind == "link_user_dir":
        path.symlink_to(user / "corpus", target_is_directory=True)
    elif kind == "link_user_file":
        path.symlink_to(user / "notes.txt")
    elif kind == "link_inside":
        (out / "inner").mkdir(exist_ok=True)
        (out / "inner" / "train.spacy").write_text("inner")
        path.symlink_to(out / "inner", target_is_directory=True)
    elif kind == "dangling":
        path.symlink_to(user / "nothing here")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    layout=st.fixed_dictionaries({e: st.sampled_from(KINDS) for e in ENTRIES}),
    recorded=st.lists(st.sampled_from(NAMES + BAD) | st.text(max_size=6), max_size=5),
    new=st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True),
    folder_is_link=st.booleans(),
)
def test_overwrite_never_changes_anything_outside_the_folder(tmp_path_factory, layout, recorded, new, folder_is_link):
    root = tmp_path_factory.mktemp("layout")
    user = _user_files(root)
    real = root / "real_out"
    real.mkdir()
    out = root / "out"
    if folder_is_link:  # the output folder itself may be a link: its target is the folder
        out.symlink_to(real, target_is_directory=True)
    else:
        out = real
    for entry, kind in layout.items():
        _make(out, user, entry, kind)
    _record(out, [str(user) if n == "USER" else n for n in recorded])
    outside = _snapshot(user)
    inside = _snapshot(real)
    removed = False
    try:
        folder = OutputFolder(out, "demo")
        folder.claim(new, [], overwrite=True, what="a demo run")
        folder.clear()
        removed = True
    except DataError:
        pass
    assert _snapshot(user) == outside  # nothing outside the folder changed, refused or not
    after = _snapshot(real)
    if not removed:
        assert after == inside  # a refusal removes nothing at all
    else:
        # only what was recorded went, and nothing the record did not name
        gone = {rel for rel in inside if rel not in after}
        named = {n for n in recorded}
        assert all(any(rel == n or rel.startswith(n + "/") for n in named) for rel in gone), (gone, named)
