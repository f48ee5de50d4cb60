#!/usr/bin/env python3
"""Collect real merges from a project's git history into merge-replay cases.

Run it on a clone (or bare mirror) of a public project:

    python3 crates/mend/examples/merge_replay/collect.py GIT_DIR PROJECT OUT_DIR [MAX_CASES]

    GIT_DIR    the project's git directory (a bare mirror or a clone's .git)
    PROJECT    the project's short name; cases are named PROJECT-rNNNN
    OUT_DIR    where to write the cases, e.g. target/merge-replay-cases
    MAX_CASES  at most this many cases (default 200)

The replay reads a tarball that unpacks to merge-replay-cases/, so name the
output folder merge-replay-cases, pack it and point the replay at the file:

    tar czf cases.tar.gz -C PARENT_OF_OUT_DIR merge-replay-cases
    MEND_MERGE_REPLAY=$PWD/cases.tar.gz \
        cargo run --release -p mend --example merge_replay -- --projects held-out

Projects not in cases.rs's TUNE list count as held out.

The cases are other projects' files. Write them outside the repository (or
under target/) and NEVER commit them; only this script belongs in mend.

Each case is a folder OUT_DIR/PROJECT-rNNNN/ holding

    base       the file at the merge base of the merge's two parents
    ours       the file in the merge's first parent
    theirs     the file in its second parent
    merged     the file as the merge commit holds it (what the person committed)
    meta.json  {"id", "repo": PROJECT, "merge": <merge commit id>, "path", "lang": <extension>}

The rules (those of the shared merge-replay README):

- merges: commits with exactly two parents and exactly one merge base,
  reachable from any ref (`git rev-list --all`). In a GitHub mirror that
  takes in the pull requests' refs too: refs/pull/*/head (merges people
  made on their branches) and refs/pull/*/merge (GitHub's trial merge of
  an open pull request, made only where it merges cleanly). The first
  corpus was built this way;
- files: changed on both sides relative to the base (a regular file in base,
  ours, theirs and the merge commit, under the same path), and ours and
  theirs differ from each other;
- text: the extension is a source, documentation or configuration one
  (TEXT_EXTENSIONS, Markdown, reST, YAML and TOML included; lock files are
  not), every one of the four versions is valid UTF-8, holds no NUL byte and
  is under 400 KB;
- at most 3 files per merge (the first three kept ones in path order);
- at most MAX_CASES per project, spread evenly over the history: all the
  kept files are listed oldest merge first (`git rev-list --all --merges
  --reverse` order, then path), and if there are n > MAX_CASES of them,
  those at positions floor(i * n / MAX_CASES), i = 0 .. MAX_CASES-1, are
  taken.

The output depends only on the repository's refs and objects: the same
mirror gives the same cases. Run on mirrors of jinja and fd, it gives
their 200 cases in the shared cases-9 set byte for byte. Existing
PROJECT-r* folders in OUT_DIR are not overwritten; the script stops
instead.

Python 3 standard library and the git command line only.
"""

import json
import os
import subprocess
import sys

MAX_BYTES = 400 * 1024
FILES_PER_MERGE = 3
TEXT_EXTENSIONS = {
    # source
    "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "tsx", "mts", "cts", "rs", "sh",
    # documentation
    "md", "rst", "txt",
    # configuration
    "yml", "yaml", "toml", "json", "ini", "cfg",
}
REGULAR = ("100644", "100755")


def git(gd, *args, text=True):
    out = subprocess.run(
        ["git", "--git-dir", gd, *args],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ).stdout
    return out.decode("utf-8", "surrogateescape") if text else out


class Blobs:
    """Reads blobs through one `git cat-file --batch` process."""

    def __init__(self, gd):
        self.p = subprocess.Popen(
            ["git", "--git-dir", gd, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )

    def read(self, oid):
        self.p.stdin.write(oid.encode() + b"\n")
        self.p.stdin.flush()
        header = self.p.stdout.readline().split()
        if len(header) < 3 or header[1] != b"blob":
            return None
        size = int(header[2])
        data = self.p.stdout.read(size)
        self.p.stdout.read(1)  # the newline after the contents
        return data

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def merges(gd):
    """(id, first parent, second parent) of every two-parent merge reachable
    from any ref, oldest first (`git rev-list --all --reverse` order)."""
    out = git(gd, "rev-list", "--all", "--merges", "--reverse", "--parents")
    res = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3:  # exactly two parents
            res.append((f[0], f[1], f[2]))
    return res


def changed(gd, a, b):
    """{path: (mode, oid)} of the paths b modified relative to a."""
    out = git(gd, "diff-tree", "-r", "-z", "--no-renames", a, b)
    fields = out.split("\0")
    res = {}
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        m = meta.lstrip(":").split()
        if len(m) == 5 and m[4] == "M" and m[0] in REGULAR and m[1] in REGULAR:
            res[path] = (m[2], m[3])  # base oid, new oid
    return res


def entry(gd, commit, path):
    """(mode, oid) of path in commit, or None."""
    out = git(gd, "ls-tree", "-z", commit, "--", path)
    for rec in out.split("\0"):
        if not rec:
            continue
        meta, name = rec.split("\t", 1)
        mode, kind, oid = meta.split()
        if name == path and kind == "blob":
            return mode, oid
    return None


def is_text(data):
    if data is None or len(data) >= MAX_BYTES or b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def lang(path):
    name = path.rsplit("/", 1)[-1]
    if "." not in name.lstrip("."):
        return None
    ext = name.rsplit(".", 1)[1].lower()
    return ext if ext in TEXT_EXTENSIONS else None


def collect(gd, max_cases):
    """The kept files, oldest merge first: (merge, path, lang, four blob ids)."""
    blobs = Blobs(gd)
    kept = []
    try:
        for merge, p1, p2 in merges(gd):
            bases = subprocess.run(
                ["git", "--git-dir", gd, "merge-base", "--all", p1, p2],
                stdout=subprocess.PIPE,
            ).stdout.split()
            if len(bases) != 1:  # none (unrelated histories) or several
                continue
            base = bases[0].decode()
            ours = changed(gd, base, p1)
            theirs = changed(gd, base, p2)
            n = 0
            for path in sorted(set(ours) & set(theirs)):
                if n == FILES_PER_MERGE:
                    break
                ext = lang(path)
                if ext is None:
                    continue
                (b_oid, o_oid), (b2_oid, t_oid) = ours[path], theirs[path]
                if b_oid != b2_oid or o_oid == t_oid:
                    continue
                m = entry(gd, merge, path)
                if m is None or m[0] not in REGULAR:
                    continue
                oids = (b_oid, o_oid, t_oid, m[1])
                if not all(is_text(blobs.read(o)) for o in oids):
                    continue
                kept.append((merge, path, ext, oids))
                n += 1
    finally:
        blobs.close()
    n = len(kept)
    if n > max_cases:
        kept = [kept[i * n // max_cases] for i in range(max_cases)]
    return kept, n


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    gd, project, out = argv[1], argv[2], argv[3]
    max_cases = int(argv[4]) if len(argv) == 5 else 200
    os.makedirs(out, exist_ok=True)
    if any(d.startswith(project + "-r") for d in os.listdir(out)):
        sys.exit(f"{out} already holds {project}-r* cases; remove them first")
    kept, total = collect(gd, max_cases)
    blobs = Blobs(gd)
    try:
        for i, (merge, path, ext, oids) in enumerate(kept):
            cid = f"{project}-r{i:04d}"
            d = os.path.join(out, cid)
            os.makedirs(d)
            for name, oid in zip(("base", "ours", "theirs", "merged"), oids):
                with open(os.path.join(d, name), "wb") as f:
                    f.write(blobs.read(oid))
            meta = {"id": cid, "repo": project, "merge": merge, "path": path, "lang": ext}
            with open(os.path.join(d, "meta.json"), "w") as f:
                f.write(json.dumps(meta, indent=1))
    finally:
        blobs.close()
    merges_used = len({k[0] for k in kept})
    print(f"{project}: {len(kept)} cases from {merges_used} merges ({total} files eligible)")


if __name__ == "__main__":
    main(sys.argv)
