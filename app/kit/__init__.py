"""The bottom layer: settings, database, errors, ids, clocks, Redis and the small pieces
every feature uses. Imports nothing above it."""
