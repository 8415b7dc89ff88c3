"""The known corpora and where a local copy of one is looked for, for every tool that gets a
corpus (the root project's ``corpus`` step, the lab's ``corpus get``): one search order and one
table of sources and checksums.

`CORPORA`: CoNLL-2003, NCBI disease and S800, each with its original files at a pinned commit
(their git blob ids) and the sha256 of each split as ``token<TAB>BIO`` text, the reference
copy that `CorpusSource.differences` compares a local copy or a download with.

`data_dirs`: the folders searched for ``<corpus>/{train,dev,test}.tsv``, the places README
names and no others: the given folder (a project's ``vars.data_dir``, ``assets/`` by default),
``$SPACY_AUC_NER_DATA``, ``assets/``, ``data/`` and ``../shared/data`` relative to the working
folder, then, unless ``$SPACY_AUC_NER_DATA`` is set (even to nothing), ``shared/data`` beside
the package's own checkout (where a source checkout keeps its corpora: the lab runs from
``projects/lab``, two levels below the checkout). Not the
ancestors of the working folder: a ``shared/`` folder two levels up would change what a test
or a user gets.
"""
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .columns import Sentence, columns_text
from .files import PathLike

# the splits of a corpus folder: <corpus>/{train,dev,test}.{tsv,spacy}
SPLITS = ("train", "dev", "test")
ENV_VAR = "SPACY_AUC_NER_DATA"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


@dataclass(frozen=True)
class CorpusSource:
    """Where a corpus comes from and how its original files become BIO column files."""

    name: str
    description: str
    repo: str
    commit: str
    files: Dict[str, Tuple[str, str]]  # split -> (path in repo, git blob id)
    sha256: Dict[str, str]  # split -> sha256 of the converted token<TAB>BIO file
    untyped_type: Optional[str] = None  # type given to bare B/I tags
    license: str = ""
    columns: Dict[str, int] = field(default_factory=lambda: {"token_column": 0, "label_column": -1})

    def url(self, split: str) -> str:
        return RAW_URL.format(repo=self.repo, commit=self.commit, path=self.files[split][0])

    def differences(self, splits: Mapping[str, Sequence[Sentence]]) -> List[str]:
        """One line for each split whose ``token<TAB>BIO`` text is not the reference copy's
        (its sha256 differs from `sha256`): a local copy or a download that is not the
        original, said, not refused."""
        out = []
        for split, sentences in splits.items():
            digest = hashlib.sha256(columns_text(sentences).encode("utf-8")).hexdigest()
            if digest != self.sha256[split]:
                out.append(f"{self.name}/{split}: content differs from the reference copy (sha256 {digest[:12]}..., expected {self.sha256[split][:12]}...)")
        return out


CORPORA: Dict[str, CorpusSource] = {
    c.name: c
    for c in (
        CorpusSource(
            name="conll2003",
            description="CoNLL-2003 English NER (Reuters news; PER, ORG, LOC, MISC)",
            repo="kyzhouhzau/BERT-NER",
            commit="0f77e478872453df51cd3c65d1a39b12d9617f9d",
            files={
                "train": ("old_version/NERdata/train.txt", "171cfe484671d6fa04e99526cbafd45e83842f54"),
                "dev": ("old_version/NERdata/dev.txt", "33b26c6eda1253d9e1384ac1f5b513ff8a4e3164"),
                "test": ("old_version/NERdata/test.txt", "b0eee5d55d63b0038c940d7584bb85c89d91a9be"),
            },
            sha256={
                "train": "fcbf6fb1ff226d17111e25d79fd1dfc9f768177fed278f14d4e77b27a7b0fd18",
                "dev": "c2a285c3ab24e58d05b43a1afb050c29acbf09b4d175e3197a517544abd1ff92",
                "test": "3cac49eb9986ead18a2310761315b1e65f0ec18ebf3be1fe1cdd650ed80852c5",
            },
            license="Reuters RCV1 text: research use under the Reuters corpus licence",
            # token POS chunk NER: keep columns 1 and 4
            columns={"token_column": 0, "label_column": 3},
        ),
        CorpusSource(
            name="ncbi_disease",
            description="NCBI disease corpus (PubMed abstracts; Disease)",
            repo="cambridgeltl/MTL-Bioinformatics-2016",
            commit="df0df02fae6dbb87d88ffcf323b9096528f06f84",
            files={
                "train": ("data/NCBI-disease-IOB/train.tsv", "d2d646eead9fabe3b1fe0391035bd135d32051c7"),
                "dev": ("data/NCBI-disease-IOB/devel.tsv", "152e9b9d3b4275a1bb9a435b0783946ef40208fe"),
                "test": ("data/NCBI-disease-IOB/test.tsv", "6217f611e1517a70e5bd645b9dea34f7f9bf594f"),
            },
            sha256={
                "train": "58379baf4614b8d757d93dd7a21b202849ca99f9b9d71b49185523ff5443300c",
                "dev": "b4e1e7efcc2a35047bf2f3d281648357470e674f555d4a26a0049ac37d59cc61",
                "test": "8f088ce45dc4746592188f9e69de3d89d87f3bb8f0ed8c4a287d018123fa148d",
            },
            license="CC BY 4.0 (MTL-Bioinformatics-2016)",
        ),
        CorpusSource(
            name="s800",
            description="SPECIES-800 (PubMed abstracts; Species), BioBERT split",
            repo="shreyashub/BioFLAIR",
            commit="9edc438997baca6337552639120e363b9894cc98",
            files={
                "train": ("data/ner/s800/train.tsv", "a3abafa01885fb0a36c577a11c2c884cbfb5f3c9"),
                "dev": ("data/ner/s800/devel.tsv", "e6ce80e54ac83b1f9a1cb0cc9f3f56b8333634b0"),
                "test": ("data/ner/s800/test.tsv", "5a1c7c0f29f8007823a0e8cf63f2cc4eff51d52e"),
            },
            sha256={
                "train": "d8e109ed4289567c8fd544f781c4b37cb472737f08cb42af91bfc1e7c503fa7e",
                "dev": "617b1cd596bb664a00325697d3d8a7e0c9fb1d9f08004e1e24aa5aa3099f551d",
                "test": "decd7a0af93c059c36eda7bbaa8c43c9fd106ce667d4ca38a79f6941c335a54c",
            },
            untyped_type="Species",
            license="S800 (species.jensenlab.org): research use; cite Pafilis et al. 2013",
        ),
    )
}


def _checkout_data() -> Optional[Path]:
    """``shared/data`` beside the package's checkout when it is a source checkout (an editable
    install: its pyproject.toml is there), else None (installed in site-packages)."""
    checkout = Path(__file__).resolve().parents[2]
    return checkout.parent / "shared" / "data" if (checkout / "pyproject.toml").is_file() else None


CHECKOUT_DATA = _checkout_data()


def data_dirs(data_dir: Optional[PathLike] = None, cwd: Optional[PathLike] = None) -> List[Path]:
    """The folders searched for ``NAME/{train,dev,test}.tsv``, in order: ``data_dir`` when
    given (relative to ``cwd``), ``$SPACY_AUC_NER_DATA`` when set, then ``assets/``, ``data/``
    and ``../shared/data`` of the working folder ``cwd`` (default: the process's), then
    ``shared/data`` beside the package's source checkout, when it is one."""
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    dirs = [cwd / data_dir] if data_dir is not None else []
    if os.environ.get(ENV_VAR):
        dirs.append(cwd / os.environ[ENV_VAR])
    dirs += [cwd / "assets", cwd / "data", cwd.parent / "shared" / "data"]
    if CHECKOUT_DATA is not None and ENV_VAR not in os.environ:  # a given $SPACY_AUC_NER_DATA, even empty, replaces it
        dirs.append(CHECKOUT_DATA)
    return list(dict.fromkeys(Path(os.path.normpath(d)) for d in dirs))


def locate_corpus(name: str, data_dir: Optional[PathLike] = None, cwd: Optional[PathLike] = None) -> Optional[Path]:
    """The first folder of `data_dirs` holding all three split files of corpus `name`, as
    ``<folder>/<name>``; None when none does."""
    for root in data_dirs(data_dir, cwd):
        if all((root / name / f"{split}.tsv").is_file() for split in SPLITS):
            return root / name
    return None
