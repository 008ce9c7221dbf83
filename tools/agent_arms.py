"""Two-arm agent runs over tasks/: what an LLM agent does with raw output and
with the view Lens's after-tool hook would give it, counted in calls as well
as bytes.

An arm is a directory holding one working directory per task (built by the
task's `setup`), a `run` wrapper, the agent's instructions (`prompt.md`) and
a log. The agent (a helper LLM, or a person) runs every command through the
wrapper from a task's directory. The wrapper runs the command with bash,
stdout and stderr merged as agents hand them over, and prints either that
output (mode raw) or `lens --as COMMAND --exit RC` of it (mode lens: exactly
what a hook answers), then logs the call. The lens arm's instructions carry
the awareness block as `lens init` writes it. Nothing here talks to a model:
the runs are the agent's; this only sets them up, wraps and counts them.

    agent_arms.py new ARM --mode raw|lens [--lens PATH] [--tasks a,b]
    ARM/run 'COMMAND'                      (from ARM/TASK; agent_arms.py run)
    agent_arms.py verify ARM...
    agent_arms.py tally ARM... [--cap 30000]

Counts are for the closing note of a change to views or hooks, as helper-agent
runs with their n and revision; they are never written to results/.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = ["last-line-trap", "mid-stream-trap", "fix-failing-test", "cascading-errors", "cargo-cascade"]
# A command that runs Lens's own `lens show`: what the agent spent to fetch
# lines a view hid.
LENS_SHOW = re.compile(r"(^|[\s;&|(`])(\S*/)?lens\s+show\b")


def fail(msg: str) -> None:
    print(f"agent_arms: {msg}", file=sys.stderr)
    sys.exit(2)


def awareness(lens: Path) -> str:
    """The block `lens init` writes for Claude Code, from a throwaway HOME."""
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HOME=home, LENS_STORE=f"{home}/s", LENS_LOG_DIR=f"{home}/l")
        env["LENS_CONFIG"] = f"{home}/c.toml"
        subprocess.run([str(lens), "init", "--agent", "claude", "--global"], env=env, check=True, capture_output=True)
        text = (Path(home) / ".claude/CLAUDE.md").read_text()
    begin, end = text.index("<!-- lens:begin -->"), text.index("<!-- lens:end -->")
    return text[begin : end + len("<!-- lens:end -->")] + "\n"


def prompt(arm: Path, spec: dict) -> str:
    out = [
        f"""# Small coding tasks

You work {len(spec["tasks"])} tasks, each in its own directory under `{arm}/`. Work each as
you normally would: quickly and correctly, without needless commands.

## How to run commands (strict)

- Use only your shell tool, and run **every** command through the wrapper,
  from the task's directory, like this:

      cd {arm}/TASK && {arm}/run 'COMMAND'

  What the wrapper prints is what COMMAND printed (stdout and stderr together);
  it exits with COMMAND's exit code. COMMAND runs with bash, so pipes, `&&`,
  redirections and heredocs work inside it (mind the quoting).
- Read and change files only through the wrapper too (`cat`, `sed -n`, `grep`,
  `python3 - <<'EOF' ... EOF`, `sed -i`, ...). Use no file reading, editing or
  search tool, and run nothing outside the wrapper.
- Work only inside `{arm}/`. Do not look at any other directory.
- Work the tasks one after another, in the order given: finish one (checking
  it as you see fit) before you start the next. Each command runs in the
  directory of the task you are on and touches only that task's files.
- One command per shell call, or several joined in one COMMAND, as you see fit.
"""
    ]
    if spec["mode"] == "lens":
        out.append(
            f"""
## Your shell's output filter

Your shell is set up with Lens, which shortens long command output. This is what
it tells every agent (its instructions, verbatim):

{spec["awareness"]}"""
        )
    out.append("\n## The tasks\n\n")
    for i, t in enumerate(spec["tasks"], 1):
        cfg = tomllib.loads((ROOT / "tasks" / t / "task.toml").read_text())
        out.append(f"{i}. Directory `{arm}/{t}`: {cfg['prompt'].replace('{command}', cfg['command'])}\n")
    out.append(
        """
## When done

Reply with one line per task: its directory name and `done` or `not done`
(with a few words on why). Nothing else.
"""
    )
    return "".join(out)


def git_revision() -> str:
    p = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    return p.stdout.strip() or "unknown"


def new(args: argparse.Namespace) -> None:
    arm = Path(args.arm).resolve()
    tasks = args.tasks.split(",") if args.tasks else TASKS
    for t in tasks:
        if not (ROOT / "tasks" / t / "setup").is_file():
            fail(f"no task {t!r} in {ROOT / 'tasks'}; pick from {', '.join(TASKS)}")
    if arm.exists():
        fail(f"{arm} exists; name a new arm (each arm's tasks start fresh)")
    spec = {"mode": args.mode, "tasks": tasks, "revision": git_revision()}
    if args.mode == "lens":
        lens = Path(args.lens or shutil.which("lens") or "").resolve()
        if not args.lens and not shutil.which("lens"):
            fail("mode lens needs the lens binary: --lens PATH (make build puts it under out/release)")
        if not os.access(lens, os.X_OK):
            fail(f"--lens {lens} is not an executable")
        spec["lens"] = str(lens)
        spec["awareness"] = awareness(lens)
    (arm / "state").mkdir(parents=True)
    for t in tasks:
        (arm / t).mkdir()
        subprocess.run([str(ROOT / "tasks" / t / "setup")], cwd=arm / t, check=True, capture_output=True)
    (arm / "arm.json").write_text(json.dumps(spec, indent=1) + "\n")
    run = arm / "run"
    run.write_text(f'#!/bin/sh\nexec python3 {Path(__file__).resolve()} run {arm} "$@"\n')
    run.chmod(0o755)
    (arm / "prompt.md").write_text(prompt(arm, spec))
    print(f"{arm}: {args.mode} arm of {len(tasks)} tasks; instructions in {arm / 'prompt.md'}")


def next_call(state: Path) -> int:
    """The next call's number: an agent may run two commands at once."""
    with open(state / "counter", "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = int(f.read() or 0) + 1
        f.seek(0)
        f.truncate()
        f.write(str(n))
    return n


def run(args: argparse.Namespace) -> None:
    arm = Path(args.arm).resolve()
    spec = json.loads((arm / "arm.json").read_text())
    here = Path.cwd().resolve()
    task = here.relative_to(arm).parts[0] if here.is_relative_to(arm) and here != arm else None
    if task not in spec["tasks"]:
        fail(f"run each command from one task's directory: cd {arm}/TASK first")
    state = arm / "state"
    log = state / "calls.jsonl"
    n = next_call(state)
    env = dict(os.environ)
    if spec["mode"] == "lens":
        env.update(LENS_STORE=str(state / "store"), LENS_LOG_DIR=str(state / "log"))
        env["LENS_CONFIG"] = str(state / "config.toml")
        env["PATH"] = f"{Path(spec['lens']).parent}{os.pathsep}{env.get('PATH', '')}"
    with open(state / f"raw-{n}.txt", "wb") as raw:
        rc = subprocess.run(
            ["bash", "-c", args.command], stdout=raw, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        ).returncode
    rc = rc if rc >= 0 else 128 - rc
    raw_bytes = (state / f"raw-{n}.txt").read_bytes()
    shown = raw_bytes
    if spec["mode"] == "lens":
        p = subprocess.run(
            [spec["lens"], "--as", args.command, "--exit", str(rc)],
            input=raw_bytes,
            capture_output=True,
            env=env,
        )
        shown = p.stdout
    (state / f"shown-{n}.txt").write_bytes(shown)
    entry = {
        "n": n,
        "task": task,
        "exit": rc,
        "raw_bytes": len(raw_bytes),
        "shown_bytes": len(shown),
        "lens_show": bool(LENS_SHOW.search(args.command)),
        "command": args.command,
    }
    with log.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(json.dumps(entry) + "\n")
    sys.stdout.buffer.write(shown)
    sys.exit(rc)


def verify(args: argparse.Namespace) -> None:
    bad = 0
    for a in args.arms:
        arm = Path(a).resolve()
        spec = json.loads((arm / "arm.json").read_text())
        for t in spec["tasks"]:
            with tempfile.TemporaryDirectory() as copy:
                shutil.copytree(arm / t, copy, dirs_exist_ok=True, symlinks=True)
                p = subprocess.run([str(ROOT / "tasks" / t / "verify")], cwd=copy, capture_output=True, text=True)
            ok = p.returncode == 0
            bad += not ok
            said = (p.stderr or p.stdout).strip().splitlines()
            why = "" if ok or not said else f" ({said[-1]})"
            print(f"{arm.name} {t} {'ok' if ok else 'FAIL'}{why}")
    sys.exit(1 if bad else 0)


def tally(args: argparse.Namespace) -> None:
    """Per arm and task: calls / `lens show` calls / bytes the agent was shown,
    each call's bytes capped at what the agent's shell shows; then each mode's
    means over its arms."""
    arms = [Path(a).resolve() for a in args.arms]
    specs = [json.loads((a / "arm.json").read_text()) for a in arms]
    tasks = list(dict.fromkeys(t for s in specs for t in s["tasks"]))
    cells = []
    for a, spec in zip(arms, specs, strict=True):
        c = {t: [0, 0, 0] for t in spec["tasks"]}
        log = a / "state/calls.jsonl"
        for line in log.read_text().splitlines() if log.exists() else []:
            e = json.loads(line)
            c[e["task"]][0] += 1
            c[e["task"]][1] += e["lens_show"]
            c[e["task"]][2] += min(e["shown_bytes"], args.cap)
        cells.append(c)

    def total(c: dict) -> list[int]:
        return [sum(v[i] for v in c.values()) for i in range(3)]

    def cell(c: dict, t: str) -> list[int] | None:
        return total(c) if t == "total" else c.get(t)

    print("| task | " + " | ".join(f"{a.name} ({s['mode']})" for a, s in zip(arms, specs, strict=True)) + " |")
    print("|---|" + "---:|" * len(arms))
    for t in [*tasks, "total"]:
        row = [cell(c, t) for c in cells]
        print(f"| {t} | " + " | ".join("–" if v is None else f"{v[0]} / {v[1]} / {v[2]:,}" for v in row) + " |")
    modes = list(dict.fromkeys(s["mode"] for s in specs))
    print()
    print(
        "| task | "
        + " | ".join(f"{m} (n={sum(s['mode'] == m for s in specs)}): calls / lens show / bytes" for m in modes)
        + " |"
    )
    print("|---|" + "---:|" * len(modes))
    for t in [*tasks, "total"]:
        row = []
        for m in modes:
            cs = [v for c, s in zip(cells, specs, strict=True) if s["mode"] == m and (v := cell(c, t)) is not None]
            row.append(
                "–"
                if not cs
                else " / ".join(f"{sum(v[i] for v in cs) / len(cs):,.2f}" for i in range(2))
                + f" / {sum(v[2] for v in cs) / len(cs):,.0f}"
            )
        print(f"| {t} | " + " | ".join(row) + " |")
    revisions = sorted({s["revision"] for s in specs})
    print(f"\nrevision {', '.join(revisions)}; bytes capped at {args.cap:,} per call; a total is over its arm's tasks")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("new", help="a fresh arm: task directories, wrapper, instructions")
    p.add_argument("arm")
    p.add_argument("--mode", choices=["raw", "lens"], required=True)
    p.add_argument("--lens", help="the lens binary (mode lens; default: lens on PATH)")
    p.add_argument("--tasks", help="comma-separated task names (default: all five)")
    p.set_defaults(do=new)
    p = sub.add_parser("run", help="the wrapper: run one command of the agent's")
    p.add_argument("arm")
    p.add_argument("command")
    p.set_defaults(do=run)
    p = sub.add_parser("verify", help="each task's verify on a copy of its directory")
    p.add_argument("arms", nargs="+")
    p.set_defaults(do=verify)
    p = sub.add_parser("tally", help="calls, lens show calls and bytes per task")
    p.add_argument("arms", nargs="+")
    p.add_argument("--cap", type=int, default=30_000, help="bytes of one result the agent's shell shows")
    p.set_defaults(do=tally)
    args = ap.parse_args()
    args.do(args)


if __name__ == "__main__":
    main()
