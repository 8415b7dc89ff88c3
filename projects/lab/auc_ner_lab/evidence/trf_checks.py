"""Checks of the transformer ablation's pairs (`trf_ablation`'s document): round 0 of the
recipe against a plain cell of its config, cells trained twice, the worker process's history
before a cell, GPU against CPU trainings of one cell, and the GPU lease's process check."""
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from ..store import device_kind
from .trf_rule import ALPHA, RECIPE, null_keep_rate


def _extras(row: dict) -> dict:
    return (row.get("scores") or {}).get("extras") or {}


def _apart(a: float, b: float) -> bool:
    """Two dev F1s that are not one number (stored JSON floats of one training agree exactly;
    the margin only absorbs float noise)."""
    return abs(a - b) >= 1e-9


def _agreement(pairs: Sequence[tuple], what: str) -> str:
    """"N of the M <what>": how many pairs (a, b) of dev F1s are equal, and how far the others lie apart."""
    known = [(a, b) for a, b in pairs if a is not None and b is not None]
    apart = [abs(a - b) for a, b in known if _apart(a, b)]
    text = f"{len(known) - len(apart)} of the {len(known)} {what}"
    if apart:
        text += f" (the others {100 * min(apart):.1f} to {100 * max(apart):.1f} points apart)"
    return text


def _round_zero_rows(rows: Sequence[dict]) -> Dict[str, List[tuple]]:
    """Per device kind, the (recipe row, no_self_train row) of each (corpus, size, partition)
    cell both have, in cell order."""
    def where(r: dict) -> tuple:
        return (device_kind(r), r["corpus"], r["size"], r["partition"])

    recipe = {where(r): r for r in rows if r["method"] == RECIPE and _extras(r).get("rounds")}
    alone = {where(r): r for r in rows if r["method"] == "no_self_train"}
    pairs: Dict[str, List[tuple]] = {}
    for k in sorted(set(recipe) & set(alone)):
        pairs.setdefault(k[0], []).append((recipe[k], alone[k]))
    return pairs


def _round_zero_f(recipe: dict) -> Optional[float]:
    return _extras(recipe)["rounds"][0].get("dev_f")


def round_zero_pairs(rows: Sequence[dict]) -> Dict[str, List[tuple]]:
    """Per device kind, the (corpus, size, partition) cells' pairs (the recipe's round-0 dev F1,
    no_self_train's dev ents_f): the spec's caveat assumes they are one training."""
    return {kind: [(_round_zero_f(a), _dev_f(b)) for a, b in pairs] for kind, pairs in _round_zero_rows(rows).items()}


def differs(pairs: Sequence[tuple]) -> bool:
    """Whether any pair (a, b) of known dev F1s is `_apart`."""
    return any(a is not None and b is not None and _apart(a, b) for a, b in pairs)


def round_zero_check(rows: Sequence[dict]) -> str:
    """The spec's caveat assumes the recipe's round 0 trains what no_self_train trains; this
    counts, per device kind, the cells where the recipe's round-0 dev F1 (spaCy's ents_f on the
    dev sample, what chooses the round) equals no_self_train's dev ents_f (it trains once, no
    rounds), and how often the recipe kept round 0."""
    pairs = round_zero_pairs(rows)
    by_kind = [_agreement(pairs[kind], f"cells both have on the {kind}") for kind in ("CPU", "GPU") if kind in pairs]
    kept = [_extras(r).get("chosen_round") for r in rows if r["method"] == RECIPE]
    return (f"The caveat's premise is that round 0 of `{RECIPE}` trains what `no_self_train` trains (the same training on the "
            "same draw): their dev F1s are equal in " + (" and in ".join(by_kind) or "none of 0 cells")
            + f"; `{RECIPE}` kept round 0 in {sum(c == 0 for c in kept)} of its {len(kept)} cells, round 1 in "
            f"{sum(c == 1 for c in kept)}.\n")


def device_mix(rows: Sequence[dict]) -> str:
    """How the draws' rows split over device kinds: a pair across kinds also carries the
    numerical difference between them (repeat_check and round_zero_check show its size)."""
    kinds: Dict[tuple, set] = {}
    for r in rows:
        kinds.setdefault((r["corpus"], r["partition"]), set()).add(device_kind(r))
    mixed = sum(len(k) > 1 for k in kinds.values())
    only = {kind: sum(k == {kind} for k in kinds.values()) for kind in ("CPU", "GPU")}
    return (f"Devices: of the {len(kinds)} draws with rows, {only['CPU']} trained on the CPU only, {only['GPU']} on the GPU only "
            f"and {mixed} on both (their pairs across devices carry the difference between them too); rows: "
            f"{sum(device_kind(r) == 'CPU' for r in rows)} on the CPU, {sum(device_kind(r) == 'GPU' for r in rows)} on the GPU.\n")


def _dev_f(r: dict) -> Optional[float]:
    return ((r.get("scores") or {}).get("dev_scores") or {}).get("ents_f")


def _repeat_rows(rows: Sequence[dict], others: Sequence[dict]) -> List[tuple]:
    """(device kind, row, other) for each recipe row of ``rows`` whose cell ``others`` trained
    too: the same `_cell` on the same device kind."""
    def same(r: dict) -> tuple:
        return (device_kind(r), _cell(r))

    there = {same(r): r for r in others if r["method"] == RECIPE}
    return [(k[0], r, there[k]) for r in rows if r["method"] == RECIPE for k in [same(r)] if k in there]


def repeat_check(rows: Sequence[dict], others: Sequence[dict], other_study: str) -> str:
    """Whether a cell trained twice repeats: the recipe's rows here against the rows of
    ``other_study`` for the same method, draw, overrides and device kind (another key only
    because one study is scored on dev), per device kind."""
    pairs = _repeat_rows(rows, others)
    if not pairs:
        return ""
    by_kind = [_agreement([(_dev_f(a), _dev_f(b)) for kind_, a, b in pairs if kind_ == kind], f"cells on the {kind}")
               for kind in ("CPU", "GPU") if any(p[0] == kind for p in pairs)]
    return (f"The same `{RECIPE}` cell trained twice, here and in `{other_study}` (same draw, settings and device kind): "
            f"the same dev F1 in " + " and ".join(by_kind) + ".\n")


def process_positions(rows: Sequence[dict]) -> Dict[tuple, tuple]:
    """Where each row was trained: {(key, finished): (process, position)}, position 0 for the
    first row its worker process wrote, 1 for the next, and so on. A process is a run of rows of
    one host, pid, study and device kind that follow one another (start = finished - seconds);
    a row that starts before the previous one ended, or more than an hour after it, begins
    another (pids recur on a fresh machine). A cell cut short writes no row, so a position
    counts the rows written before it in that process, not every cell it trained. A row copied
    into another store (the same key and time) counts once."""
    from datetime import datetime, timedelta

    def start(r: dict) -> datetime:
        return datetime.fromisoformat(r["finished"]) - timedelta(seconds=r.get("seconds") or 0)

    trained = {(r["key"], r["finished"]): r for r in rows if r.get("finished") and r.get("pid") is not None}  # a copied row once
    runs: Dict[tuple, List[dict]] = {}
    for r in trained.values():
        runs.setdefault((r.get("host"), r["pid"], r.get("study"), device_kind(r)), []).append(r)
    out: Dict[tuple, tuple] = {}
    for worker, worker_rows in runs.items():
        process, position, last_end = 0, 0, None
        for r in sorted(worker_rows, key=start):
            if last_end is not None and not timedelta(0) <= start(r) - last_end <= timedelta(hours=1):
                process, position = process + 1, 0
            out[(r["key"], r["finished"])] = ((*worker, process), position)
            position, last_end = position + 1, datetime.fromisoformat(r["finished"])
    return out


def position_check(rows: Sequence[dict], others: Sequence[dict], where: Dict[tuple, tuple]) -> Tuple[str, bool]:
    """Where the pairs of `round_zero_check` and `repeat_check` were trained (each row's
    position in its worker process, ``where``: `process_positions` of every row of both
    stores), and whether on the GPU path and position go together: every pair that differs ran
    at two positions and every repeat that agrees at one, so the rows cannot tell them apart."""
    def at(r: dict) -> Optional[tuple]:
        return where.get((r.get("key"), r.get("finished")))

    def described(pairs: List[tuple]) -> str:
        placed = [(at(a), at(b)) for a, b in pairs]
        counts = Counter("?" if x is None or y is None else f"({x[1]}, {y[1]})" for x, y in placed)
        together = sum(x is not None and y is not None and x[0] == y[0] for x, y in placed)
        return ", ".join(f"{label} x{n}" for label, n in counts.items()) + f"; {together} of {len(pairs)} in one process"

    zero = _round_zero_rows(rows)
    repeats = _repeat_rows(rows, others)
    parts = [f"round 0 and `no_self_train` on the {kind}: " + described(zero[kind]) for kind in ("CPU", "GPU") if kind in zero]
    parts += [f"the repeated `{RECIPE}` cells on the {kind}: " + described([(a, b) for k, a, b in repeats if k == kind])
              for kind in ("CPU", "GPU") if any(k == kind for k, _, _ in repeats)]
    if not parts:
        return "", False

    def positions(a: dict, b: dict) -> Optional[tuple]:
        x, y = at(a), at(b)
        return None if x is None or y is None else (x[1], y[1])

    gpu_apart = [positions(a, b) for a, b in zero.get("GPU", []) if differs([(_round_zero_f(a), _dev_f(b))])]
    gpu_equal = [positions(a, b) for k, a, b in repeats if k == "GPU" and None not in (_dev_f(a), _dev_f(b))
                 and not differs([(_dev_f(a), _dev_f(b))])]
    confounded = (bool(gpu_apart) and all(p is not None and p[0] != p[1] for p in gpu_apart)
                  and all(p is not None and p[0] == p[1] for p in gpu_equal))
    return ("Where these pairs trained (each row's position in the worker process that wrote it, 0 its first row, "
            "from the rows' pids and times): " + "; ".join(parts) + ".\n", confounded)


def _cell(r: dict) -> tuple:
    """What a row trained: method, draw, settings and, for a tuning trial, its grid point."""
    point = (r.get("tuning") or {}).get("point")
    return (r["method"], r["corpus"], r.get("size"), r.get("partition"), repr(sorted((r.get("overrides") or {}).items())),
            repr(sorted(point.items())) if isinstance(point, dict) else None)


def gpu_repeats(every: Sequence[dict], where: Dict[tuple, tuple]) -> Tuple[str, int]:
    """Every cell trained twice or more on the GPU, in any of ``every`` row's studies: whether
    its dev F1s agree, at which positions in their worker processes (``where``: `process_positions`
    of ``every``), and in
    how many the cells trained before it in its process differ: a repeat after another history
    that agrees says that history did not change that training. Returns the sentence and the
    number of such repeats that agree."""
    trained = {k: r for r in every for k in [(r.get("key"), r.get("finished"))] if k in where}
    processes: Dict[tuple, List[tuple]] = {}
    for k, (process, position) in where.items():
        processes.setdefault(process, []).append((position, _cell(trained[k])))
    before = {k: sorted((c for pos, c in processes[process] if pos < position), key=repr) for k, (process, position) in where.items()}
    cells: Dict[tuple, List[tuple]] = {}
    for k, r in trained.items():
        if device_kind(r) == "GPU" and r.get("status") == "ok":
            cells.setdefault(_cell(r), []).append(k)
    twice = [ks for ks in cells.values() if len(ks) > 1]
    if not twice:
        return "", 0

    def agrees(ks: List[tuple]) -> bool:
        return not differs([(_dev_f(trained[a]), _dev_f(trained[b])) for a, b in zip(ks, ks[1:])])

    agree = sum(agrees(ks) for ks in twice)
    placed = Counter("(" + ", ".join(str(p) for p in sorted(where[k][1] for k in ks)) + ")" for ks in twice)
    other_history = [ks for ks in twice if len({repr(before[k]) for k in ks}) > 1]
    agree_after_other = sum(agrees(ks) for ks in other_history)
    return (f"Every cell trained more than once on the GPU, in any study ({len(twice)}): the same dev F1 in {agree} of them; "
            "positions " + ", ".join(f"{label} x{n}" for label, n in placed.items())
            + f"; {len(other_history)} of them after different cells in each of its processes"
            + (f" ({', '.join(sorted({trained[ks[0]]['method'] for ks in other_history}))}), the same dev F1 in "
               f"{agree_after_other}" if other_history else "") + ".\n",
            agree_after_other)


def device_gap(every: Sequence[dict]) -> Tuple[Optional[float], int]:
    """How far a GPU and a CPU training of one cell lie apart: over every cell (`_cell`: method,
    draw, settings, grid point) with ok rows on both device kinds among ``every`` (each training
    once: `evidence.distinct`), the mean absolute difference of the kinds' mean dev F1s, and the
    number of such cells ((None, 0) without one)."""
    kinds: Dict[tuple, Dict[str, List[float]]] = {}
    for r in every:
        if r.get("status") == "ok" and _dev_f(r) is not None:
            kinds.setdefault(_cell(r), {}).setdefault(device_kind(r), []).append(_dev_f(r))
    gaps = [abs(sum(k["GPU"]) / len(k["GPU"]) - sum(k["CPU"]) / len(k["CPU"])) for k in kinds.values() if len(k) == 2]
    return (sum(gaps) / len(gaps) if gaps else None), len(gaps)


def process_check(text: str, source: str) -> str:
    """What a GPU lease's scripts/gpu_lease/process_check.py log (``text``, committed at
    ``source``) says about the GPU pairs that differ: its runs per process (JSON lines, each
    process closed by its "runs equal to run 1" line), the first process's run 1 against its
    later runs (the poisoned one among them) and against the first run of a fresh process."""
    import json

    processes: List[List[dict]] = [[]]
    for line in text.splitlines():
        if line.startswith("{"):
            processes[-1].append(json.loads(line))
        elif "runs equal to run 1" in line:
            processes.append([])
    first, fresh = processes[0], (processes[1] if len(processes) > 1 else [])
    if len(first) < 2 or not fresh:
        return ""

    def same(a: dict, b: dict) -> bool:
        return (a["dev_f"], a["weights"]) == (b["dev_f"], b["weights"])

    later, again = first[1:], fresh[0]
    plain = [r for r in later if not r["poisoned"]]
    poisoned = [r for r in later if r["poisoned"]]
    agree = all(same(r, later[0]) for r in later)
    told = (f"The process check (`scripts/gpu_lease/process_check.py`, its log `{source}`) trained one small cell of the "
            f"recipe's config {len(first)} times in one GPU process ({len(poisoned)} of them with every Python-level empty "
            f"array poisoned) and once in a fresh process: run 1 dev F1 {first[0]['dev_f']:.3f}, runs 2-{len(first)} "
            + (f"{later[0]['dev_f']:.3f} each, equal to each other (weights too)" if agree else "not all equal")
            + f", {'equal to' if same(later[0], first[0]) else 'unlike'} run 1; the fresh process's run 1 "
            f"{'repeated' if same(again, first[0]) else 'did not repeat'} run 1. ")
    if agree and not same(later[0], first[0]) and same(again, first[0]):
        return told + ("So on the GPU the first training in a process differs from the later ones, which agree with each "
                       "other, and a fresh process repeats the first: the position in the process is enough to make the GPU "
                       "pairs above differ (whether the two paths differ as well, only pairs at one position could tell), and "
                       "a GPU row is reproduced at its own position (first or later) in a worker process"
                       + ("; no Python code reads memory it never wrote (the poisoned run equals its neighbours)"
                          if poisoned and plain and all(same(p, plain[-1]) for p in poisoned) else "") + ". ")
    if all(same(r, first[0]) for r in later) and same(again, first[0]):
        return told + "So a GPU process's history does not change a training: the two paths differ. "
    return told + "It does not separate path from position. "


def self_training_guard(rows: Sequence[dict], draws: int, sizes: int, test: str) -> str:
    """What self-training's keep rests on: its p < 0.05 guard cannot fail where round 0 trains
    what `no_self_train` trains (the CPU pairs of `rows`, the ablation's reported rows: the
    recipe's dev F1 is its best round's, round 0 among them), how often the rule keeps it
    without any effect (`null_keep_rate` over the spec's `draws` and `sizes`), and `test`, the
    paired test on test rows that the keep stands on."""
    cpu = [(a, b) for a, b in _round_zero_rows(rows).get("CPU", [])]
    at_least = sum(1 for a, b in cpu if None not in (_dev_f(a), _dev_f(b)) and _dev_f(a) >= _dev_f(b) - 1e-9)
    return (f"its p < {ALPHA} guard cannot fail on a CPU pair: the recipe's dev F1 is its best round's on this dev sample, "
            f"round 0 among them, and on the CPU round 0 trains what `no_self_train` trains, so d is at least 0 there "
            f"({at_least} of the {len(cpu)} CPU cell pairs); without any effect the rule would keep self-training in "
            f"{100 * null_keep_rate(draws, sizes):.0f} % of ablations of {draws} draws of {sizes} sizes (simulated, "
            f"`trf_ablation.null_keep_rate`); so the keep stands on test instead: {test}")
