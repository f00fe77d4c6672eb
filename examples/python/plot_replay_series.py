"""The RSS of several allocators replaying one heap trace, on one figure,
from the CSV that `metatf-replay --series` writes, with the trace's live
bytes (what the program asked for) as the line beneath them all.

    metatf-replay --allocator glibc,jemalloc,tcmalloc,mimalloc --series series.csv heap.mtf
    python3 examples/python/plot_replay_series.py series.csv series.svg

With matplotlib installed the figure is drawn by it, in the format OUT's
extension names (.png, .svg, .pdf); without it, OUT must end in .svg and is
drawn here, line by line. Needs only Python's standard library otherwise.
"""
import csv
import sys
from collections import defaultdict

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def read_series(path):
    """{allocator: [(event, rss_bytes)]} and [(event, live_bytes)], in event order."""
    rss, live = defaultdict(list), {}
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        if rows.fieldnames != ["allocator", "event", "live_bytes", "rss_bytes"]:
            raise SystemExit(f"{path}: not a metatf-replay --series file (columns {rows.fieldnames})")
        for row in rows:
            event = int(row["event"])
            rss[row["allocator"]].append((event, int(row["rss_bytes"])))
            live[event] = int(row["live_bytes"])
    if not rss:
        raise SystemExit(f"{path}: no rows (a trace shorter than --every events?)")
    return dict(rss), sorted(live.items())


def plot_matplotlib(rss, live, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, points in rss.items():
        ax.plot([e for e, _ in points], [b / 2**20 for _, b in points], label=f"{name} RSS")
    ax.plot([e for e, _ in live], [b / 2**20 for _, b in live], "k--", label="live bytes (trace)")
    ax.set_xlabel("event")
    ax.set_ylabel("MiB")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out)


def plot_svg(rss, live, out, width=800, height=450, margin=60):
    """The same figure as plain SVG: one polyline per allocator and one, dashed, for the live bytes."""
    lines = [(f"{name} RSS", points, COLOURS[i % len(COLOURS)], "") for i, (name, points) in enumerate(rss.items())]
    lines.append(("live bytes (trace)", live, "#000000", ' stroke-dasharray="6,4"'))
    last = max(e for _, points, _, _ in lines for e, _ in points) or 1
    top = max(b for _, points, _, _ in lines for _, b in points) or 1
    x = lambda e: margin + (width - 2 * margin) * e / last
    y = lambda b: height - margin - (height - 2 * margin) * b / top
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{margin}" y1="{height - margin}" x2="{width - margin}" y2="{height - margin}" stroke="black"/>',
             f'<line x1="{margin}" y1="{margin}" x2="{margin}" y2="{height - margin}" stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 20}" text-anchor="middle">event (last: {last})</text>',
             f'<text x="10" y="{margin - 20}">MiB (top: {top / 2**20:.1f})</text>']
    for i, (label, points, colour, dash) in enumerate(lines):
        coords = " ".join(f"{x(e):.1f},{y(b):.1f}" for e, b in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} points="{coords}"><title>{label}</title></polyline>')
        parts.append(f'<text x="{width - margin - 150}" y="{margin + 18 * i}" fill="{colour}">{label}</text>')
    parts.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    source, out = sys.argv[1], sys.argv[2]
    rss, live = read_series(source)
    try:
        plot_matplotlib(rss, live, out)
        how = "matplotlib"
    except ImportError:
        if not out.endswith(".svg"):
            raise SystemExit(f"{out}: without matplotlib only an .svg figure can be drawn")
        plot_svg(rss, live, out)
        how = "plain SVG"
    peaks = ", ".join(f"{name} {max(b for _, b in points) / 2**20:.1f} MiB" for name, points in rss.items())
    print(f"{out}: {len(rss)} allocators ({how}); peak RSS {peaks}; peak live {max(b for _, b in live) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
