#!/usr/bin/env python3
"""How many pages one tick's decisions dirty in the store's decisions table, by schema.

Why: schema 5 (src/store/migrations.cc) replaced the (workload, id) index with a per-workload
chain of rows. This measures the reason with SQLite itself: a file of ROWS decisions over
10,000 workloads in 16 KiB pages, then one commit of 1,744 inserts for random workloads (a
policy-mix tick at 10,000 workloads stores about that many), and the WAL frames that commit
wrote, for schema 4 (the index) and schema 5 (the chain, with its decision_heads upsert).

    python3 scripts/wal_pages.py [ROWS ...]     # default: 220000 2000000
"""
import os
import random
import sqlite3
import sys
import tempfile

PAGE = 16384
WORKLOADS = 10000
TICK = 1744
BODY = "x" * 550  # about a compact decision's size

SCHEMAS = {
    "index (schema 4)": [
        "CREATE TABLE decisions (id INTEGER PRIMARY KEY, workload TEXT NOT NULL,"
        " t INTEGER NOT NULL, json TEXT NOT NULL, fmt INTEGER NOT NULL DEFAULT 0)",
        "CREATE INDEX decisions_by_workload ON decisions (workload, id)",
        "CREATE INDEX decisions_by_time ON decisions (t)",
    ],
    "chain (schema 5)": [
        "CREATE TABLE decisions (id INTEGER PRIMARY KEY, workload TEXT NOT NULL,"
        " t INTEGER NOT NULL, json TEXT NOT NULL, fmt INTEGER NOT NULL DEFAULT 0, prev INTEGER)",
        "CREATE INDEX decisions_by_time ON decisions (t)",
        "CREATE TABLE decision_heads (workload TEXT PRIMARY KEY, last INTEGER NOT NULL)"
        " WITHOUT ROWID",
    ],
}


def insert(db, chained, workload, t):
    if not chained:
        db.execute("INSERT INTO decisions (workload, t, json, fmt) VALUES (?, ?, ?, 1)",
                   (workload, t, BODY))
        return
    cur = db.execute(
        "INSERT INTO decisions (workload, t, json, fmt, prev) VALUES (?1, ?2, ?3, 1,"
        " (SELECT last FROM decision_heads WHERE workload = ?1))", (workload, t, BODY))
    db.execute("INSERT INTO decision_heads (workload, last) VALUES (?, ?)"
               " ON CONFLICT (workload) DO UPDATE SET last = excluded.last",
               (workload, cur.lastrowid))


def frames_of_one_tick(schema, rows):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "store.db")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute(f"PRAGMA page_size={PAGE}")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA wal_autocheckpoint=0")
        for sql in SCHEMAS[schema]:
            db.execute(sql)
        chained = "chain" in schema
        rng = random.Random(1)
        db.execute("BEGIN")
        for i in range(rows):
            insert(db, chained, f"bench/w{rng.randrange(WORKLOADS)}", i)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("BEGIN")
        for i in range(TICK):
            insert(db, chained, f"bench/w{rng.randrange(WORKLOADS)}", rows + i)
        db.execute("COMMIT")
        frames = os.path.getsize(path + "-wal") // (PAGE + 24)
        db.close()
        return frames


def main():
    for rows in [int(a) for a in sys.argv[1:]] or [220000, 2000000]:
        for schema in SCHEMAS:
            frames = frames_of_one_tick(schema, rows)
            print(f"{rows:>9} rows, {schema}: {frames} pages ({frames * PAGE / 1e6:.1f} MB of WAL)"
                  f" for one tick of {TICK} decisions")


if __name__ == "__main__":
    main()
