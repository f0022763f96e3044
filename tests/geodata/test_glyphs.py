"""The map font's character map, read from the font file itself."""

from __future__ import annotations

from PIL import ImageFont

from app.geodata.rendering.glyphs import characters
from app.geodata.rendering.labels import drawable, font, missing_glyphs


class TestMapFont:
    def test_latin_greek_and_cyrillic_are_in_it_and_cjk_is_not(self) -> None:
        known = characters(font(12))
        assert {ord(c) for c in "AzéüŁłßΑωЖж"} <= known
        assert not {ord(c) for c in "東京서울"} & known

    def test_missing_glyphs_each_once_in_order(self) -> None:
        assert missing_glyphs("東京 Tokyo 東") == "東京"
        assert missing_glyphs("Zürich") == ""

    def test_drawable_leaves_the_rest_with_its_spaces_closed_up(self) -> None:
        assert drawable("Kyoto 京都 station") == "Kyoto station"
        assert drawable("京都") == ""
        assert drawable("two  spaces") == "two  spaces"  # nothing missing: unchanged


class TestOtherFonts:
    def test_a_font_read_from_bytes(self) -> None:
        # Pillow's own font (loaded from memory) has ASCII and not Cyrillic
        known = characters(ImageFont.load_default(size=12))
        assert {ord(c) for c in "Map 42"} <= known
        assert ord("Ж") not in known

    def test_the_bitmap_font_is_ascii(self) -> None:
        known = characters(ImageFont.load_default_imagefont())
        assert ord("A") in known
        assert ord("é") not in known
