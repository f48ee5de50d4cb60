"""Drives `mend review` in a pseudo-terminal with keystrokes.

Usage: drive.py MEND_BINARY ROOT STEPS...

Each step is one of:
  wait:TEXT         read the screen until a row shows TEXT (10 s at most)
  mend:ARGS         run MEND_BINARY with ARGS (split at spaces) in ROOT, as
                    another command changing the session meanwhile; it must
                    exit 0
  write:PATH:TEXT   write TEXT (`\\n` for a line break) to ROOT/PATH
  lock:PATH         hold an exclusive flock on ROOT/PATH (as another mend
                    would hold a lock), writing "drive.py (pid N)" into it
  unlock:           release it
  arg:ARG           (before the others) one more argument for `mend review`
  anything else     typed as keys

The output is kept on a small screen model (cursor moves, clears and text;
colours ignored), so a wait sees what a person would, however the
terminal was told to draw it. Exits 0 when every step was met and mend
exited 0; prints the screen otherwise.
"""

import codecs
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
import unicodedata

ROWS, COLS = 30, 110


class Screen:
    """The cells of a terminal, fed with what the program writes."""

    def __init__(self):
        self.cells = [[" "] * COLS for _ in range(ROWS)]
        self.row = self.col = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = ""

    def feed(self, data):
        text = self.pending + self.decoder.decode(data)
        self.pending = ""
        i = 0
        while i < len(text):
            c = text[i]
            if c == "\x1b":
                end = self.escape(text, i)
                if end is None:
                    self.pending = text[i:]
                    return
                i = end
                continue
            self.put(c)
            i += 1

    def escape(self, text, i):
        """Applies the escape sequence at i; returns where it ends, or None
        when it is not complete yet."""
        if i + 1 >= len(text):
            return None
        if text[i + 1] != "[":
            return i + 2
        j = i + 2
        while j < len(text) and not ("@" <= text[j] <= "~"):
            j += 1
        if j >= len(text):
            return None
        self.csi(text[i + 2 : j], text[j])
        return j + 1

    def csi(self, params, final):
        nums = [int(p) if p.isdigit() else 0 for p in params.lstrip("?").split(";")]
        first = nums[0] if nums and nums[0] else 1
        if final in "Hf":
            row = nums[0] if nums and nums[0] else 1
            col = nums[1] if len(nums) > 1 and nums[1] else 1
            self.row, self.col = min(row, ROWS) - 1, min(col, COLS) - 1
        elif final == "J":
            start = 0 if nums and nums[0] == 2 else self.row
            for r in range(start, ROWS):
                self.cells[r] = [" "] * COLS
        elif final == "K":
            self.cells[self.row][self.col :] = [" "] * (COLS - self.col)
        elif final == "G":
            self.col = min(first, COLS) - 1
        elif final == "C":
            self.col = min(self.col + first, COLS - 1)
        elif final == "D":
            self.col = max(self.col - first, 0)
        elif final == "A":
            self.row = max(self.row - first, 0)
        elif final == "B":
            self.row = min(self.row + first, ROWS - 1)

    def put(self, c):
        if c == "\r":
            self.col = 0
        elif c == "\n":
            self.row = min(self.row + 1, ROWS - 1)
        elif c == "\b":
            self.col = max(self.col - 1, 0)
        elif c >= " ":
            if self.col < COLS:
                self.cells[self.row][self.col] = c
            wide = unicodedata.east_asian_width(c) in "WF"
            self.col = min(self.col + (2 if wide else 1), COLS)

    def shows(self, text):
        return any(text in "".join(r) for r in self.cells)

    def dump(self):
        return "\n".join("".join(r).rstrip() for r in self.cells)


def main():
    mend, root, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
    extra = [s[4:] for s in steps if s.startswith("arg:")]
    steps = [s for s in steps if not s.startswith("arg:")]
    held = None
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["NO_COLOR"] = "1"
        os.execv(mend, [mend, "review", "--root", root] + extra)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    screen = Screen()

    def read_until(text, limit=10.0):
        end = time.time() + limit
        while not screen.shows(text):
            left = end - time.time()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return screen.shows(text)
                if not chunk:
                    return screen.shows(text)
                screen.feed(chunk)
        return True

    def fail(code, why):
        sys.stdout.write("%s; the screen:\n%s\n" % (why, screen.dump()))
        os.kill(pid, 9)
        sys.exit(code)

    for step in steps:
        if step.startswith("wait:"):
            if not read_until(step[5:]):
                fail(1, "never saw %r" % step[5:])
        elif step.startswith("mend:"):
            done = subprocess.run([mend] + step[5:].split(" "), cwd=root, capture_output=True)
            if done.returncode != 0:
                fail(4, "%r exited %d: %r" % (step, done.returncode, done.stdout + done.stderr))
        elif step.startswith("lock:"):
            held = open(os.path.join(root, step[5:]), "r+")
            fcntl.flock(held, fcntl.LOCK_EX)
            held.truncate(0)
            held.write("drive.py (pid %d)\n" % os.getpid())
            held.flush()
        elif step == "unlock:":
            fcntl.flock(held, fcntl.LOCK_UN)
            held.close()
        elif step.startswith("write:"):
            path, text = step[6:].split(":", 1)
            with open(os.path.join(root, path), "w") as f:
                f.write(text.replace("\\n", "\n"))
        else:
            os.write(fd, step.encode())
    # Drain until mend exits.
    end = time.time() + 10
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            sys.exit(0 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 2)
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                screen.feed(os.read(fd, 65536))
            except OSError:
                pass
    fail(3, "mend review did not exit")


main()
