"""Leaflet is vendored as its npm tarball (app/mcp/map_app): the tarball must be the one
npm's integrity names, and the page must inline exactly its files (issue 53, item 2)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import app.mcp.map_app as map_app

HERE = Path(map_app.__file__).parent
# npm's dist.integrity of leaflet@1.9.4, as the registry states it
LEAFLET_1_9_4 = (
    "sha512-nxS1ynzJOmOlHp+iL3FyWqK89GtNL8U8rvlMOsQdTTssxZwCXh8N2"
    "NB3GDQOL+YR3XnWyZAxwQixURb+FA74PA=="
)


def test_tarball_matches_the_npm_integrity() -> None:
    entry = map_app.vendored("leaflet")
    assert entry["integrity"] == LEAFLET_1_9_4
    assert map_app.integrity_of(HERE / entry["file"]) == LEAFLET_1_9_4


def test_page_inlines_the_tarballs_leaflet() -> None:
    with tarfile.open(HERE / "leaflet-1.9.4.tgz", "r:gz") as archive:
        member = archive.extractfile("package/dist/leaflet.js")
        assert member is not None
        leaflet_js = member.read().decode()
    page = map_app.page()
    assert leaflet_js in page
    assert "__LEAFLET" not in page  # every placeholder filled
