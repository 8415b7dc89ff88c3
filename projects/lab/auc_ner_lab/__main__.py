"""``python -m auc_ner_lab``: the lab's command line."""
import sys

from .cli import main

sys.exit(main())
