"""The lab's tests: commands run in subprocesses (``python -m auc_ner_lab``, the scripts) import
the lab as its project's commands do, with projects/lab on the path, and this folder's
`lab_helpers` (the stand-in cells a spec may name as its runner); the lab's test data are in
`lab_data`, and no lab test imports a module of the library's tests (tests/)."""
import os
from pathlib import Path

LAB = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(LAB), str(TESTS), os.environ.get("PYTHONPATH")) if p)
