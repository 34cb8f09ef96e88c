"""Copies the interop catalog from its SQLite file into a PostgreSQL database, the same tables and
rows, so a stock server runs over PostgreSQL's own semantics (its ORDER BY puts NULLs last).
Runs with the suite's virtual environment, which has psycopg.

    python Tests/Interop/postgres_catalog.py CATALOG.sqlite postgres://user:password@host:port/db
"""
import sqlite3
import sys

import psycopg

TABLES = {
    "artists": "id INTEGER PRIMARY KEY, name TEXT NOT NULL",
    "albums": "id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER, artist_id INTEGER NOT NULL",
    "tracks": "id INTEGER PRIMARY KEY, name TEXT NOT NULL, composer TEXT, milliseconds INTEGER NOT NULL, "
              "album_id INTEGER NOT NULL",
}


def copy(catalog, url):
    source = sqlite3.connect(catalog)
    with psycopg.connect(url) as target:
        for table, columns in TABLES.items():
            target.execute(f"DROP TABLE IF EXISTS {table}")
            target.execute(f"CREATE TABLE {table} ({columns})")
            rows = source.execute(f"SELECT * FROM {table}").fetchall()
            marks = ", ".join(["%s"] * len(rows[0]))
            with target.cursor() as cursor:
                cursor.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    source.close()


if __name__ == "__main__":
    copy(sys.argv[1], sys.argv[2])
