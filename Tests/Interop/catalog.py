"""A music catalog in SQLite, the same for every backend of the interop suite: artists, their
albums and the albums' tracks, generated from a seed. Names mix ASCII with accented and other
non-ASCII letters (so case and diacritics modifiers are tested on data a backend's ASCII-only
folding gets wrong), some composers are NULL, and the listing sizes are no round numbers.

    python3 Tests/Interop/catalog.py OUT.sqlite [SEED]
"""
import random
import sqlite3
import sys

SYLLABLES = ["ka", "lo", "mi", "ra", "so", "ne", "tu", "vi", "da", "el", "or", "an", "ös", "é", "ñu", "ça", "ø", "ÿr",
             "Ó", "Ä", "ku", "ji", "ßa"]
WORDS = ["Night", "Tide", "Morning", "Glass", "River", "Echo", "Velvet", "Stone", "Deja", "Vu", "Ángel", "Öl",
         "Café", "Noir", "Über", "Zoë", "ÉTÉ", "rio", "RÍO", "straße"]


def name(rng, words):
    parts = [rng.choice(words) for _ in range(rng.randint(1, 3))]
    return " ".join(parts)


def artist_name(rng):
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).capitalize() + " " + rng.choice(WORDS)


SMALL = (137, 211, 1613)
CHINOOK = (275, 347, 3503)


def generate(path, seed=7, artists=SMALL[0], albums=SMALL[1], tracks=SMALL[2]):
    rng = random.Random(seed)
    db = sqlite3.connect(path)
    db.executescript("""
        DROP TABLE IF EXISTS tracks; DROP TABLE IF EXISTS albums; DROP TABLE IF EXISTS artists;
        CREATE TABLE artists (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE albums (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER,
            artist_id INTEGER NOT NULL REFERENCES artists(id));
        CREATE TABLE tracks (id INTEGER PRIMARY KEY, name TEXT NOT NULL, composer TEXT,
            milliseconds INTEGER NOT NULL, album_id INTEGER NOT NULL REFERENCES albums(id));
        CREATE INDEX albums_artist ON albums(artist_id); CREATE INDEX tracks_album ON tracks(album_id);
    """)
    db.executemany("INSERT INTO artists VALUES (?, ?)", [(i, artist_name(rng)) for i in range(1, artists + 1)])
    db.executemany("INSERT INTO albums VALUES (?, ?, ?, ?)", [
        (i, name(rng, WORDS), rng.choice([None, *range(1965, 2025)]), rng.randint(1, artists))
        for i in range(1, albums + 1)])
    db.executemany("INSERT INTO tracks VALUES (?, ?, ?, ?, ?)", [
        (i, name(rng, WORDS), rng.choice([None, None, artist_name(rng)]), rng.randint(60_000, 600_000),
         rng.randint(1, albums))
        for i in range(1, tracks + 1)])
    db.commit()
    db.close()


if __name__ == "__main__":
    generate(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7)
