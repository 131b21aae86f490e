"""A PostgreSQL cluster whose data directory is on the power-cut disk (power_cut.py --store postgres).

    with PostgresOnDisk(folder, disk) as cluster:   # initdb and start (scripts/postgres-cluster.sh)
        cluster.url                                 # postgres://todosync@127.0.0.1:PORT/todosync...
        cluster.kill()                              # SIGKILL of the postmaster and every backend
        disk.cut()
        cluster.recover()                           # starts again on its port: recovery from the WAL
        cluster.check()                             # pg_amcheck of the database: complaints, or None
                                                    # at the end: stopped, its log kept

The cluster is durable (POSTGRES_DURABLE=1: fsync, synchronous_commit and full_page_writes on), so
a commit PostgreSQL acknowledged is in WAL that was fsync-ed, which the cut keeps. POSTGRES_OPTIONS
adds server options: "-c synchronous_commit=off" (commits answered before their WAL is synced) makes
the power-cut test report lost inserts; with "-c fsync=off" too, nothing after initdb is durable and
the database itself is gone after the cut.

Its folder (FOLDER/postgres: log, socket, port, options) is off the disk, its data directory
(DISK/pgdata) on it. PostgreSQL runs as `postgres`, and wants its data directory owned by that user
with mode 0700: the filesystem records owners (the creator's, or chown's) and keeps them durable
with the names; postgres-cluster.sh creates the directory and chowns it to `postgres`, and initdb
syncs it. The run folder must let `postgres` through (mode 0711), the mount allows other users.
"""
import ctypes
import os
import shutil
import signal
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "postgres-cluster.sh")
PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
TIMEOUT = 180  # seconds for initdb or a recovery on the power-cut filesystem, on a loaded machine


class PostgresOnDisk:
    def __init__(self, folder, disk):
        self.dir, self.folder = os.path.join(folder, "postgres"), folder
        self.data = os.path.join(disk.path, "pgdata")
        self.postmaster, self.url, self.port = None, None, None  # its pid and address, once started

    def __enter__(self):
        os.chmod(self.folder, 0o711)
        become_subreaper()
        environment = dict(os.environ, POSTGRES_DURABLE="1", POSTGRES_DATA=self.data)
        try:
            self.url = self.script("start", environment).strip().splitlines()[-1]
            self.port = self.url.split("@127.0.0.1:", 1)[1].split("/", 1)[0]
            self.postmaster = self.postmaster_pid()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def script(self, command, environment=None):
        done = subprocess.run([SCRIPT, command, self.dir], capture_output=True, text=True, env=environment,
                              timeout=TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"postgres-cluster.sh {command} failed: {done.stderr.strip()[-2000:]}")
        return done.stdout

    def postmaster_pid(self):
        """The postmaster's pid (the first line of postmaster.pid)."""
        with open(os.path.join(self.data, "postmaster.pid")) as file:
            return int(file.readline())

    def kill(self):
        """SIGKILL of every process of the cluster, as a power cut stops them: the postmaster is
        stopped first (it forks no backend after that), then it and its children are killed, and
        this returns once none of them runs (nor writes) any more."""
        postmaster, self.postmaster = self.postmaster, None
        if postmaster is None or command(postmaster) != "postgres":
            return  # never started, or gone (its pid now another program's)
        pids = [postmaster]
        if alive(postmaster):
            os.kill(postmaster, signal.SIGSTOP)
            wait_until(lambda: state(postmaster) in ("T", "Z", None), "the postmaster to stop")
            pids += children(postmaster)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass  # a backend that had just ended
        reap(pids)

    def recover(self):
        """Starts PostgreSQL again on the same data directory and port, after a cut."""
        self.script("recover")
        self.postmaster = self.postmaster_pid()

    def check(self):
        """pg_amcheck of the database (heap and B-tree indexes, as integrity_check of SQLite): what
        it complains about, or None."""
        done = subprocess.run([pg_binary("pg_amcheck"), "-h", "127.0.0.1", "-p", self.port, "-U", "todosync",
                               "--install-missing", "--heapallindexed", "-d", "todosync"],
                              capture_output=True, text=True, timeout=TIMEOUT)
        return None if done.returncode == 0 else (done.stdout + done.stderr).strip()[-1000:]

    def stop(self):
        """Stops the cluster (its log kept as FOLDER/postgres.log) and removes its folder."""
        log = os.path.join(self.dir, "server.log")
        if os.path.exists(log):
            shutil.copy(log, os.path.join(self.folder, "postgres.log"))
        try:
            self.script("stop")
        finally:
            self.kill()  # what `pg_ctl stop` could not reach (the disk gone, say); reaps the postmaster


def become_subreaper():
    """Makes this process the parent of the cluster's orphans: the postmaster (pg_ctl, its parent,
    ends) and, once it is killed, its backends. Killed, they are zombies until reaped, and a zombie
    postmaster would look alive to the next one (`lock file "postmaster.pid" already exists`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def reap(pids):
    """Waits until none of `pids` is a process any more (reaping those that are this one's)."""
    def gone(pid):
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not (or not yet) this process's child
        return state(pid) is None
    wait_until(lambda: all([gone(pid) for pid in pids]), f"PostgreSQL's processes {pids} to end after SIGKILL")


def wait_until(condition, what):
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {TIMEOUT} s for {what}")
        time.sleep(0.005)


def pg_binary(name):
    versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: [int(p) for p in v.split(".")])
    return os.path.join("/usr/lib/postgresql", versions[-1], "bin", name)


def state(pid):
    """The process's state letter (R, S, D, T, Z...), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def command(pid):
    try:
        with open(f"/proc/{pid}/comm") as file:
            return file.read().strip()
    except OSError:
        return None


def alive(pid):
    return state(pid) not in ("Z", None)


def children(parent):
    """The pids of `parent`'s children."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as file:
                    if int(file.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(name))
            except (OSError, IndexError, ValueError):
                pass
    return found
