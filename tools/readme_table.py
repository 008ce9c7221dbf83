"""Rewrite the README's generated sections from the committed results.

The compare table comes from `compare --render results/compare.json` (the JSON is
the record, the table is rendered from it), the performance lines from
results/overhead.json, the reliability lines from results/reliability.json and
the retention tables from `harness report`, the session tables from `harness
session report results/session-scripted.json`, the transcripts tables from
`harness transcripts` over the committed real transcripts; the microVM runs'
tables from results/compare-vm.json and results/retention-vm.json when they exist. Each
section sits between `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers;
nothing outside them is touched.
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path


def splice(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)
    if not pattern.search(text):
        sys.exit(f"readme_table: no <!-- {name}:begin --> ... <!-- {name}:end --> block in the README; add one")
    return pattern.sub(lambda m: m.group(1) + body.rstrip("\n") + "\n" + m.group(2), text)


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
    parser.add_argument("readme", type=Path)
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
    table = subprocess.run(
        [args.compare, "--render", str(args.results)], check=True, capture_output=True, text=True
    ).stdout
    text = args.readme.read_text()
    text = splice(text, "compare", table)
    if args.overhead.exists():
        text = splice(text, "performance", performance(args.overhead))
    if args.reliability.exists():
        text = splice(text, "reliability", reliability(args.reliability))
    if args.harness and args.retention.exists():
        report = subprocess.run(
            [args.harness, "report", str(args.retention)], check=True, capture_output=True, text=True
        ).stdout
        text = splice(text, "retention", report)
    if args.compare_vm.exists():
        vm_table = subprocess.run(
            [args.compare, "--render", str(args.compare_vm)], check=True, capture_output=True, text=True
        ).stdout
        text = splice(text, "compare-vm", vm_table)
    if args.harness and args.retention_vm.exists():
        report = subprocess.run(
            [args.harness, "report", str(args.retention_vm)], check=True, capture_output=True, text=True
        ).stdout
        text = splice(text, "retention-vm", report)
    if args.harness and args.session.exists():
        report = subprocess.run(
            [args.harness, "session", "report", str(args.session)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        text = splice(text, "session", report)
    files = sorted(str(f) for f in args.transcripts.glob("*.jsonl"))
    if args.harness and files:
        report = subprocess.run(
            [args.harness, "transcripts", *files], check=True, capture_output=True, text=True
        ).stdout
        text = splice(text, "transcripts", report)
    args.readme.write_text(text)
    print(f"rewrote the generated sections of {args.readme}")


if __name__ == "__main__":
    main()
