"""How much of a paired session's output comes from commands that fail.

Claude Code's after-tool hook runs only for commands that succeed, so what a
failing build or test prints reaches the model unfiltered there. This runs the
fixed command sequence of every session in tasks/sessions/ in a fresh copy of
its task (the task's fix applied before the last command, as the scripted
session does) and counts, per session and in all, the calls that exit non-zero
and the bytes they print. It prints JSON; nothing is written to results/.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path


def run_session(tasks: Path, toml: Path, work: Path) -> list[dict]:
    spec = tomllib.loads(toml.read_text())
    task = tasks / spec["task"]
    work.mkdir(parents=True)
    subprocess.run([str(task / "setup")], cwd=work, check=True, capture_output=True)
    calls = []
    commands = spec["commands"]
    for i, command in enumerate(commands):
        if i == len(commands) - 1:
            subprocess.run([str(task / "fix")], cwd=work, check=True, capture_output=True)
        p = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True)
        calls.append({"command": command, "exit": p.returncode, "bytes": len(p.stdout) + len(p.stderr)})
    return calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=Path, default=Path("tasks"))
    args = parser.parse_args()
    args.tasks = args.tasks.resolve()
    sessions = {}
    with tempfile.TemporaryDirectory() as tmp:
        for toml in sorted((args.tasks / "sessions").glob("*.toml")):
            sessions[toml.stem] = run_session(args.tasks, toml, Path(tmp) / toml.stem)
    calls = [c for s in sessions.values() for c in s]
    total = sum(c["bytes"] for c in calls)
    failed = [c for c in calls if c["exit"] != 0]
    failed_bytes = sum(c["bytes"] for c in failed)
    report = {
        "command": "python3 tools/failing_share.py",
        "sessions": sessions,
        "calls": len(calls),
        "failed_calls": len(failed),
        "bytes": total,
        "failed_bytes": failed_bytes,
        "failed_share_pct": round(100 * failed_bytes / total, 1) if total else 0.0,
    }
    json.dump(report, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
