#!/usr/bin/env python3
"""Checks powercut_fs.py itself, before the power-cut loop trusts it (scripts/power-cut-loop.sh).

A cut must drop exactly what was not synced (and keep a synced directory's owner and mode, which
PostgreSQL checks), and SQLite in WAL mode must work on the mount from two processes at once (the
`-shm` index is mmap-ed MAP_SHARED). With synchronous=FULL every commit survives a cut; with
synchronous=NORMAL the commits since the last checkpoint do not, which is what the power-cut loop
must be able to see. Prints what failed; exit status 1 on any failure.
"""
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mount import PowerCutMount  # noqa: E402

problems = []


def expect(what, actual, wanted):
    if actual != wanted:
        problems.append(f"{what}: {actual!r}, expected {wanted!r}")


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)


def files(disk):
    folder = disk.path
    with open(f"{folder}/synced", "w") as file:
        file.write("kept")
        file.flush()
        os.fsync(file.fileno())
        file.write(" and lost")
    with open(f"{folder}/named", "w") as file:
        file.write("content never synced")
    with open(f"{folder}/truncated", "w") as file:
        file.write("long content")
        file.flush()
        os.fsync(file.fileno())
        file.truncate(4)
    os.mkdir(f"{folder}/sub")
    os.mkdir(f"{folder}/owned", 0o700)
    os.chown(f"{folder}/owned", 4321, 4322)  # as PostgreSQL's data directory is handed to `postgres`
    fsync_path(folder)
    with open(f"{folder}/never-synced", "w") as file:
        file.write("gone")
    for name, content in [("sub/inner", "inner"), ("renamed", "old name")]:  # a name synced with its file
        with open(f"{folder}/{name}", "w") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
    with open(f"{folder}/two-handles", "w") as writer, open(f"{folder}/two-handles") as other:
        writer.write("synced through another handle")
        writer.flush()
        os.fsync(other.fileno())  # flushes the file, whichever handle wrote
    os.rename(f"{folder}/renamed", f"{folder}/moved")  # never synced: the old name comes back
    disk.cut()
    expect("files after the cut", sorted(os.listdir(folder)),
           ["named", "owned", "renamed", "sub", "synced", "truncated", "two-handles"])
    owned = os.stat(f"{folder}/owned")
    expect("owner and mode of a directory after the cut", (owned.st_uid, owned.st_gid, owned.st_mode & 0o777),
           (4321, 4322, 0o700))
    for name, content in [("synced", "kept"), ("named", ""), ("truncated", "long content"),
                          ("sub/inner", "inner"), ("renamed", "old name"),
                          ("two-handles", "synced through another handle")]:
        with open(f"{folder}/{name}") as file:
            expect(f"{name} after the cut", file.read(), content)


def sqlite(disk, synchronous, rows):
    """Commits `rows` rows (one transaction each, a reader in another process between them);
    returns how many survive a cut."""
    path = f"{disk.path}/{synchronous}.sqlite"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {synchronous}")
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    for n in range(rows):
        db.execute("INSERT INTO t (body) VALUES (?)", ("x" * 3000,))
        if n % 50 == 0:  # another process reads through the shared WAL index
            seen = subprocess.run([sys.executable, "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1])"
                                   ".execute('SELECT COUNT(*) FROM t').fetchone()[0])", path],
                                  capture_output=True, text=True)
            expect(f"rows another process sees ({synchronous})", seen.stdout.strip(), str(n + 1))
    # The cut comes while the connection is open (closing it would checkpoint).
    disk.cut()
    db = sqlite3.connect(path)
    expect(f"integrity after the cut ({synchronous})", db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
    kept = db.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    db.close()
    return kept


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: still unmount
    with tempfile.TemporaryDirectory(prefix="powercut-check.") as folder, PowerCutMount(folder) as disk:
        files(disk)
        expect("rows kept with synchronous=FULL", sqlite(disk, "FULL", 400), 400)
        kept = sqlite(disk, "NORMAL", 400)
        if kept >= 400:
            problems.append(f"synchronous=NORMAL kept all {kept} rows: a cut lost nothing unsynced")
        print(f"check_fs: synchronous=NORMAL kept {kept} of 400 rows after a cut, FULL 400 of 400 (expected)")
    for problem in problems:
        print(f"  check_fs: {problem}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
