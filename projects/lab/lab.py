"""The lab's command line from any folder: ``python projects/lab/lab.py ...`` (running this file
puts projects/lab on the path, as ``python -m auc_ner_lab`` run from projects/lab does). The
repository's own project.yml uses it to fetch a corpus and draw a training set."""
import sys

from auc_ner_lab.cli import main

if __name__ == "__main__":
    sys.exit(main())
