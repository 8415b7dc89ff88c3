"""docs/lowres_extras.md's generated table and sentences (auc_ner_lab/evidence/extras.py) from
made-up raw scores, by hand."""
from auc_ner_lab.evidence.extras import extras_sentences, extras_table


def _scores(f, p=0.5, r=0.25):
    return {"ents_f": f, "ents_p": p, "ents_r": r}


AUGMENTATION = {**{f"base-seed{s}": _scores(f) for s, f in enumerate([0.3, 0.2, 0.1])},
                **{f"aug2-seed{s}": _scores(f, p=0.6) for s, f in enumerate([0.35, 0.3, 0.1])},
                **{f"aug3-seed{s}": _scores(f) for s, f in enumerate([0.3, 0.2, 0.1])}}
SEED_0 = {"self_train_round_0": _scores(0.3), "self_train_round_1": _scores(0.34), "self_train_round_2": _scores(0.31),
          "pretrained_characters_2ep": _scores(0.28), "pretrain_config_without_weights": _scores(0.3)}
ROUNDS = [{"round": 1, "dev": {"ents_f": 0.25}}, {"round": 0, "dev": {"ents_f": 0.2}}, {"round": 2, "dev": {"ents_f": 0.22}}]


def test_the_table_by_hand():
    lines = extras_table(AUGMENTATION, SEED_0).splitlines()
    # alone: 0.3, 0.2, 0.1: mean 0.2, sample sd 0.1; precision and recall averaged over the seeds
    assert lines[2] == "| alone | 0.300 | 0.200 | 0.100 | 0.200 ± 0.100 | 0.500 | 0.250 |"
    assert lines[3].endswith("| 0.250 ± 0.132 | 0.600 | 0.250 |")  # sd of 0.35, 0.3, 0.1
    assert lines[5] == "| + self-training, round 1 (threshold 0.9) | 0.340 | | | | 0.500 | 0.250 |"
    assert len(lines) == 8


def test_the_sentences_by_hand():
    text = extras_sentences(AUGMENTATION, SEED_0, ROUNDS)
    # 2 copies: differences 0.05, 0.1, 0.0: mean +5.0 points, sd 0.05, t = 0.05 / (0.05 / sqrt 3) = 1.732, 2 df: p = 0.225
    assert "2 copies +5.0 (p=0.225, n=3)" in text
    assert "neither is significant at the 5 % level" in text
    # seed 0 against round 0 (0.3): round 1 +4.0, pretraining -2.0
    assert "(+4.0 and -2.0 points on that draw" in text
    # the rounds in order of their number, whatever the file's order; dev picks round 1
    assert "0.200, 0.250, 0.220 (rounds 0 to 2), so choosing the round on dev picks round 1" in text
    assert "gave the same test F1 as `ner` alone" in text
