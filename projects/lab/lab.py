"""The lab's command line from any folder: ``python projects/lab/lab.py ...`` (running this file
puts projects/lab on the path, as ``python -m auc_ner_lab`` run from projects/lab does), e.g.
``python projects/lab/lab.py docs --check`` from the repository root, as CI runs it. The
repository's own project.yml does not use the lab (tests/test_project.py)."""
import sys

from auc_ner_lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
