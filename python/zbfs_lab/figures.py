"""The report's figures (matplotlib, no display needed). Each function draws one figure from the
Results and saves it as PNG and SVG; it returns the file stem, or None when the results hold
nothing to draw (say, TEPS against scale from a sweep at one scale). Colours are fixed per phase
and per series position, so a phase looks the same in every figure."""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator  # noqa: E402

from zbfs_lab import __version__, files  # noqa: E402
from zbfs_lab.results import (BFS_PHASES, EXCHANGE_PHASES, MODELLED_PHASES, Results, codec_rows,  # noqa: E402
                              label, sort_key)

PHASE_COLOURS = {
    "local_expansion": "#4c72b0",
    "column_exchange": "#dd8452",
    "row_exchange": "#55a868",
    "predecessor_reduction": "#c44e52",
    "termination_check": "#8172b3",
    "validation": "#937860",
}
SERIES_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"]


def _footer(fig, results: Results, extra: str = "") -> None:
    fixed = " ".join(f"{k}={v}" for k, v in results.fixed().items())
    reps = sorted({len(p.runs) for p in results.points})
    text = (f"{results.experiment} | {results.software()}, zbfs-lab {__version__} | "
            f"medians of {'/'.join(map(str, reps))} run(s) | {fixed}{' | ' + extra if extra else ''}")
    fig.text(0.01, 0.005, text, fontsize=7, color="#555555", ha="left", va="bottom", wrap=True)


def _save(fig, out: Path, stem: str) -> str:
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    try:
        for ext in ("png", "svg"):
            files.write_with(out / f"{stem}.{ext}", lambda partial: fig.savefig(partial, dpi=120, format=ext))
    finally:
        plt.close(fig)
    return stem


def _legend_outside(ax) -> None:
    """The legend to the right of the axes, where it can cover no bar or line."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def _finish(fig, ax, results: Results, out: Path, stem: str, ylabel: str, title: str) -> str:
    ax.set_ylabel(ylabel)
    ax.set_title(title, wrap=True)
    _legend_outside(ax)
    _footer(fig, results)
    return _save(fig, out, stem)


def _integer_axis(ax, values: list, log2: bool) -> None:
    """Ticks at the values an integer parameter takes (ranks, scale), labelled as plain integers."""
    if log2:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(sorted(values)))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(v) for v in sorted(values)])
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


# Binary units for byte counts: the largest that keeps the biggest value at 1 or more.
BYTE_UNITS = [("bytes", 1), ("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40)]


def byte_unit(largest: float) -> tuple[str, float]:
    name, size = BYTE_UNITS[0]
    for unit in BYTE_UNITS:
        if largest >= unit[1]:
            name, size = unit
    return name, size


def _ordered_points(results: Results):
    keys = results.varying()
    order = ["ranks"] + [k for k in keys if k != "ranks"]
    return sorted(results.points, key=lambda p: tuple(sort_key(p.params.get(k)) for k in order)), keys


def _point_axis(ax, points, keys: list[str]) -> None:
    """One tick per point, named by the parameters that vary (one per line)."""
    ax.set_xticks(range(len(points)))
    if len(points) <= 6:
        ax.set_xticklabels([label(p.params, keys).replace(" ", "\n") for p in points], fontsize=7)
    else:  # many bars: one slanted line each, so neighbours do not overlap
        ax.set_xticklabels([label(p.params, keys) for p in points], fontsize=7, rotation=35, ha="right")


def time_breakdown(results: Results, out: Path) -> str | None:
    """Stacked bars: time per search in each BFS phase (slowest rank), one bar per point."""
    points, keys = _ordered_points(results)
    fig, ax = plt.subplots(figsize=(max(7.0, 0.6 * len(points) + 3), 4.5))
    bottoms = [0.0] * len(points)
    for phase in BFS_PHASES:
        heights = [p.phase_per_search(phase, "time_s") * 1e3 for p in points]
        ax.bar(range(len(points)), heights, bottom=bottoms, color=PHASE_COLOURS[phase], label=phase)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    _point_axis(ax, points, keys)
    return _finish(fig, ax, results, out, "time_breakdown", "time per search, ms (slowest rank)",
                   "BFS time per phase")


def _series(results: Results, x: str):
    """{series label: [(x value, point)]} over the points, series told apart by the other varying keys."""
    keys = [k for k in results.varying() if k != x]
    series: dict[str, list] = {}
    for p in results.points:
        series.setdefault(label(p.params, keys), []).append((p.params.get(x), p))
    return {name: sorted(pts, key=lambda t: sort_key(t[0])) for name, pts in sorted(series.items())}


def teps_vs(results: Results, out: Path, x: str) -> str | None:
    """Harmonic-mean TEPS against ranks (strong scaling: scale fixed per line) or against scale."""
    if len(results.values(x)) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for i, (name, pts) in enumerate(_series(results, x).items()):
        ax.plot([v for v, _ in pts], [p.teps() / 1e6 for _, p in pts], marker="o",
                color=SERIES_COLOURS[i % len(SERIES_COLOURS)], label=name)
    _integer_axis(ax, results.values(x), log2=x == "ranks")
    ax.set_title("Strong scaling: harmonic-mean TEPS against ranks" if x == "ranks" else
                 "Harmonic-mean TEPS against scale", wrap=True)
    ax.set_xlabel("MPI ranks" if x == "ranks" else "scale (log2 vertices)")
    ax.set_ylabel("harmonic-mean TEPS, millions")
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    _footer(fig, results)
    return _save(fig, out, f"teps_vs_{x}")


def weak_scaling(results: Results, out: Path) -> str | None:
    """TEPS against ranks with vertices per rank fixed: points where scale - log2(ranks) is the same."""
    groups: dict[str, list] = {}
    keys = [k for k in results.varying() if k not in ("ranks", "scale")]
    for p in results.points:
        ranks, scale = p.params.get("ranks"), p.params.get("scale")
        if not ranks or scale is None or ranks & (ranks - 1):
            continue
        per_rank = scale - int(math.log2(ranks))
        groups.setdefault(f"$2^{{{per_rank}}}$ vertices/rank {label(p.params, keys)}".strip(), []).append((ranks, p))
    groups = {k: sorted(v, key=lambda t: t[0]) for k, v in groups.items() if len({r for r, _ in v}) > 1}
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for i, (name, pts) in enumerate(sorted(groups.items())):
        ax.plot([r for r, _ in pts], [p.teps() / 1e6 for _, p in pts], marker="s",
                color=SERIES_COLOURS[i % len(SERIES_COLOURS)], label=name)
    _integer_axis(ax, sorted({r for pts in groups.values() for r, _ in pts}), log2=True)
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("harmonic-mean TEPS, millions")
    ax.set_title("Weak scaling: vertices per rank fixed", wrap=True)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    _footer(fig, results)
    return _save(fig, out, "teps_weak_scaling")


def traffic(results: Results, out: Path) -> str | None:
    """Raw against wire bytes per search for each exchange phase, one panel per phase."""
    phases = [ph for ph in EXCHANGE_PHASES if any(p.phase_per_search(ph, "raw_bytes", "sum") for p in results.points)]
    if not phases:
        return None
    points, keys = _ordered_points(results)
    fig, axes = plt.subplots(len(phases), 1, figsize=(max(7.0, 0.6 * len(points) + 3), 2.6 * len(phases)),
                             squeeze=False)
    for ax, phase in zip(axes[:, 0], phases):
        raw = [p.phase_per_search(phase, "raw_bytes", "sum") for p in points]
        wire = [p.phase_per_search(phase, "wire_bytes", "sum") for p in points]
        # Each panel in the unit its own numbers read best in (the phases differ by 1000x).
        unit, size = byte_unit(max(raw + wire))
        raw = [r / size for r in raw]
        wire = [w / size for w in wire]
        xs = range(len(points))
        ax.bar([x - 0.2 for x in xs], raw, width=0.4, color=PHASE_COLOURS[phase], alpha=0.35, label="raw")
        ax.bar([x + 0.2 for x in xs], wire, width=0.4, color=PHASE_COLOURS[phase], label="on the wire")
        for x, r, w in zip(xs, raw, wire):
            if r > 0:
                ax.annotate(f"{(1 - w / r) * 100:.0f}%", (x + 0.2, w), ha="center", va="bottom", fontsize=6)
        ax.set_title(f"{phase}: bytes per search, all ranks (label: reduction)", fontsize=9, wrap=True)
        ax.set_ylabel(unit)
        ax.margins(y=0.2)  # room for the labels above the tallest bars
        _point_axis(ax, points, keys)
        _legend_outside(ax)
    _footer(fig, results)
    return _save(fig, out, "traffic")


def codecs(results: Results, out: Path) -> str | None:
    """Bits per id of each codec against the data's empirical entropy, per dataset (codec benchmark)."""
    if not results.codec_bench:
        return None
    rows = codec_rows(results.codec_bench)
    if not rows:
        return None
    datasets = sorted({r.dataset for r in rows})
    names = sorted({r.codec for r in rows if r.codec != "none"})  # none is 64 bits per id everywhere
    fig, ax = plt.subplots(figsize=(max(7.0, 0.9 * len(datasets) + 3), 4.8))
    width = 0.8 / len(names)
    for i, codec in enumerate(names):
        by = {r.dataset: r for r in rows if r.codec == codec}
        ax.bar([d + (i - len(names) / 2 + 0.5) * width for d in range(len(datasets))],
               [min(by[ds].bits_per_id, 64) if ds in by else 0 for ds in datasets], width=width,
               color=SERIES_COLOURS[i % len(SERIES_COLOURS)], label=codec)
    entropy = {r.dataset: r.entropy for r in rows}
    # One short line across each dataset's bars (a scatter marker that long overran its legend text).
    ax.hlines([entropy[d] for d in datasets], [x - 0.45 for x in range(len(datasets))],
              [x + 0.45 for x in range(len(datasets))], colors="black", linewidth=2, zorder=3,
              label="empirical entropy")
    ax.set_xticks(range(len(datasets)))
    ax.set_xticklabels([d.replace(" ", "\n") for d in datasets], fontsize=7)
    ax.set_ylabel("bits per id (uncompressed: 64)")
    ax.set_title("Codecs: bits per id against the data's entropy", wrap=True)
    _legend_outside(ax)
    _footer(fig, results, "zbfs_codec_bench, one thread")
    return _save(fig, out, "codecs")


def model_vs_measured(results: Results, out: Path) -> str | None:
    """Time in MPI for the modelled exchanges against the network model's time, per point and network."""
    points, keys = _ordered_points(results)
    measured = [sum(p.phase_per_search(ph, "mpi_time_s") for ph in MODELLED_PHASES) * 1e3 for p in points]
    modelled = [sum(p.phase_per_search(ph, "modelled_time_s") for ph in MODELLED_PHASES) * 1e3 for p in points]
    if not any(measured) and not any(modelled):
        return None
    fig, ax = plt.subplots(figsize=(max(7.0, 0.6 * len(points) + 3), 4.5))
    xs = range(len(points))
    ax.bar([x - 0.2 for x in xs], measured, width=0.4, color="#4c72b0", label="measured (in MPI)")
    ax.bar([x + 0.2 for x in xs], modelled, width=0.4, color="#dd8452", label="modelled")
    _point_axis(ax, points, keys)
    return _finish(fig, ax, results, out, "model_vs_measured", "ms per search (slowest rank)",
                   "Exchanges: modelled against measured time")
