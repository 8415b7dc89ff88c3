"""Print the tables of issue 23 (the fixed auc_ner heads against spaCy's default ner, per corpus
x size, then the recipe decision) from the results stores: `auc_ner_lab.evidence.heads` says
what they hold; `python lab.py docs` writes them into docs/evidence/heads_lowres.md's generated
blocks.

  python -m scripts.heads_lowres_table [--heads results/heads_lowres] [--recipe results/lowres_recipe]   (from projects/lab)
"""
import argparse
from pathlib import Path

from auc_ner_lab.evidence.heads import recipe_table, table

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--heads", default=ROOT / "results" / "heads_lowres")
    p.add_argument("--recipe", default=ROOT / "results" / "lowres_recipe")
    a = p.parse_args()
    print(table(a.heads, a.recipe) + "\n\n" + recipe_table(a.recipe))


if __name__ == "__main__":
    main()
