"""`zbfs-lab report RESULTS_DIR -o OUT`: figures (PNG and SVG), Markdown tables, report.json (every
table's numbers, for tools and tests) and an index.html that shows them together."""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from pathlib import Path

from zbfs_lab import __version__, figures, files
from zbfs_lab.results import (BFS_PHASES, EXCHANGE_PHASES, MODELLED_PHASES, Results, codec_rows, kernel_summary,
                              label)


@dataclass
class Table:
    name: str
    title: str
    note: str
    columns: list[str]
    rows: list[list]

    def formatted_rows(self) -> list[list[str]]:
        """The rows as text, each column of numbers in one format (see column_format)."""
        formats = [column_format([row[i] for row in self.rows]) for i in range(len(self.columns))]
        return [[fmt(v) for fmt, v in zip(formats, row)] for row in self.rows]

    def markdown(self) -> str:
        lines = [f"## {self.title}", "", self.note, "", "| " + " | ".join(self.columns) + " |",
                 "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in self.formatted_rows()]
        return "\n".join(lines) + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
                       for row in self.formatted_rows())
        return (f"<h3>{html.escape(self.title)}</h3><p>{html.escape(self.note)}</p>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def column_format(values: list):
    """One format for a column's numbers, so that they line up and compare at a glance: whole
    numbers with thousands separators; else a fixed number of decimals, as many as give the
    smallest non-zero value three significant digits (at most six). Not a number: "-"."""
    numbers = [float(v) for v in values if _is_number(v) and math.isfinite(v)]
    if all(v.is_integer() for v in numbers):
        decimals = 0
    else:
        smallest = min((abs(v) for v in numbers if v != 0), default=1.0)
        decimals = max(0, min(6, 2 - math.floor(math.log10(smallest))))

    def fmt(value) -> str:
        if not _is_number(value):
            return str(value)
        if not math.isfinite(value):
            return "-"
        return f"{value:,.{decimals}f}"
    return fmt


def _validate_time_s(run) -> float:
    """A run's mean validation time per search; NaN (shown as -) for a run with --no-validate,
    whose record has none."""
    validate = kernel_summary(run.record).get("validate_time_s")
    return validate["mean"] if validate else math.nan


def _points_table(results: Results) -> Table:
    keys = results.varying() or ["ranks"]
    rows = []
    for p in results.points:
        rows.append([label(p.params, keys), len(p.runs), p.teps() / 1e6, p.bfs_time_per_search() * 1e3,
                     p.median(_validate_time_s) * 1e3])
    return Table("summary", "Runs", "One row per matrix point; medians over its repetitions.",
                 ["point", "runs", "harmonic-mean MTEPS", "BFS ms per search", "validation ms per search"], rows)


def _breakdown_table(results: Results) -> Table:
    keys = results.varying() or ["ranks"]
    rows = [[label(p.params, keys)] + [p.phase_per_search(ph, "time_s") * 1e3 for ph in BFS_PHASES]
            for p in results.points]
    return Table("time_breakdown", "Time per phase",
                 "Milliseconds per search on the slowest rank (phase time_s max over ranks / searches).",
                 ["point"] + BFS_PHASES, rows)


def _traffic_table(results: Results) -> Table:
    keys = results.varying() or ["ranks"]
    rows = []
    for p in results.points:
        for ph in EXCHANGE_PHASES:
            raw = p.phase_per_search(ph, "raw_bytes", "sum")
            wire = p.phase_per_search(ph, "wire_bytes", "sum")
            if raw == 0 and wire == 0:
                continue
            rows.append([label(p.params, keys), ph, raw, wire, (1 - wire / raw) * 100 if raw else math.nan,
                         p.phase_per_search(ph, "messages", "sum")])
    return Table("traffic", "Traffic per phase",
                 "Bytes and messages per search, summed over ranks: raw (what the plain exchange sends) and on "
                 "the wire (after codecs); reduction = 1 - wire/raw.",
                 ["point", "phase", "raw bytes", "wire bytes", "reduction %", "messages"], rows)


def _model_table(results: Results) -> Table:
    keys = results.varying() or ["ranks"]
    rows = []
    for p in results.points:
        measured = sum(p.phase_per_search(ph, "mpi_time_s") for ph in MODELLED_PHASES)
        modelled = sum(p.phase_per_search(ph, "modelled_time_s") for ph in MODELLED_PHASES)
        rows.append([label(p.params, keys), p.params.get("network", "?"), measured * 1e3, modelled * 1e3,
                     modelled / measured if measured else math.nan])
    return Table("model", "Modelled against measured communication",
                 "Column, row and predecessor exchanges, ms per search on the slowest rank: time inside MPI "
                 "calls, and the alpha-beta model's time for the same traffic on the run's network.",
                 ["point", "network", "measured ms", "modelled ms", "model / measured"], rows)


def _codec_tables(results: Results) -> list[Table]:
    tables = []
    if results.codec_bench:
        rows = [[r.dataset, r.codec, r.ratio, r.bits_per_id, r.entropy, r.encode_mids, r.decode_mids]
                for r in codec_rows(results.codec_bench)]
        if rows:
            tables.append(Table("codecs", "Codecs (zbfs_codec_bench)",
                                "Per dataset (synthetic sets and the frontiers a run recorded) and codec: wire "
                                "bytes over raw 64-bit bytes, bits per id against the data's empirical entropy, "
                                "and speed in millions of ids per second (one thread).",
                                ["dataset", "codec", "ratio", "bits/id", "entropy bits", "encode Mids/s",
                                 "decode Mids/s"], rows))
    if "codec" in results.varying():
        keys = results.varying()
        rows = []
        for p in results.points:
            raw = sum(p.phase_per_search(ph, "raw_bytes", "sum") for ph in EXCHANGE_PHASES)
            wire = sum(p.phase_per_search(ph, "wire_bytes", "sum") for ph in EXCHANGE_PHASES)
            ids = sum(p.phase_per_search(ph, "id_bytes", "sum") for ph in EXCHANGE_PHASES) / 8
            encode = sum(p.phase_per_search(ph, "encode_time_s", "sum") for ph in EXCHANGE_PHASES)
            decode = sum(p.phase_per_search(ph, "decode_time_s", "sum") for ph in EXCHANGE_PHASES)
            rows.append([label(p.params, keys), wire / raw if raw else math.nan,
                         wire * 8 / ids if ids else math.nan, ids / encode / 1e6 if encode else math.nan,
                         ids / decode / 1e6 if decode else math.nan])
        tables.append(Table("codecs_in_runs", "Codecs in the runs",
                            "All exchanges of a search: wire over raw bytes, wire bits per exchanged id, and the "
                            "ids encoded and decoded per second of codec time (all ranks).",
                            ["point", "ratio", "bits/id", "encode Mids/s", "decode Mids/s"], rows))
    return tables


FIGURES = [
    ("time_breakdown", "Time per phase", lambda r, o: figures.time_breakdown(r, o)),
    ("teps_vs_ranks", "TEPS against ranks (strong scaling)", lambda r, o: figures.teps_vs(r, o, "ranks")),
    ("teps_weak_scaling", "TEPS against ranks (weak scaling)", lambda r, o: figures.weak_scaling(r, o)),
    ("teps_vs_scale", "TEPS against scale", lambda r, o: figures.teps_vs(r, o, "scale")),
    ("traffic", "Traffic per phase, raw and on the wire", lambda r, o: figures.traffic(r, o)),
    ("codecs", "Codecs: bits per id and entropy", lambda r, o: figures.codecs(r, o)),
    ("model_vs_measured", "Model against measurement", lambda r, o: figures.model_vs_measured(r, o)),
]


def write(results: Results, out: str | Path) -> dict:
    """Writes the report into `out`; returns what report.json holds."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise files.WriteError(f"cannot make the report folder {out}: {e.strerror}") from None
    drawn = []
    for stem, title, draw in FIGURES:
        if draw(results, out):
            drawn.append((stem, title))
    tables = [_points_table(results), _breakdown_table(results), _traffic_table(results), _model_table(results),
              *_codec_tables(results)]
    for t in tables:
        files.write_text(out / f"{t.name}.md", t.markdown())
    data = {
        "experiment": results.experiment,
        "results": str(results.folder),
        "zbfs_lab_version": __version__,
        "software": results.software(),
        "fixed": results.fixed(),
        "varying": results.varying(),
        "figures": [stem for stem, _ in drawn],
        "failures": results.failures,
        "tables": {t.name: {"columns": t.columns, "rows": t.rows} for t in tables},
    }
    files.write_text(out / "report.json", json.dumps(data, indent=1, default=str))
    files.write_text(out / "index.html", _index(results, drawn, tables))
    return data


def _index(results: Results, drawn: list[tuple[str, str]], tables: list[Table]) -> str:
    fixed = ", ".join(f"{k} = {v}" for k, v in results.fixed().items())
    failures = ""
    if results.failures:
        failures = ("<p class=warn>" + str(len(results.failures)) + " run(s) failed: " +
                    ", ".join(html.escape(f) for f in results.failures) + "</p>")
    figs = "".join(f'<figure><a href="{s}.svg"><img src="{s}.png" alt="{html.escape(t)}"></a>'
                   f"<figcaption>{html.escape(t)} (<a href=\"{s}.svg\">SVG</a>)</figcaption></figure>"
                   for s, t in drawn)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(results.experiment)}: zbfs report</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
figure {{ display: inline-block; margin: 1em; vertical-align: top; }}
img {{ max-width: 46vw; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; font-size: 0.85em; }}
td, th {{ border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }}
.warn {{ color: #a00; }}
</style></head><body>
<h1>{html.escape(results.experiment)}</h1>
<p>{html.escape(results.software())}, zbfs-lab {__version__}; {len(results.points)} point(s),
{len(results.runs)} run(s) from <code>{html.escape(str(results.folder))}</code>. Same in every run: {html.escape(fixed)}.</p>
{failures}
<h2>Figures</h2>
{figs}
<h2>Tables</h2>
{"".join(t.html() for t in tables)}
</body></html>
"""
