"""Rewrite the generated sections of the README and docs/ from the committed results.

The compare table comes from `compare --render results/compare.json` (the JSON is
the record, the table is rendered from it), the performance lines from
results/overhead.json, the reliability lines from results/reliability.json and
the retention tables from `harness report`, the session tables from `harness
session report results/session-scripted.json`, the transcripts tables from
`harness transcripts` over the committed real transcripts; the microVM runs'
tables from results/compare-vm.json and results/retention-vm.json when they exist. The README's headline
numbers come from the same files. Each section sits between `<!-- NAME:begin -->`
and `<!-- NAME:end -->` markers in exactly one of the files given (the README or a
page of docs/); nothing outside them is touched. `--check` rewrites nothing and
fails, naming the file and section, when a section differs from what its results
file renders (harness/tests/docs.rs runs it).
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path


def block(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)


def splice(texts: dict, name: str, body: str) -> None:
    """Put `body` in the one file of `texts` (path -> text) holding the NAME block;
    note the block in `STALE` when that changes it."""
    pattern = block(name)
    holders = [path for path, text in texts.items() if pattern.search(text)]
    if len(holders) != 1:
        where = "none" if not holders else ", ".join(str(h) for h in holders)
        sys.exit(
            f"readme_table: the <!-- {name}:begin --> ... <!-- {name}:end --> block must be in exactly one of"
            f" {', '.join(str(p) for p in texts)} (found in {where}); keep one"
        )
    path = holders[0]
    new = pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), texts[path])
    if new != texts[path]:
        STALE.append((path, name))
    texts[path] = new


STALE: list = []


def median(xs: list) -> float:
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def headline(args: argparse.Namespace) -> str:
    """The README's few numbers, each linked to its results file and its page."""
    bench = "docs/benchmarks.md"
    c = json.loads(args.results.read_text())
    overlap = [case for case in c["cases"] if case["table"] == "overlap"]

    def arm(case: dict, name: str) -> dict:
        return next(a["measure"] for a in case["arms"] if a["name"] == name)

    raw = sum(case["raw_bytes"] for case in overlap)
    lens = sum(arm(case, "lens-2")["bytes"] for case in overlap)
    rtk = sum(arm(case, "rtk")["bytes"] for case in overlap)
    lens_needles = sum(arm(case, "lens-2")["needle"] for case in overlap)
    rtk_needles = sum(arm(case, "rtk")["needle"] for case in overlap)
    lines = [
        f"- **Compare** ([{args.results}]({args.results}), [how]({bench}#compare-lens-against-raw-output-and-rtk)):"
        f" on the {len(overlap)} commands both Lens and rtk claim, Lens level 2 prints {lens:,} of {raw:,} raw"
        f" bytes and rtk {rtk:,} ({lens / rtk:.2f}x rtk's); the needle, what the command was run for, is in"
        f" {lens_needles} of Lens's views and {rtk_needles} of rtk's."
    ]
    if args.retention.exists():
        r = json.loads(args.retention.read_text())
        cells = [cell for cell in r["cells"] if cell.get("excluded") is None]
        tasks = sorted({cell["task"] for cell in cells})

        def tokens(task: str, variant: str) -> list:
            return [cell["tokens_total"] for cell in cells if cell["task"] == task and cell["variant"] == variant]

        ratios = [median(tokens(t, "level2")) / median(tokens(t, "raw")) for t in tasks]
        level2 = [cell for cell in cells if cell["variant"] == "level2"]
        raws = [cell for cell in cells if cell["variant"] == "raw"]
        lines.append(
            f"- **Retention** ([{args.retention}]({args.retention}),"
            f" [how]({bench}#retention-does-the-agent-still-finish); the scripted agent, a simulation):"
            f" on {len(tasks)} tasks the agent reading level 2 finishes {sum(x['success'] for x in level2)} of"
            f" {len(level2)} cells (raw: {sum(x['success'] for x in raws)} of {len(raws)}) at"
            f" {min(ratios):.2f}-{max(ratios):.2f} of raw's median tokens."
        )
    if args.session.exists():
        s = json.loads(args.session.read_text())
        runs = [run for run in s["runs"] if run.get("excluded") is None]
        by_pair: dict = {}
        for run in runs:
            by_pair.setdefault((run["session"], run["pair"]), {})[run["arm"]] = run["tool_result_bytes"]
        per_session: dict = {}
        for (session, _), arms in by_pair.items():
            if "raw" in arms and "lens" in arms and arms["raw"]:
                per_session.setdefault(session, []).append(arms["lens"] / arms["raw"])
        ratios = [median(v) for v in per_session.values()]
        lines.append(
            f"- **Sessions** ([{args.session}]({args.session}), [how]({bench}#sessions-the-paired-benchmark);"
            f" simulation): over {len(per_session)} paired sessions the tool results an agent reads through Lens are"
            f" {min(ratios):.2f}-{max(ratios):.2f} of the raw bytes."
        )
    if args.overhead.exists():
        o = json.loads(args.overhead.read_text())
        gs, tp = o["git_status"], o["throughput"]
        floor = ""
        if gs.get("lens_over_floor"):
            floor = f"{gs['lens_over_floor']}x the time of a wrapper that only spawns and copies, "
        lines.append(
            f"- **Overhead** ([{args.overhead}]({args.overhead}), [how]({bench}#performance)): `lens git status`"
            f" takes {floor}{gs['lens_over_git']}x `git status`'s; the level-2 pipeline filters"
            f" {tp['level2_pipeline_mb_per_s']} MB/s on {tp['threads']} threads."
        )
    if args.reliability.exists():
        r = json.loads(args.reliability.read_text())
        parts = []
        big = r.get("big")
        if big:
            identical = all(t["show_identical"] for t in big["throughput"])
            parts.append(
                f"a GiB through `lens cat` at a peak RSS of at most {big['lens_peak_rss_mib']:.1f} MiB,"
                f" `lens show` {'byte for byte' if identical else 'NOT identical'}"
            )
        fuzz = r.get("fuzz")
        if fuzz:
            o = fuzz["outcome"]
            parts.append(
                f"{o['executions']:,} fuzzed inputs, {o['panics']} panics, {o['violations']} invariant violations"
            )
        if parts:
            lines.append(
                f"- **Reliability** ([{args.reliability}]({args.reliability}), [how](docs/reliability.md)): "
                + "; ".join(parts)
                + "."
            )
    return "\n".join(lines) + "\n"


def rss_label(key: str) -> str:
    """`git git status` -> `git status`, `floor git status` -> `spawn-floor git status`."""
    arm, _, command = key.partition(" ")
    name = {"git": "", "floor": "spawn-floor "}.get(arm, arm + " ")
    return f"`{name}{command}`"


def throughput(tp: dict) -> str:
    mb = int(tp["input"].split()[0]) >> 20
    return (
        f"- The level-2 pipeline filters {tp['level2_pipeline_mb_per_s']} MB/s on a {mb} MB log"
        f" with its per-line work on {tp['threads']} threads (best of {tp['best_of']} runs;"
        f" median {tp['median_mb_per_s']}), and {tp['one_thread_mb_per_s']} MB/s on one"
        f" (median {tp['one_thread_median_mb_per_s']})."
    )


def performance(path: Path) -> str:
    o = json.loads(path.read_text())
    gs, cb, tp = o["git_status"], o["cargo_build_noop"], o["throughput"]
    ms = gs["median_ms"]
    lines = [
        f"Measured by `{o['command']}` at {o['git_revision'][:12]} on {o['date'][:10]}"
        f" ({o['machine']['cores']} cores, {o['machine']['cpu']}); {o['method']}.",
        "",
        f"- `lens git status` takes {gs['lens_over_git']}x the time of `git status`"
        f" ({ms['lens']} ms against {ms['git']} ms, {gs['repo']}).",
    ]
    if gs.get("lens_over_floor") is not None:
        lines.append(
            f"- A wrapper that only spawns, pipes and copies (`spawn-floor`) takes {ms['floor']} ms,"
            f" {gs['floor_over_git']}x `git status`: the cost of any wrapper on this machine."
            f" Lens takes {gs['lens_over_floor']}x the floor's time."
        )
    if gs.get("lens_over_rtk") is not None:
        lines.append(f"- `rtk git status` takes {ms['rtk']} ms: Lens runs in {gs['lens_over_rtk']}x rtk's time.")
    lines += [
        f"- A no-op `lens cargo build` takes {cb['lens_over_cargo']}x the time of `cargo build`"
        f" ({cb['median_ms']['lens']} ms against {cb['median_ms']['cargo']} ms).",
        "- Peak RSS: " + ", ".join(f"{rss_label(k)} {v / 1024:.1f} MiB" for k, v in o["peak_rss_kib"].items()) + ".",
        throughput(tp),
    ]
    for size, h in o.get("after_tool_hook", {}).items():
        m = h["median_ms"]
        lines.append(
            f"- The after-tool hook (`lens hook claude`) answers a {h['event_bytes']:,}-byte ({size}) event in"
            f" {m['lens']} ms, {h['lens_minus_read_only_ms']} ms more than a hook that only reads its input"
            f" ({m['read_only']} ms; {h['lens_over_read_only']}x)."
        )
    return "\n".join(lines) + "\n"


def reliability(path: Path) -> str:
    """The big-output and fuzz records of results/reliability.json, as lines."""
    r = json.loads(path.read_text())
    lines = []
    big = r.get("big")
    if big:
        lines += [
            f"Measured by `{big['command']}` at {big['git_revision'][:12]} on {big['date'][:10]}"
            f" ({big['machine']['cores']} cores, {big['machine']['cpu']}; {big['tools']['rtk'] or 'no rtk'}).",
            "",
            "| output through `lens cat` | bytes | `cat` into a file (median / best) | Lens (median / best)"
            " | Lens / cat (median / best) | Lens peak RSS | view | `lens show` identical |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for t in big["throughput"]:
            lines.append(
                f"| {t['input']} | {t['bytes']:,} | {t['cat_secs']:.2f} / {t['cat_best_secs']:.2f} s"
                f" | {t['lens_secs']:.2f} / {t['lens_best_secs']:.2f} s | {t['ratio']:.2f}x / {t['best_ratio']:.2f}x"
                f" | {t['lens_rss_mib']:.1f} MiB | {t['view_bytes']} B | {'yes' if t['show_identical'] else 'NO'} |"
            )
        captured = big.get("captured") or []
        if captured:
            lines += [
                "",
                "| the same output, as an agent's (64-byte lines) | bytes | `cat` into a file (median / best)"
                " | Lens (median / best) | Lens / cat (median / best) | Lens peak RSS | answer"
                " | `lens show` identical |",
                "|---|---:|---:|---:|---:|---:|---:|---|",
            ]
            for t in captured:
                lines.append(
                    f"| `{t['path']}` | {t['bytes']:,} | {t['cat_secs']:.2f} / {t['cat_best_secs']:.2f} s"
                    f" | {t['lens_secs']:.2f} / {t['lens_best_secs']:.2f} s"
                    f" | {t['ratio']:.2f}x / {t['best_ratio']:.2f}x | {t['lens_rss_mib']:.1f} MiB"
                    f" | {t['view_bytes']} B | {'yes' if t['show_identical'] else 'NO'} |"
                )
        s = big["seq"]
        lines += [
            "",
            f"- `{s['argv']}`: {s['raw_secs']:.2f} s into a file, {s['lens_secs']:.2f} s through Lens,"
            f" peak RSS {s['lens_rss_mib']:.1f} MiB; `lens show` identical: {'yes' if s['show_identical'] else 'NO'}.",
        ]
        for log in big["cargo_logs"]:
            arms = {a["arm"]: a for a in log["arms"]}
            parts = []
            for name, a in arms.items():
                kept = "keeps the error on the last line" if a["error_kept"] else "loses the error on the last line"
                note = f" (it prints {a['truncation_notice']!r})" if a["truncation_notice"] else ""
                parts.append(
                    f"{name} {a['secs'] * 1000:.0f} ms, {a['rss_mib']:.1f} MiB, {a['view_bytes']:,} bytes, {kept}{note}"
                )
            ratio = log.get("lens_time_over_rtk")
            tail = f"; Lens takes {ratio}x rtk's time" if ratio is not None else ""
            lines.append(
                f"- A {log['megabytes']} MB cargo log ({log['warnings']} warnings, one error) through a `cargo` shim,"
                f" median of {log['runs']}: " + "; ".join(parts) + tail + "."
            )
        lines.append(f"- Lens's highest peak RSS over these runs: {big['lens_peak_rss_mib']:.1f} MiB.")
        p = big.get("process")
        if p:
            mib = 1 << 20
            lines += [
                "",
                "As a process, with Lens's defaults (a 256 MiB store bound per run):",
                "",
                f"- `lens yes` whose reader closes: exit {p['closed_reader_exit_code']}"
                f" {p['closed_reader_exit_secs']:.3f} s after the close,"
                f" {p['closed_reader_stored_bytes'] / mib:.0f} MiB stored.",
            ]
            if "head_one_secs" in p:
                lines.append(
                    f"- `lens yes | head -1`: exit {p['head_one_exit_code']} after {p['head_one_secs']:.3f} s,"
                    f" {p['head_one_stored_bytes'] / mib:.0f} MiB stored."
                )
            lines += [
                f"- {p['bound_input_bytes'] / mib:,.0f} MiB through one run: {p['bound_stored_bytes'] / mib:.0f} MiB"
                f" stored; the view names the lines not stored: {'yes' if p['bound_notice'] else 'NO'}.",
                f"- A run killed outright (SIGKILL) after 1,000 lines: the next run names it and `lens show` gives back"
                f" all 1,000 lines: {'yes' if p['killed_recovered'] else 'NO'} (that run took"
                f" {p['killed_next_run_secs'] * 1000:.0f} ms).",
                f"- {p['errors_bytes'] / mib:,.0f} MiB of error lines, half on each stream: Lens's peak RSS"
                f" {p['errors_rss_mib']:.1f} MiB"
                + (
                    f" (the highest of {len(p['errors_rss_runs_mib'])} runs: "
                    + ", ".join(f"{x:.1f}" for x in p["errors_rss_runs_mib"])
                    + " MiB)"
                    if p.get("errors_rss_runs_mib")
                    else ""
                )
                + ".",
            ]
    fuzz = r.get("fuzz")
    if fuzz:
        o = fuzz["outcome"]
        lines += [
            "",
            f"Fuzzing (`{fuzz['command']}` at {fuzz['git_revision'][:12]}, seed {fuzz['seed']}):"
            f" {o['executions']:,} generated inputs in {fuzz['seconds']} s, {o['panics']} panics,"
            f" {o['violations']} invariant violations. Checked: {fuzz['checks']}."
            + (f" Bases: {fuzz['corpus']}." if fuzz.get("corpus") else ""),
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("docs", type=Path, nargs="+", help="the README and the docs/ pages holding the blocks")
    parser.add_argument("--check", action="store_true", help="rewrite nothing; fail when a block is out of date")
    parser.add_argument("--compare", required=True, help="the compare binary")
    parser.add_argument("--results", type=Path, default=Path("results/compare.json"))
    parser.add_argument("--overhead", type=Path, default=Path("results/overhead.json"))
    parser.add_argument("--harness", help="the harness binary (renders the retention report)")
    parser.add_argument("--retention", type=Path, default=Path("results/retention-scripted.json"))
    parser.add_argument("--compare-vm", type=Path, default=Path("results/compare-vm.json"))
    parser.add_argument("--retention-vm", type=Path, default=Path("results/retention-vm.json"))
    parser.add_argument("--reliability", type=Path, default=Path("results/reliability.json"))
    parser.add_argument("--session", type=Path, default=Path("results/session-scripted.json"))
    parser.add_argument("--transcripts", type=Path, default=Path("harness/tests/fixtures/transcripts"))
    args = parser.parse_args()

    def run(*argv: str) -> str:
        return subprocess.run(list(argv), check=True, capture_output=True, text=True).stdout

    before = {path: path.read_text() for path in args.docs}
    texts = dict(before)
    splice(texts, "compare", run(args.compare, "--render", str(args.results)))
    splice(texts, "headline", headline(args))
    if args.overhead.exists():
        splice(texts, "performance", performance(args.overhead))
    if args.reliability.exists():
        splice(texts, "reliability", reliability(args.reliability))
    if args.harness and args.retention.exists():
        splice(texts, "retention", run(args.harness, "report", str(args.retention)))
    if args.compare_vm.exists():
        splice(texts, "compare-vm", run(args.compare, "--render", str(args.compare_vm)))
    if args.harness and args.retention_vm.exists():
        splice(texts, "retention-vm", run(args.harness, "report", str(args.retention_vm)))
    if args.harness and args.session.exists():
        splice(texts, "session", run(args.harness, "session", "report", str(args.session)))
    files = sorted(str(f) for f in args.transcripts.glob("*.jsonl"))
    if args.harness and files:
        splice(texts, "transcripts", run(args.harness, "transcripts", *files))
    stale = [path for path in args.docs if texts[path] != before[path]]
    if args.check:
        for path, name in STALE:
            print(f"readme_table: {path}: the {name} block differs from what its results render; run make readme-table")
        sys.exit(1 if STALE else 0)
    for path in stale:
        path.write_text(texts[path])
    print(f"rewrote the generated sections of {', '.join(str(p) for p in stale) or 'nothing (all current)'}")


if __name__ == "__main__":
    main()
