"""Print the transformer recipe's dev ablation read by its rule (what
docs/evidence/campaign_trf_ablation/parts.md holds) from the committed rows: the rule is
`auc_ner_lab.evidence.trf_rule`, the document `auc_ner_lab.evidence.trf_ablation`.

  python -m scripts.trf_ablation   (from projects/lab)
"""
import sys
from pathlib import Path

if __name__ == "__main__":  # run as a file: the lab folder, which holds auc_ner_lab, on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from auc_ner_lab.evidence import committed  # noqa: E402
from auc_ner_lab.evidence.trf_ablation import trf_ablation_texts  # noqa: E402
from auc_ner_lab.evidence.trf_rule import STUDY  # noqa: E402


def main() -> None:
    committed.ROOT = Path(__file__).resolve().parents[1]
    print(committed.in_lab(trf_ablation_texts)[f"evidence/{STUDY}/parts.md"], end="")


if __name__ == "__main__":
    main()
