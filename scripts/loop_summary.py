"""The main job's last step: the test F1 of the loop's model and where each file is.

    python scripts/loop_summary.py METRICS.json TRAIN.jsonl RAW.txt MODEL BATCH.jsonl
"""
import sys
from pathlib import Path

import srsly


def main(argv=None) -> int:
    metrics, train, raw, model, batch = (Path(a) for a in (argv or sys.argv[1:]))
    scores = srsly.read_json(metrics)
    print(f"test F1 {100 * scores['ents_f']:.1f} (precision {100 * scores['ents_p']:.1f}, recall {100 * scores['ents_r']:.1f}): {metrics}")
    print(f"annotated sentences: {train}")
    print(f"raw text: {raw}")
    print(f"model: {model}")
    print(f"the next sentences to annotate: {batch} (and {batch.with_suffix('.spacy')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
