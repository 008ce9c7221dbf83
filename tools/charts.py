"""Draw the charts docs/benchmarks.md shows, from the committed results, with matplotlib.

    python3 tools/charts.py --compare results/compare.json --retention results/retention-scripted.json

writes results/compare.svg (bytes per case for raw, each Lens level and rtk, on a
log scale, with a cross where an arm lost the needle and the share of names each
kept) and results/retention-scripted.svg (per task, the median session cost
against raw and the success rate of each variant, with the bootstrap interval of
the cost ratio). Charts are drawn from the JSON only, like every table.
Needs matplotlib (pip install matplotlib); `make charts` runs it.
"""

import argparse
import json
import random
import statistics
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ARMS = [
    ("raw", "raw", "#9e9e9e"),
    ("lens-2", "Lens level 2", "#1f77b4"),
    ("lens-1", "Lens level 1", "#6baed6"),
    ("lens-0", "Lens level 0", "#c6dbef"),
    ("rtk", "rtk", "#ff7f0e"),
]


def compare_chart(path: Path, out: Path) -> None:
    data = json.loads(path.read_text())
    overlap = [c for c in data["cases"] if c["table"] == "overlap"]
    cases = overlap + [c for c in data["cases"] if c["table"] != "overlap"]
    fig, ax = plt.subplots(figsize=(13, 5.5))
    width = 0.16
    for k, (arm, label, color) in enumerate(ARMS):
        xs, ys, lost = [], [], []
        for i, c in enumerate(cases):
            m = next((a["measure"] for a in c["arms"] if a["name"] == arm), None)
            if arm == "raw":
                m = {"bytes": c["raw_bytes"], "needle": True, "names_kept": c["names_total"]}
            if not m:
                continue
            x = i + (k - 2) * width
            y = max(m["bytes"], 1)
            xs.append(x)
            ys.append(y)
            if not m["needle"]:
                lost.append((x, y))
            if arm in ("lens-2", "rtk"):
                # The names the view kept, of the raw output's, above the bar.
                ax.text(
                    x,
                    y * 1.12,
                    f"{m['names_kept']}/{c['names_total']}",
                    rotation=90,
                    fontsize=6,
                    ha="center",
                    va="bottom",
                )
        ax.bar(xs, ys, width, label=label, color=color, edgecolor="#333333", linewidth=0.3)
        if lost:
            ax.scatter(
                [p[0] for p in lost],
                [p[1] * 1.35 for p in lost],
                marker="x",
                color="#d62728",
                s=28,
                zorder=3,
                label="needle lost" if k == 1 else None,
            )
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 4)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels(
        [c["name"] + ("" if c["table"] == "overlap" else " *") for c in cases], fontsize=8, rotation=30, ha="right"
    )
    if len(overlap) < len(cases):
        ax.axvline(len(overlap) - 0.5, color="#333333", linewidth=0.6, linestyle=":")
    ax.set_ylabel("bytes the agent reads (log scale)")
    ax.set_title(
        f"compare ({data['mode']}) at {data['git_revision'][:12]}: bytes per case; "
        "x = needle lost; n/m above Lens level 2 and rtk = names kept; * = only Lens claims it"
    )
    ax.legend(fontsize=8, ncol=6, loc="upper right")
    ax.grid(axis="y", which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def bootstrap(ratios, seed=20261130, n=2000):
    rng = random.Random(seed)
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(n))
    return meds[int(0.025 * n)], meds[int(0.975 * n) - 1]


def retention_chart(path: Path, out: Path) -> None:
    data = json.loads(path.read_text())
    cells = [c for c in data["cells"] if not c.get("excluded")]
    tasks = sorted({c["task"] for c in cells})
    variants = [v for v in ["raw", "level2", "level1", "level0", "rtk"] if any(c["variant"] == v for c in cells)]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    colors = {"raw": "#9e9e9e", "level2": "#1f77b4", "level1": "#6baed6", "level0": "#c6dbef", "rtk": "#ff7f0e"}
    width = 0.16
    for k, v in enumerate(variants):
        xs, ratio, lo, hi, success = [], [], [], [], []
        for i, t in enumerate(tasks):
            raw = {c["repeat"]: c["tokens_total"] for c in cells if c["task"] == t and c["variant"] == "raw"}
            mine = [c for c in cells if c["task"] == t and c["variant"] == v]
            if not mine or not raw:
                continue
            rs = [c["tokens_total"] / raw[c["repeat"]] for c in mine if raw.get(c["repeat"])]
            if not rs:
                continue
            med = statistics.median(rs)
            a, b = bootstrap(rs)
            xs.append(i + (k - 2) * width)
            ratio.append(med)
            lo.append(med - a)
            hi.append(b - med)
            success.append(100 * sum(c["success"] for c in mine) / len(mine))
        axes[0].bar(
            xs, ratio, width, yerr=[lo, hi], capsize=2, color=colors[v], edgecolor="#333333", linewidth=0.3, label=v
        )
        axes[1].bar(xs, success, width, color=colors[v], edgecolor="#333333", linewidth=0.3, label=v)
    for ax in axes:
        ax.set_xticks(range(len(tasks)))
        ax.set_xticklabels(tasks, fontsize=8)
    axes[0].axhline(1.0, color="#333333", linewidth=0.6)
    axes[0].set_ylabel("median session tokens / raw (95% bootstrap interval)")
    axes[1].set_ylabel("tasks verified done (%)")
    axes[1].set_ylim(0, 105)
    sim = " (SIMULATION: the scripted agent)" if data.get("simulation") else ""
    fig.suptitle(f"retention, driver {data['driver']}{sim}, at {data['git_revision'][:12]}")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--retention", type=Path)
    parser.add_argument("--png", action="store_true", help="also write PNG copies, to look at")
    args = parser.parse_args()
    for src, draw in [(args.compare, compare_chart), (args.retention, retention_chart)]:
        if src:
            out = src.with_suffix(".svg")
            draw(src, out)
            print(f"wrote {out}")
            if args.png:
                png = Path("out") / src.with_suffix(".png").name
                png.parent.mkdir(exist_ok=True)
                draw(src, png)
                print(f"wrote {png}")


if __name__ == "__main__":
    main()
