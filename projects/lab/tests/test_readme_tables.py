import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "scripts" / "readme_tables.py")
readme_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(readme_tables)


def test_blocks_take_the_files_text_and_the_rest_stays(tmp_path):
    (tmp_path / "t.md").write_text("| a |\n|---|\n| 1 |\n")
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- generated: t.md -->\nold\n<!-- /generated -->\nend\n")
    assert readme_tables.refresh(readme, tmp_path) == 1
    assert readme.read_text() == "intro\n<!-- generated: t.md -->\n| a |\n|---|\n| 1 |\n<!-- /generated -->\nend\n"


def test_a_missing_file_is_one_error_and_nothing_written(tmp_path):
    readme = tmp_path / "README.md"
    before = "<!-- generated: nope.md -->\nold\n<!-- /generated -->\n"
    readme.write_text(before)
    with pytest.raises(SystemExit, match="nope.md"):
        readme_tables.refresh(readme, tmp_path)
    assert readme.read_text() == before


def test_every_block_of_our_documents_names_a_committed_file():
    docs = readme_tables.documents([ROOT / "docs"])
    blocks = [(doc, m["path"]) for doc in docs for m in readme_tables.BLOCK.finditer(doc.read_text())]
    assert len(blocks) >= 5  # the recipe's three tables, the campaigns' status, the verdicts
    for doc, path in blocks:
        assert (doc.parent / path).exists(), (doc, path)


def test_a_folder_stands_for_its_documents(tmp_path):
    (tmp_path / "a.md").write_text("x\n")
    (tmp_path / "b.txt").write_text("y\n")
    assert readme_tables.documents([tmp_path]) == [tmp_path / "a.md"]
