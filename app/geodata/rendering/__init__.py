"""static_map rendering: our own Web Mercator, vector basemap, Pillow."""
