"""Named methods: a training config plus overrides, the vocabulary of benchmarks and studies.

Each method names one of the configs in the ``configs/`` folder and the config overrides that
turn it into the method, so that every method shares the encoder, data and training settings
of its config and differs only where it says.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union


@dataclass(frozen=True)
class Method:
    name: str
    config: str
    overrides: Dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def config_path(self, configs_dir: Union[str, Path]) -> Path:
        path = Path(configs_dir) / self.config
        if not path.exists():
            raise FileNotFoundError(f"method '{self.name}': config {path} not found (configs_dir={configs_dir})")
        return path


_STRATEGY = "components.auc_ner.strategy.@misc"

METHODS: Dict[str, Method] = {
    m.name: m
    for m in [
        Method("ce", "softmax.cfg", description="softmax cross entropy over BIO labels"),
        Method("spacy_ner", "spacy_ner.cfg", description="spaCy's built-in transition-based ner"),
        Method("ova_auc", "ova_auc.cfg", description="OVA, deep AUC margin loss, all classifiers per step"),
        Method(
            "ova_auc_grouped",
            "ova_auc.cfg",
            {_STRATEGY: "spacy_auc_ner.GroupedByPrefix.v1"},
            "OVA-AUC, Algorithm 1: one step per B/I/O group",
        ),
        Method(
            "ova_auc_sampled",
            "ova_auc.cfg",
            {_STRATEGY: "spacy_auc_ner.SampledClassifiers.v1", "components.auc_ner.strategy.m": 2},
            "OVA-AUC, Algorithm 2: m = 2 sampled classifiers per step",
        ),
        Method(
            "ova_auc_batch",
            "ova_auc.cfg",
            {"components.auc_ner.loss.mode": "batch"},
            "OVA-AUC with a, b, alpha at their batch optima",
        ),
        Method(
            "ova_auc_viterbi",
            "ova_auc.cfg",
            {"components.auc_ner.decoder": "viterbi"},
            "OVA-AUC decoded by BIO-constrained Viterbi",
        ),
        Method(
            "ova_auc_batch_viterbi",
            "ova_auc.cfg",
            {"components.auc_ner.loss.mode": "batch", "components.auc_ner.decoder": "viterbi"},
            "OVA-AUC, batch-optimal a, b, alpha, Viterbi decoding",
        ),
        Method("ce_viterbi", "softmax.cfg", {"components.auc_ner.decoder": "viterbi"}, "softmax CE, Viterbi decoding"),
        Method("ova_bce", "ova_bce.cfg", description="OVA, binary cross entropy per classifier"),
        Method("two_task_auc", "two_task_auc.cfg", description="AUC-2T, lambda = 100"),
        Method("two_task_comauc", "comauc_2t.cfg", description="COMAUC-2T: BCE and AUC steps alternating"),
        Method("ova_comauc", "comauc_ova.cfg", description="COMAUC on OVA: BCE and AUC steps alternating"),
        Method("crf", "crf.cfg", description="linear-chain CRF, BIO-constrained Viterbi"),
        Method("bilstm_crf", "bilstm_crf.cfg", description="BiLSTM-CRF"),
        Method("focal", "focal.cfg", description="softmax focal loss, gamma 2"),
        Method("dice", "dice.cfg", description="self-adjusting dice loss"),
        Method("wce_inverse", "weighted_ce.cfg", description="weighted CE, inverse class frequency"),
        Method("wce_log", "weighted_ce.cfg", {"components.auc_ner.loss.form": "log"}, "weighted CE, log10((s - s_k)/s_k + beta)"),
        Method("mom", "mom.cfg", description="MoM learning on softmax CE, lambda 0.2"),
        Method("ns_uniform", "negative_sampling.cfg", description="softmax CE on entity tokens + uniformly sampled negatives"),
        Method(
            "ns_weighted",
            "negative_sampling.cfg",
            {"components.auc_ner.loss.distribution": "weighted"},
            "softmax CE on entity tokens + negatives weighted by uncertainty and missampling",
        ),
    ]
}


def get_method(name: str, extra: Optional[Dict[str, Method]] = None) -> Method:
    table = {**METHODS, **(extra or {})}
    if name not in table:
        raise KeyError(f"unknown method {name!r}; known: {', '.join(sorted(table))}")
    return table[name]
