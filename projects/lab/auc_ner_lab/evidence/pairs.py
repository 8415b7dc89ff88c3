"""Methods paired over the training draws, as every document's tests pair them: `by` is a map
{(method, corpus, size): MethodResult} (`committed.results_by_cell`), the unit of a test the
draw (corpus, partition; its sizes averaged, `stats.draw_means`), a cell pair across device
kinds said (`mixed_text`)."""
from ..aggregate import crosses_devices
from ..stats import draw_means, paired_difference, span


def shared_cells(a_by: dict, a: str, b_by: dict, b: str, sizes=None, corpus=None):
    """(corpus, a's result, b's result, partition) of every partition that a (in `a_by`) and b
    (in `b_by`) both finished in a corpus x size cell, optionally only at `sizes` and on `corpus`
    (one corpus or a collection of them)."""
    corpora = None if corpus is None else ({corpus} if isinstance(corpus, str) else set(corpus))
    for (method, c, size), r in sorted(a_by.items(), key=lambda kv: str(kv[0])):
        other = b_by.get((b, c, size))
        in_scope = not (sizes and size not in sizes) and not (corpora and c not in corpora)
        if method == a and other is not None and in_scope:
            yield from ((c, r, other, p) for p in sorted(set(r.scores) & set(other.scores)))


def draw_lists(found):
    """[(draw, a, b), ...] -> (a's, b's), one mean pair per draw (`stats.draw_means`)."""
    means = draw_means(found)
    return [x for x, _ in means.values()], [y for _, y in means.values()]


def paired_lists(by: dict, a: str, b: str, sizes=None, corpus=None):
    """Scores of a and of b, one pair per draw (corpus, partition) both finished: the mean over
    the draw's sizes (a partition's smaller draw is a subset of its larger one, with the same
    dev sample and test set, so its sizes are not independent pairs), optionally only at
    `sizes` and on `corpus`."""
    return draw_lists(((c, p), r.scores[p], o.scores[p]) for c, r, o, p in shared_cells(by, a, by, b, sizes, corpus))


def cell_pairs(by: dict, a: str, b: str, sizes=None, corpus=None) -> list:
    """The (a's result, b's result, partition) of every cell pair `paired_lists` pairs."""
    return [(r, o, p) for _, r, o, p in shared_cells(by, a, by, b, sizes, corpus)]


def mixed_devices(by: dict, a: str, b: str, sizes=None, corpus=None) -> tuple:
    """(cell pairs whose two rows trained on different device kinds, cell pairs) of a against b:
    a pair across kinds carries the numerical difference between a GPU and a CPU training too
    (`device_gap`)."""
    pairs = cell_pairs(by, a, b, sizes, corpus)
    mixed = sum(crosses_devices(x, y, p) for x, y, p in pairs)
    return mixed, len(pairs)


def mixed_text(by: dict, a: str, b: str, sizes=None, corpus=None) -> str:
    """"; 12 of the 30 cell pairs mix a GPU row with a CPU one" for a paired test whose two
    sides trained on different device kinds in some pairs, else ""."""
    mixed, total = mixed_devices(by, a, b, sizes, corpus)
    return f"; {mixed} of the {total} cell pairs mix a GPU row with a CPU one" if mixed else ""


def pooled_ratio(by: dict, a: str, b: str, corpus=None):
    """The mean test F1 of a over every cell pair it shares with b (`cell_pairs`) divided by
    b's over the same pairs: "×1.4 b's mean test F1"; None without pairs or with b's mean 0."""
    pairs = cell_pairs(by, a, b, corpus=corpus)
    mean_b = sum(y.scores[p] for _, y, p in pairs) / len(pairs) if pairs else 0.0
    return sum(x.scores[p] for x, _, p in pairs) / len(pairs) / mean_b if mean_b > 0 else None


def per_draw(pairs):
    """[((corpus, size, partition), a, b), ...] -> (a's, b's), one mean pair per draw (corpus,
    partition): a partition's sizes share its draw."""
    return draw_lists(((c, p), a, b) for (c, _, p), a, b in pairs)


def dev_pairs(a_rows, b_rows, metric: str):
    """Dev scores of a and b over the (corpus, size, partition) both have, one mean pair per
    draw (corpus, partition)."""
    def dev(rows):
        return {(r["corpus"], r["size"], r["partition"]): ((r.get("scores") or {}).get("dev_scores") or {}).get(metric)
                for r in rows}
    da, db = dev(a_rows), dev(b_rows)
    keys = sorted(k for k in set(da) & set(db) if isinstance(da[k], (int, float)) and isinstance(db[k], (int, float)))
    return per_draw([(k, da[k], db[k]) for k in keys])


def cell_ratios(by: dict, a: str, b: str) -> list:
    """Per corpus x size cell where a and b share >= 2 partitions: (corpus, size, mean of a /
    mean of b over the shared partitions, paired p-value over them, partitions)."""
    out = []
    for (m, c, n), r in sorted(by.items(), key=lambda kv: str(kv[0])):
        other = by.get((b, c, n))
        shared = sorted(set(r.scores) & set(other.scores)) if m == a and other is not None else []
        mean_b = sum(other.scores[i] for i in shared) / len(shared) if shared else 0.0
        if len(shared) >= 2 and mean_b > 0:  # no ratio to a zero
            t, _ = paired_difference([r.scores[i] for i in shared], [other.scores[i] for i in shared])
            out.append((c, n, sum(r.scores[i] for i in shared) / len(shared) / mean_b, t.p_value, len(shared)))
    return out


def shared_mean(by: dict, a: str, b: str, corpus: str, size) -> float:
    """b's mean over the partitions of one cell that a shares with it."""
    x, y = by[(a, corpus, size)], by[(b, corpus, size)]
    shared = sorted(set(x.scores) & set(y.scores))
    return sum(y.scores[i] for i in shared) / len(shared)


def versus(by: dict, a: str, b: str):
    """a against b over the corpus x size cells both have (`cell_ratios`), as the documents cite
    it: pooled ratios (overall and per corpus), the cell ratios' spread and significant cells,
    the paired difference over the draws and the pairs across device kinds; None without a cell."""
    from types import SimpleNamespace

    cells = cell_ratios(by, a, b)
    if not cells:
        return None
    ratios = [r for _, _, r, _, _ in cells]
    xs, ys = paired_lists(by, a, b)
    t, diff = paired_difference(xs, ys)
    above, below = (sum(p < 0.05 and (r > 1) == up for _, _, r, p, _ in cells) for up in (True, False))
    corpora = sorted({c for c, *_ in cells})
    return SimpleNamespace(cells=cells, mean=sum(ratios) / len(ratios), low=min(ratios), high=max(ratios), above=above,
                           below=below, partitions=span([k for *_, k in cells]), diff=diff, p=t.p_value, draws=len(xs),
                           pooled=pooled_ratio(by, a, b), pairs=len(cell_pairs(by, a, b)), mixed=mixed_text(by, a, b),
                           by_corpus={c: pooled_ratio(by, a, b, corpus=c) for c in corpora})
