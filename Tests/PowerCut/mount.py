"""Mounts powercut_fs.py for a test, cuts its power, and always unmounts.

    with PowerCutMount(folder) as disk:      # disk.path is the mount point
        ...                                  # SIGKILL every process that uses disk.path first
        disk.cut()                           # drops what was not synced, mounts the durable state

The filesystem runs in its own process, in a Python that has fusepy: Debian's /usr/bin/python3 with
python3-fusepy, or POWERCUT_PYTHON. A cut is SIGKILL of that process, so nothing it held in memory
survives.
"""
import os
import shutil
import subprocess
import time

FS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "powercut_fs.py")
PYTHON = os.environ.get("POWERCUT_PYTHON") or "/usr/bin/python3"


class PowerCutMount:
    def __init__(self, folder):
        self.backing = os.path.join(folder, "backing")
        self.path = os.path.join(folder, "mnt")
        self.log_path = os.path.join(folder, "fs.log")
        self.process = None
        os.makedirs(self.backing, exist_ok=True)
        os.makedirs(self.path, exist_ok=True)

    def __enter__(self):
        self.mount()
        return self

    def __exit__(self, *exc):
        self.unmount(kill=False)

    def mounted(self):
        """Whether the mount is there, alive or dead (a dead one fails os.path.ismount)."""
        with open("/proc/self/mountinfo") as mounts:
            return any(line.split()[4] == self.path for line in mounts)

    def mount(self, deadline_s=60):
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen([PYTHON, FS, self.backing, self.path],
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + deadline_s
        while not os.path.ismount(self.path):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.unmount(kill=True)
                with open(self.log_path) as log:
                    raise RuntimeError(f"powercut_fs did not mount {self.path}:\n{log.read()}")
            time.sleep(0.02)

    def fail_syncs(self, failing):
        """From now on every fsync fails with EIO (a failing disk), or works again."""
        switch = os.path.join(self.backing, "fail-syncs")
        if failing:
            open(switch, "w").close()
        elif os.path.exists(switch):
            os.remove(switch)

    def cut(self):
        """Power cut: the filesystem's memory is lost; the disk comes back with what was synced."""
        self.unmount(kill=True)
        self.mount()

    def unmount(self, kill):
        """Unmounts (after SIGKILL of the filesystem for a cut) and waits for its process to end."""
        if self.process is None:
            return
        if kill:
            self.process.kill()
            self.process.wait()
        for command in (["fusermount3", "-u"], ["fusermount", "-u"], ["umount", "-l"]):
            if not self.mounted():
                break
            if shutil.which(command[0]):
                subprocess.run(command + [self.path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None
