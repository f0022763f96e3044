"""Releases (issue 55, item 3): CHANGELOG.md's newest entry names pyproject's version and
the migration head the code brings a database to, the Kubernetes release overlay's image
tag is that version's, and DEPLOYMENT.md's downgrade table has a row for every
migration, each going back to the migration before it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

ROOT = Path(__file__).resolve().parents[2]
ENTRY = re.compile(r"^## \[(?P<version>[^\]]+)\] - \d{4}-\d{2}-\d{2}$", re.MULTILINE)
HEAD = re.compile(r"^Migration head: `(?P<head>[^`]+)`$", re.MULTILINE)
DOWNGRADE_ROW = re.compile(r"^\| `(?P<source>[^`]+)` \| `(?P<target>[^`]+)` \| .+\|$")


def package_version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def migration_chain() -> dict[str, str]:
    """Every revision and the one it revises ('base' for the first)."""
    config = Config()
    config.set_main_option("script_location", str(ROOT / "app" / "migrations"))
    script = ScriptDirectory.from_config(config)
    return {rev.revision: str(rev.down_revision or "base") for rev in script.walk_revisions()}


def alembic_head() -> str:
    config = Config()
    config.set_main_option("script_location", str(ROOT / "app" / "migrations"))
    return str(ScriptDirectory.from_config(config).get_current_head())


def newest_changelog_entry() -> tuple[str, str]:
    text = (ROOT / "CHANGELOG.md").read_text()
    entries = list(ENTRY.finditer(text))
    assert entries, "CHANGELOG.md has no `## [version] - date` entry"
    newest = entries[0]
    body_end = entries[1].start() if len(entries) > 1 else len(text)
    head = HEAD.search(text, newest.end(), body_end)
    assert head, f"CHANGELOG.md's [{newest['version']}] names no `Migration head:`"
    return newest["version"], head["head"]


def downgrade_table() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "DEPLOYMENT.md").read_text()
    table = text[text.index("| downgrade from | to | drops |") :]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        row = DOWNGRADE_ROW.match(line)
        assert row, f"a downgrade row not as `from` | `to` | drops: {line}"
        rows.append((row["source"], row["target"]))
    return rows


def test_the_newest_changelog_entry_is_this_version_and_its_migration_head() -> None:
    version, head = newest_changelog_entry()
    assert version == package_version()
    assert head == alembic_head()


def test_the_kubernetes_release_runs_an_image_of_this_version() -> None:
    overlay = ROOT / "deploy/kubernetes/overlays/production/release/kustomization.yaml"
    [tag] = re.findall(r"^\s+newTag: (\S+)$", overlay.read_text(), re.MULTILINE)
    assert tag.startswith(f"{package_version()}-"), tag


def test_the_downgrade_table_has_every_migration_newest_first() -> None:
    chain = migration_chain()
    rows = downgrade_table()
    assert [source for source, _ in rows] == list(chain)  # walk_revisions: head first
    assert dict(rows) == chain
