"""Drives `mend review` in a pseudo-terminal with keystrokes.

Usage: drive.py MEND_BINARY ROOT KEYS...

Each KEYS argument is `text` to type, or `wait:WORD` to read the screen
until WORD appears (10 s at most; the screen is drawn with cursor moves
between words, so wait for one word). Exits 0 when every wait was met and
mend exited 0; prints the last screen bytes otherwise.
"""

import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time


def main():
    mend, root, steps = sys.argv[1], sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ["NO_COLOR"] = "1"
        os.execv(mend, [mend, "review", "--root", root])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 110, 0, 0))
    seen = b""

    def read_until(text, limit=10.0):
        nonlocal seen
        end = time.time() + limit
        while text.encode() not in seen:
            left = end - time.time()
            if left <= 0:
                return False
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return text.encode() in seen
                if not chunk:
                    return text.encode() in seen
                seen += chunk
        return True

    for step in steps:
        if step.startswith("wait:"):
            if not read_until(step[5:]):
                sys.stdout.write("never saw %r; last output:\n%r\n" % (step[5:], seen[-3000:]))
                os.kill(pid, 9)
                sys.exit(1)
            seen = b""
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
                os.read(fd, 65536)
            except OSError:
                pass
    os.kill(pid, 9)
    sys.stdout.write("mend review did not exit\n")
    sys.exit(3)


main()
