"""Import circles between the files of one Rust crate.

Rust compiles a crate as one unit, so nothing stops file A from reaching into
file B while B reaches back into A; over time such circles weld a crate into
one lump that can only be read whole. This reads every crate of the workspace
(each `src/lib.rs`, `src/main.rs`, `src/bin/*.rs` and `tests/*.rs` is a crate
root), follows its `mod name;` declarations to learn which file holds which
module, and turns every `crate::…`, `super::…`, `self::…` path (in `use` trees
and in code) into an edge from the file that names it to the file that defines
what it names, following `use` re-exports to the defining file. Code under
`#[cfg(test)]` is left out: a module's tests may drive it through the layers
above it. A parent file declaring `mod child;` is not an edge by itself.

It prints every strongly connected component of more than one file, with one
reference for each edge inside it, and exits 1 if there is any; otherwise it
prints one line and exits 0. Standard library only.

    python3 tools/import_cycles.py [ROOT]
"""

import re
import sys
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def strip_code(text: str) -> str:
    """Comments, string and char literals become spaces; newlines stay so offsets keep their line."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif m := re.compile(r'b?r(#*)"').match(text, i):
            if i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
                out.append(c)
                i += 1
                continue
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.compile(r"'(\\.[^']*|[^\\'])'").match(text, i)
            if m:
                out.append(" " * (m.end() - i))
                i = m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")


def drop_test_code(code: str) -> str:
    """Blanks every item under `#[cfg(test)]` (a module, a fn, a use)."""
    while m := CFG_TEST.search(code):
        j = m.end()
        brace, semi = code.find("{", j), code.find(";", j)
        if semi >= 0 and (brace < 0 or semi < brace):
            end = semi
        else:
            end = matching_brace(code, brace) if brace >= 0 else len(code) - 1
        code = code[: m.start()] + re.sub(r"[^\n]", " ", code[m.start() : end + 1]) + code[end + 1 :]
    return code


def parse_tree(code: str, i: int) -> tuple[list[tuple[list[str], str | None]], int]:
    """A use tree starting at code[i]: (segments, alias) for each leaf, and where it ends."""
    leaves: list[tuple[list[str], str | None]] = []
    segs: list[str] = []
    ws = re.compile(r"\s*")
    while True:
        i = ws.match(code, i).end()
        if i < len(code) and code[i] == "{":
            i += 1
            while True:
                i = ws.match(code, i).end()
                if i >= len(code) or code[i] == "}":
                    i += 1
                    break
                sub, i = parse_tree(code, i)
                leaves += [(segs + s, a) for s, a in sub]
                i = ws.match(code, i).end()
                if i < len(code) and code[i] == ",":
                    i += 1
            return leaves, i
        if i < len(code) and code[i] == "*":
            leaves.append((segs + ["*"], None))
            return leaves, i + 1
        m = re.compile(IDENT).match(code, i)
        if not m:
            if segs:
                leaves.append((segs, None))
            return leaves, i
        segs.append(m.group(0))
        i = ws.match(code, m.end()).end()
        if code.startswith("::", i) and not code.startswith("::<", i):
            i += 2
            continue
        alias = None
        if am := re.compile(r"as\s+(" + IDENT + r")\b").match(code, i):
            alias, i = am.group(1), am.end()
        leaves.append((segs, alias))
        return leaves, i


class Module:
    def __init__(self, path: tuple[str, ...], file: Path, parent: "Module | None"):
        self.path, self.file, self.parent = path, file, parent
        self.children: dict[str, Module] = {}
        self.uses: dict[str, list[str]] = {}  # a name this module imports, and its full path from here


class Crate:
    def __init__(self, root_file: Path):
        self.root = Module((), root_file, None)
        self.files: dict[Path, Module] = {}
        self.code: dict[Path, str] = {}
        self.inline: dict[Path, list[tuple[int, int, Module]]] = {}
        self.load(self.root, root_file.parent)

    def load(self, module: Module, child_dir: Path) -> None:
        file = module.file
        self.files[file] = module
        code = drop_test_code(strip_code(file.read_text(encoding="utf-8", errors="replace")))
        self.code[file] = code
        self.inline[file] = []
        self.scan(module, code, 0, len(code), child_dir)

    def scan(self, module: Module, code: str, start: int, end: int, child_dir: Path) -> None:
        pat = re.compile(r"\bmod\s+(" + IDENT + r")\s*([;{])")
        i = start
        while m := pat.search(code, i, end):
            name = m.group(1)
            if m.group(2) == ";":
                for cand in (child_dir / f"{name}.rs", child_dir / name / "mod.rs"):
                    if cand.is_file():
                        child = Module(module.path + (name,), cand, module)
                        module.children[name] = child
                        self.load(child, cand.parent if cand.name == "mod.rs" else cand.parent / name)
                        break
                i = m.end()
            else:
                close = matching_brace(code, m.end() - 1)
                child = Module(module.path + (name,), module.file, module)
                module.children[name] = child
                self.inline[module.file].append((m.end(), close, child))
                self.scan(child, code, m.end(), close, child_dir / name)
                i = close + 1
        self.collect_uses(module, code, start, end)

    def module_at(self, file: Path, offset: int) -> Module:
        best = self.files[file]
        for start, end, mod in self.inline[file]:
            if start <= offset <= end and len(mod.path) > len(best.path):
                best = mod
        return best

    def collect_uses(self, module: Module, code: str, start: int, end: int) -> None:
        for m in re.compile(r"\buse\s+").finditer(code, start, end):
            if self.module_at(module.file, m.start()) is not module:
                continue
            for segs, alias in parse_tree(code, m.end())[0]:
                if segs[-1] == "self":
                    segs = segs[:-1]
                if segs and segs[-1] != "*":
                    module.uses[alias or segs[-1]] = segs

    def start(self, module: Module, first: str) -> Module | None:
        if first == "crate":
            return self.root
        if first == "self":
            return module
        if first == "super":
            return module.parent
        return None

    def resolve(self, module: Module, segs: list[str], depth: int = 0) -> Path | None:
        """The file defining what `segs`, named inside `module`, points at."""
        at = self.start(module, segs[0])
        rest = segs[1:]
        if at is None:
            if segs[0] in module.children:
                at, rest = module.children[segs[0]], segs[1:]
            else:
                return None
        while rest and rest[0] == "super" and at.parent is not None:
            at, rest = at.parent, rest[1:]
        while rest and rest[0] in at.children:
            at, rest = at.children[rest[0]], rest[1:]
        if rest and rest[0] in at.uses and depth < 8:
            target = at.uses[rest[0]]
            followed = self.resolve(at, target + rest[1:], depth + 1)
            if followed is not None:
                return followed
        return at.file

    def edges(self) -> dict[Path, dict[Path, tuple[int, str]]]:
        """For each file, the files it reaches and one (line, path text) saying where."""
        out: dict[Path, dict[Path, tuple[int, str]]] = {f: {} for f in self.files}
        ref = re.compile(r"(?<![A-Za-z0-9_:])" + IDENT + r"\s*::(?!<)")
        use = re.compile(r"\buse\s+")
        for file, code in self.code.items():
            starts = {m.end() for m in use.finditer(code)}
            spots = [(m.start(), True) for m in ref.finditer(code)]
            for m in use.finditer(code):
                if re.compile(IDENT).match(code, m.end()):
                    spots.append((m.end(), False))
            seen_use_ends: set[int] = set()
            for at, _ in sorted(spots):
                if at in seen_use_ends:
                    continue
                leaves, end = parse_tree(code, at)
                if at in starts:
                    seen_use_ends.add(at)
                module = self.module_at(file, at)
                for segs, _ in leaves:
                    if segs and segs[-1] == "*":
                        segs = segs[:-1]
                    if not segs:
                        continue
                    target = self.resolve(module, segs)
                    if target is not None and target != file and target not in out[file]:
                        line = code.count("\n", 0, at) + 1
                        out[file][target] = (line, "::".join(segs))
        return out


def components(graph: dict[Path, dict[Path, tuple[int, str]]]) -> list[list[Path]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    result: list[list[Path]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    result.append(sorted(comp))
    return result


def crate_roots(repo: Path) -> list[Path]:
    roots = []
    for manifest in sorted(repo.glob("*/Cargo.toml")):
        base = manifest.parent
        for name in ("src/lib.rs", "src/main.rs"):
            if (base / name).is_file():
                roots.append(base / name)
        roots += sorted((base / "src" / "bin").glob("*.rs"))
        roots += sorted((base / "tests").glob("*.rs"))
    return roots


def main() -> int:
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    roots = crate_roots(repo)
    if not roots:
        print(f"import_cycles: no crate under {repo} (give the workspace root)", file=sys.stderr)
        return 2
    found = 0
    files = 0
    for root in roots:
        crate = Crate(root)
        files += len(crate.files)
        graph = crate.edges()
        for comp in components(graph):
            found += 1
            members = set(comp)
            rel = root.relative_to(repo)
            print(f"circle in {rel}: {len(comp)} files")
            for f in comp:
                for g, (line, text) in sorted(graph[f].items()):
                    if g in members:
                        print(f"  {f.relative_to(repo)}:{line} -> {g.relative_to(repo)}  ({text})")
    if found:
        print(f"{found} import circle(s) in {len(roots)} crates ({files} files)")
        return 1
    print(f"no import circles in {len(roots)} crates ({files} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
