"""The index format this release reads and writes (`<data_dir>/indices/v<INDEX_VERSION>/`).
A module of its own, without numpy: the api compares it with what workers announce."""

INDEX_VERSION = 15
