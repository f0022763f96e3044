"""The tile grid, the process's tile cache and signed tile URLs, in process (issue 53)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from app.kit.config import get_settings
from app.kit.errors import Forbidden, InvalidArgument, NotFound
from app.tiles.cache import TileLru
from app.tiles.grid import TILE_ATTRIBUTION, TILE_MAX_ZOOM, Metatile, TileId, metatile_of, tile_id
from app.tiles.signing import grant, signed_account


@pytest.fixture
def pepper(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("GEOSVC_SECRET_PEPPER", "tile-test-pepper-of-at-least-32-bytes")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


class TestGrid:
    def test_tiles_inside_the_world(self) -> None:
        assert tile_id(0, 0, 0) == TileId(0, 0, 0)
        assert tile_id(12, 4095, 4095).path == "12/4095/4095"
        with pytest.raises(InvalidArgument):
            tile_id(2, 4, 0)
        with pytest.raises(InvalidArgument):
            tile_id(2, 0, 4)
        with pytest.raises(NotFound):
            tile_id(TILE_MAX_ZOOM + 1, 0, 0)

    def test_metatiles_are_aligned_blocks_of_at_most_4x4(self) -> None:
        assert metatile_of(TileId(0, 0, 0)) == Metatile(0, 0, 0, 1)
        assert metatile_of(TileId(1, 1, 0)) == Metatile(1, 0, 0, 2)
        block = metatile_of(TileId(10, 302, 387))
        assert block == Metatile(10, 300, 384, 4)
        assert TileId(10, 302, 387) in block.tiles()
        assert len(block.tiles()) == 16

    def test_attribution_is_the_static_maps(self) -> None:
        from app.geodata.providers.embedded.attribution import MAP_ATTRIBUTION

        assert TILE_ATTRIBUTION == MAP_ATTRIBUTION


class TestLru:
    def test_least_recently_used_goes_first_within_its_bytes(self) -> None:
        lru = TileLru(max_bytes=30)
        a, b, c = TileId(1, 0, 0), TileId(1, 1, 0), TileId(1, 0, 1)
        lru.put(a, b"a" * 10)
        lru.put(b, b"b" * 10)
        assert lru.get(a) == b"a" * 10  # a is now the most recent
        lru.put(c, b"c" * 15)
        assert lru.get(b) is None
        assert lru.get(a) is not None
        assert lru.size_bytes == 25
        lru.put(TileId(2, 0, 0), b"x" * 31)  # larger than the whole cache: not kept
        assert len(lru) == 2


class TestSigning:
    def test_a_grant_names_its_account(self, pepper: None) -> None:
        template = grant("usr_abc123").url_template
        query = dict(part.split("=") for part in template.split("?", 1)[1].split("&"))
        assert signed_account(query["account"], query["expires"], query["signature"]) == (
            "usr_abc123"
        )

    def test_expired_or_altered_is_forbidden(self, pepper: None) -> None:
        old = grant("usr_abc123", now=time.time() - 2 * get_settings().tile_link_ttl_s)
        query = dict(part.split("=") for part in old.url_template.split("?", 1)[1].split("&"))
        with pytest.raises(Forbidden, match="expired"):
            signed_account(query["account"], query["expires"], query["signature"])
        with pytest.raises(Forbidden, match="not valid"):
            signed_account("usr_other", query["expires"], query["signature"])
        with pytest.raises(Forbidden, match="not signed"):
            signed_account(None, query["expires"], query["signature"])
        with pytest.raises(InvalidArgument, match="expires"):
            signed_account(query["account"], "", query["signature"])
        with pytest.raises(InvalidArgument, match="signature"):
            signed_account(query["account"], query["expires"], "XYZ")
