#!/usr/bin/python3
"""A FUSE filesystem that can lose power: what was not synced is gone after a cut.

    powercut_fs.py BACKING MOUNTPOINT      mounts (in the foreground) until unmounted or killed

Issue 34: `todosync serve` answered 201 to inserts that a power cut then took away. A SIGKILL
cannot show that (the kernel keeps a dead process's writes), so the power-cut tests put their
SQLite files (or a PostgreSQL data directory) on this filesystem and pull the plug by SIGKILL-ing
this process.

Semantics (those of a journaling disk such as ext4, simplified; in the spirit of LazyFS):

- Every operation (create, write, truncate, rename, unlink, mkdir...) changes only this process's
  memory. Reads see all of it, as on a running machine.
- fsync/fdatasync of a file makes durable its content (whichever handle the call comes on: the
  file's inode is flushed) and its own name: its entry in its current directory, the removal of its
  older names, and the names of the directories on the way to it, each with its mode and owner.
- fsync of a directory makes all of its entries durable as they are now (new, renamed, removed);
  a file it names that was never synced is durably empty.
- Nothing else is ever durable: not sync() or syncfs() (libfuse2 never hears of them), nor a rename
  that replaces a file (no ext4 auto_da_alloc). A power cut is SIGKILL of this process: memory is lost,
  and the next mount shows only the durable state. Files created and never synced disappear; unsynced
  writes and truncates vanish; a file whose name was durable but whose data was not shows its older
  content. Not modelled: torn or reordered writes within an fsync (one returns with all of it durable).

Kill every process that uses the mount before the cut: an fsync still in progress is then finished
(the kernel makes a killed process wait for a request this filesystem is serving), and nothing more
is written. Then unmount the dead mount (`fusermount3 -u`, or `umount -l`) and mount again.

The durable state lives in BACKING: `data/<inode>` holds each synced file's content (written in
place, only the 4 KiB blocks changed since its last sync) and `names.json` the durable directory
tree (directory inode -> {name: inode}) with modes, replaced atomically. Mounting drops the inodes
no durable name reaches, as fsck frees orphans.

A failing disk: while BACKING/fail-syncs exists, every fsync and fdatasync fails with EIO (nothing of
the call becomes durable). A file, not a signal: libfuse's loop holds the main thread, where Python
would run a signal handler.

Owners: a file or directory belongs to the process that created it (uid and gid), chown changes
that, and the owner is durable with the name. Mounted with allow_other, so that other users reach
it (PostgreSQL runs as `postgres` and refuses a data directory it does not own). No permission
checks (no default_permissions): every user may do anything, as root may on a real disk.

Memory-mapped files work (no direct_io): SQLite's WAL index (`-shm`) is mmap-ed MAP_SHARED; its
pages reach this filesystem as writes, and SQLite never syncs it, so it does not survive a cut
(SQLite rebuilds it). POSIX locks are left to the kernel (local to this machine, as they should be).
"""
import errno
import json
import os
import stat
import sys
import threading
import time

try:
    import fusepy as fuse  # Debian's python3-fusepy
except ImportError:
    import fuse  # fusepy from PyPI

BLOCK = 4096
ROOT_INODE = 1


class Node:
    """A file or directory as the running machine sees it."""

    def __init__(self, inode, mode, data=b""):
        self.inode, self.mode = inode, mode
        self.parent, self.name = None, None  # the current directory entry (none once unlinked)
        self.children = {} if stat.S_ISDIR(mode) else None
        self.data = bytearray(data)
        self.dirty = set()  # blocks written since the last sync
        self.low = len(data)  # the smallest size since the last sync (a truncate below it lost data)
        now = time.time_ns()
        self.atime = self.mtime = self.ctime = now
        self.uid, self.gid = os.getuid(), os.getgid()

    def owner(self):
        return [self.uid, self.gid]


class PowerCutFS(fuse.Operations):
    use_ns = True  # times in nanoseconds

    def __init__(self, backing):
        self.backing = backing
        # One operation at a time. (Not named "lock": fusepy would take it for the lock operation.)
        self.mutex = threading.Lock()
        self.handles, self.next_handle = {}, 1
        self.failing_switch = os.path.join(backing, "fail-syncs")  # while it exists, syncs fail with EIO
        os.makedirs(os.path.join(backing, "data"), exist_ok=True)
        self.load()

    # The durable state ---------------------------------------------------------------------------

    def load(self):
        """The machine comes back: the tree the durable names reach, with the synced contents."""
        try:
            with open(os.path.join(self.backing, "names.json")) as file:
                saved = json.load(file)
        except FileNotFoundError:
            saved = {"entries": {str(ROOT_INODE): {}}, "modes": {str(ROOT_INODE): stat.S_IFDIR | 0o755}}
        entries = {int(k): {name: int(i) for name, i in v.items()} for k, v in saved["entries"].items()}
        modes = {int(k): v for k, v in saved["modes"].items()}
        owners = {int(k): v for k, v in saved.get("owners", {}).items()}
        self.nodes = {}

        def build(inode, parent, name):
            mode = modes[inode]
            data = b""
            if not stat.S_ISDIR(mode):
                try:
                    with open(self.data_path(inode), "rb") as file:
                        data = file.read()
                except FileNotFoundError:
                    pass
            node = self.nodes[inode] = Node(inode, mode, data)
            node.parent, node.name = parent, name
            node.uid, node.gid = owners.get(inode, node.owner())
            for child_name, child in entries.get(inode, {}).items():
                node.children[child_name] = build(child, node, child_name)
            return node

        self.root = build(ROOT_INODE, None, None)
        self.durable = {inode: entries.get(inode, {}) for inode in self.nodes if stat.S_ISDIR(modes[inode])}
        self.modes = {inode: modes[inode] for inode in self.nodes}
        self.owners = {inode: self.nodes[inode].owner() for inode in self.nodes}
        for file_name in os.listdir(os.path.join(self.backing, "data")):
            if int(file_name) not in self.nodes:
                os.remove(os.path.join(self.backing, "data", file_name))
        self.next_inode = max(self.nodes) + 1
        self.save_names()

    def data_path(self, inode):
        return os.path.join(self.backing, "data", str(inode))

    def save_names(self):
        path = os.path.join(self.backing, "names.json")
        with open(path + ".new", "w") as file:
            file.write(json.dumps({"entries": self.durable, "modes": self.modes, "owners": self.owners}))
        os.replace(path + ".new", path)

    def commit_name(self, node):
        """Makes the node's current name durable (and the removal of its older ones), with its mode
        and owner; whether that changed the durable tree."""
        current = (node.parent.inode, node.name) if node.parent is not None else None
        changed = False
        for directory, entries in self.durable.items():
            for name in [name for name, inode in entries.items() if inode == node.inode]:
                if (directory, name) != current:
                    del entries[name]
                    changed = True
        if node.parent is not None:
            changed = self.commit_name(node.parent) or changed
            if self.durable[node.parent.inode].get(node.name) != node.inode:
                self.durable[node.parent.inode][node.name] = node.inode
                changed = True
        if node.children is not None and node.inode not in self.durable:
            self.durable[node.inode] = {}
            changed = True
        if (self.modes.get(node.inode), self.owners.get(node.inode)) != (node.mode, node.owner()):
            self.modes[node.inode], self.owners[node.inode] = node.mode, node.owner()
            changed = True
        return changed

    def commit_data(self, node):
        """Writes the blocks changed since the last sync to the node's durable content."""
        path = self.data_path(node.inode)
        with open(path, "r+b" if os.path.exists(path) else "w+b") as file:
            file.truncate(node.low)
            file.truncate(len(node.data))
            for block in sorted(node.dirty):
                start = block * BLOCK
                if start < len(node.data):
                    file.seek(start)
                    file.write(node.data[start:start + BLOCK])
        node.dirty.clear()
        node.low = len(node.data)

    # Paths and handles ---------------------------------------------------------------------------

    def __call__(self, op, *args):
        with self.mutex:
            return super().__call__(op, *args)

    def lookup(self, path):
        node = self.root
        for part in path.strip("/").split("/") if path.strip("/") else []:
            if node.children is None:
                raise fuse.FuseOSError(errno.ENOTDIR)
            if part not in node.children:
                raise fuse.FuseOSError(errno.ENOENT)
            node = node.children[part]
        return node

    def node_of(self, path, fh):
        return self.handles[fh] if fh is not None and fh in self.handles else self.lookup(path)

    def parent_of(self, path):
        head, name = os.path.split(path.rstrip("/"))
        parent = self.lookup(head)
        if parent.children is None:
            raise fuse.FuseOSError(errno.ENOTDIR)
        return parent, name

    def new_handle(self, node):
        handle = self.next_handle
        self.next_handle += 1
        self.handles[handle] = node
        return handle

    def add(self, path, mode):
        parent, name = self.parent_of(path)
        if name in parent.children:
            raise fuse.FuseOSError(errno.EEXIST)
        node = self.nodes[self.next_inode] = Node(self.next_inode, mode)
        self.next_inode += 1
        node.uid, node.gid, _ = fuse.fuse_get_context()  # the creating process's, as a disk records them
        node.parent, node.name = parent, name
        parent.children[name] = node
        parent.mtime = time.time_ns()
        return node

    def detach(self, node):
        del node.parent.children[node.name]
        node.parent.mtime = time.time_ns()
        node.parent = node.name = None

    # Operations ----------------------------------------------------------------------------------

    def getattr(self, path, fh=None):
        node = self.node_of(path, fh)
        if node.children is not None:
            size, links = 4096, 2 + sum(1 for child in node.children.values() if child.children is not None)
        else:
            size, links = len(node.data), 1 if node.parent is not None else 0
        return {"st_mode": node.mode, "st_nlink": links, "st_size": size, "st_blocks": (size + 511) // 512,
                "st_uid": node.uid, "st_gid": node.gid,
                "st_atime": node.atime, "st_mtime": node.mtime, "st_ctime": node.ctime}

    def readdir(self, path, fh):
        return [".", ".."] + list(self.lookup(path).children)

    def statfs(self, path):
        return {"f_bsize": BLOCK, "f_frsize": BLOCK, "f_blocks": 1 << 20, "f_bfree": 1 << 19,
                "f_bavail": 1 << 19, "f_files": 1 << 16, "f_ffree": 1 << 15, "f_namemax": 255}

    def create(self, path, mode, fi=None):
        return self.new_handle(self.add(path, stat.S_IFREG | (mode & 0o7777)))

    def open(self, path, flags):
        return self.new_handle(self.lookup(path))

    def release(self, path, fh):
        self.handles.pop(fh, None)

    def mkdir(self, path, mode):
        self.add(path, stat.S_IFDIR | (mode & 0o7777))

    def rmdir(self, path):
        node = self.lookup(path)
        if node.children:
            raise fuse.FuseOSError(errno.ENOTEMPTY)
        self.detach(node)

    def unlink(self, path):
        self.detach(self.lookup(path))

    def rename(self, old, new):
        node = self.lookup(old)
        parent, name = self.parent_of(new)
        ancestor = parent
        while ancestor is not None:
            if ancestor is node:
                raise fuse.FuseOSError(errno.EINVAL)
            ancestor = ancestor.parent
        replaced = parent.children.get(name)
        if replaced is node:
            return
        if replaced is not None:
            if replaced.children:
                raise fuse.FuseOSError(errno.ENOTEMPTY)
            self.detach(replaced)
        self.detach(node)
        node.parent, node.name = parent, name
        parent.children[name] = node
        node.ctime = time.time_ns()

    def chmod(self, path, mode):
        node = self.lookup(path)
        node.mode = stat.S_IFMT(node.mode) | (mode & 0o7777)
        node.ctime = time.time_ns()

    def chown(self, path, uid, gid):
        node = self.lookup(path)
        node.uid = uid if uid != -1 else node.uid
        node.gid = gid if gid != -1 else node.gid
        node.ctime = time.time_ns()

    def utimens(self, path, times=None):
        node = self.lookup(path)
        node.atime, node.mtime = times or (time.time_ns(), time.time_ns())

    def read(self, path, size, offset, fh):
        return bytes(self.node_of(path, fh).data[offset:offset + size])

    def write(self, path, data, offset, fh):
        node = self.node_of(path, fh)
        end = offset + len(data)
        if end > len(node.data):
            node.data.extend(bytes(end - len(node.data)))
        node.data[offset:end] = data
        node.dirty.update(range(offset // BLOCK, (end - 1) // BLOCK + 1))
        node.mtime = time.time_ns()
        return len(data)

    def truncate(self, path, length, fh=None):
        node = self.node_of(path, fh)
        if length < len(node.data):
            del node.data[length:]
            node.low = min(node.low, length)
        else:
            node.data.extend(bytes(length - len(node.data)))
        node.mtime = time.time_ns()

    def fsync(self, path, datasync, fh):
        if os.path.exists(self.failing_switch):
            raise fuse.FuseOSError(errno.EIO)
        node = self.node_of(path, fh)
        self.commit_data(node)
        if self.commit_name(node):  # a file synced again, as a log is, leaves the names as they were
            self.save_names()

    def fsyncdir(self, path, datasync, fh):
        if os.path.exists(self.failing_switch):
            raise fuse.FuseOSError(errno.EIO)
        directory = self.lookup(path)
        self.commit_name(directory)
        for child in directory.children.values():
            self.commit_name(child)
        self.durable[directory.inode] = {name: child.inode for name, child in directory.children.items()}
        self.save_names()


def main():
    backing, mountpoint = sys.argv[1:3]
    fuse.FUSE(PowerCutFS(backing), mountpoint, foreground=True, nothreads=False, hard_remove=True,
              big_writes=True, fsname="powercut", allow_other=True)


if __name__ == "__main__":
    main()
