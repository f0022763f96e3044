"""docs/SETTINGS.md is written from app/kit/config.py and kept current (issue 38, item 4)."""

from __future__ import annotations

from pathlib import Path

from app.deployment.reference import field_comments, settings_reference
from app.kit.config import Settings

ROOT = Path(__file__).resolve().parents[2]


class TestSettingsReference:
    def test_docs_settings_md_is_written_from_the_settings(self) -> None:
        committed = (ROOT / "docs" / "SETTINGS.md").read_text(encoding="utf-8")
        assert committed == settings_reference(), "run: .venv/bin/geosvc settings-reference"

    def test_every_setting_has_a_row_with_a_description(self) -> None:
        reference = settings_reference()
        comments = field_comments()
        for name in Settings.model_fields:
            assert f"| `GEOSVC_{name.upper()}` |" in reference, name
            assert comments[name].strip(), f"{name}: add a comment above it in app/kit/config.py"

    def test_a_comment_heads_its_group_and_a_blank_line_ends_it(self) -> None:
        comments = field_comments()
        assert "Flower's basic auth" in comments["flower_auth"]
        # a field in a group refers to the field whose comment heads the group
        assert comments["free_burst"] == "See `GEOSVC_FREE_RATE_PER_S`."
        # an end-of-line comment is the field's own
        assert comments["overpass_url"] == "search_nearby"

    def test_secrets_have_no_default_shown(self) -> None:
        row = next(
            line
            for line in settings_reference().splitlines()
            if line.startswith("| `GEOSVC_SECRET_PEPPER`")
        )
        assert "| SecretStr \\| None | — |" in row
