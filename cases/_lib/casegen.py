"""Helpers for the case setup scripts: deterministic files, mtimes and git history.

Every setup script builds its project in the current directory from what is in the
repository alone, so a case builds the same bytes on any machine.
"""

import os
import subprocess
from pathlib import Path

EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z: every mtime and commit date counts from here
AUTHORS = [
    ("Ada Okafor", "ada@example.com"),
    ("Bruno Lindqvist", "bruno@example.com"),
    ("Chen Wei", "chen@example.com"),
]


def write(path, text, mode=None):
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    if mode is not None:
        p.chmod(mode)
    return p


def pin_mtimes(root=".", when=EPOCH):
    """Give every file and directory one fixed mtime so `ls -l` prints the same."""
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        if ".git" in Path(dirpath).parts:
            continue
        for name in filenames + dirnames:
            os.utime(Path(dirpath) / name, (when, when), follow_symlinks=False)
    os.utime(root, (when, when))


def git(*args, when=EPOCH, author=AUTHORS[0]):
    env = dict(os.environ)
    stamp = f"@{when} +0000"
    env.update(
        GIT_AUTHOR_NAME=author[0],
        GIT_AUTHOR_EMAIL=author[1],
        GIT_COMMITTER_NAME=author[0],
        GIT_COMMITTER_EMAIL=author[1],
        GIT_AUTHOR_DATE=stamp,
        GIT_COMMITTER_DATE=stamp,
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    subprocess.run(["git", *args], check=True, env=env, stdout=subprocess.DEVNULL)


def git_init():
    git("init", "-q", "-b", "main")
    git("config", "user.name", AUTHORS[0][0])
    git("config", "user.email", AUTHORS[0][1])
    git("config", "core.pager", "cat")
    git("config", "color.ui", "false")


def commit(message, when, author=AUTHORS[0], paths=("-A",)):
    git("add", *paths, when=when, author=author)
    git("commit", "-q", "-m", message, when=when, author=author)


PACKAGES = {
    "app/billing": ["invoice", "line_item", "tax", "currency", "credit_note", "dunning"],
    "app/payments": ["card", "webhook", "refund", "payout", "ledger"],
    "app/api": ["routes", "schemas", "auth", "pagination", "errors"],
    "app/reports": ["tax_report", "csv_export", "aging"],
    "app/storage": ["db", "migrations", "cache"],
    "app/util": ["money", "dates", "retry", "logging"],
}


def module_source(package, name, variant=0):
    """A plausible module: a dataclass, a couple of functions, a constant or two."""
    cls = "".join(part.capitalize() for part in name.split("_"))
    return f'''"""{name.replace("_", " ").capitalize()} for the {package.split("/")[-1]} package."""

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

MAX_RETRIES = {3 + variant}
DEFAULT_CURRENCY = "EUR"


@dataclass
class {cls}:
    id: int
    amount_cents: int
    currency: str = DEFAULT_CURRENCY
    tags: list = field(default_factory=list)

    def total(self) -> Decimal:
        return (Decimal(self.amount_cents) / 100).quantize(Decimal("0.01"), ROUND_HALF_EVEN)

    def describe(self) -> str:
        return f"{cls}({{self.id}}, {{self.total()}} {{self.currency}})"


def load_{name}(db, {name}_id: int) -> {cls}:
    row = db.fetch_one("SELECT id, amount_cents, currency FROM {name} WHERE id = %s", ({name}_id,))
    if row is None:
        raise KeyError({name}_id)
    return {cls}(*row)


def save_{name}(db, item: {cls}) -> None:
    for attempt in range(MAX_RETRIES):
        try:
            db.execute(
                "INSERT INTO {name} (id, amount_cents, currency) VALUES (%s, %s, %s)",
                (item.id, item.amount_cents, item.currency),
            )
            return
        except TimeoutError:
            if attempt == MAX_RETRIES - 1:
                raise
'''


def python_project(root="."):
    """Writes the billing service's Python tree; returns the module paths."""
    paths = []
    for package, modules in PACKAGES.items():
        write(f"{root}/{package}/__init__.py", "")
        for i, name in enumerate(modules):
            path = f"{root}/{package}/{name}.py"
            write(path, module_source(package, name, i))
            paths.append(path)
    write(f"{root}/app/__init__.py", '__version__ = "0.14.0"\n')
    write(f"{root}/pyproject.toml", '[project]\nname = "billing"\nversion = "0.14.0"\n')
    return paths
