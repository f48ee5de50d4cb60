#!/usr/bin/env python3
"""Build response-replay cases from a git directory that committed aider transcripts.

Input: one or more bare git directories (no work tree needed). For every committed
version of a file named `.aider.chat.history.md` (in any folder) the transcript is
parsed, and every assistant response that aider applied and committed becomes a case
folder laid out like the shared replay corpus:

    <owner>.<repo>.<commit10>/response.md     the response, as the transcript holds it
    <owner>.<repo>.<commit10>/before/<path>   the parent commit's version of each file
    <owner>.<repo>.<commit10>/expected/<path> the commit's version of each file
    <owner>.<repo>.<commit10>/meta.json

Responses that aider reported as failing, followed in the same turn by a response that
aider applied, become `refuse_or_unknown` cases (id `<owner>.<repo>.x<commit10>`), whose
`expected/` is the state after that next response.

How aider writes its transcript (aider/io.py, the same from v0.40 to v0.86):
- a session starts with `# aider chat started at ...`;
- each line the user typed is `#### line` followed by two spaces;
- aider's own messages are `> message` followed by two spaces; a multi-line message
  printed with `tool_output` gets `> ` on its first line only, and the two spaces on its
  last line only (the SEARCH/REPLACE failure report is printed this way since v0.5x);
- a model response is written as a blank line, the response with surrounding white
  space stripped, and a blank line.

Only the standard library and `git` on PATH are used. Run with `--help` for usage.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from reproduce import blocks, reproduce, resolve

TRANSCRIPT_NAME = ".aider.chat.history.md"
MAX_FILE_BYTES = 1 << 20

# Lines aider prints when a response could not be applied as sent.
FAILURE_MARKERS = (
    "The LLM did not conform to the edit format",
    "SearchReplaceNoExactMatch",
    "UnifiedDiffNoMatch",
    "UnifiedDiffNotUnique",
    "Failed to apply edit",
    "Malformed response",
    "failed to match!",
)
# Lines after which the state of the files is unknown: no case is made from them.
ABORT_MARKERS = (
    "Exception while updating files",
    "Unable to commit",
    "Skipping edits to",
    "Unable to create",
    "^C KeyboardInterrupt",
    "Did not apply edit",
)
# Text of aider's failure reports: a response holding it was cut from a report, not
# written by the model.
REPORT_TEXT = (
    "SearchReplaceNoExactMatch",
    "Did you mean to match some of these actual lines",
    "SEARCH/REPLACE block failed to match",
    "SEARCH/REPLACE blocks failed to match",
    "Just reply with fixed versions of the",
    "were applied successfully.",
)

COMMIT_RE = re.compile(r"^Commit ([0-9a-f]{7,40}) (.*)$")
APPLIED_RE = re.compile(r"^Applied edit to (.+)$")
VERSION_RE = re.compile(r"^Aider v(\d+\.\d+\.\d+)")
# "Model: M using F edit format" (v0.2x), "Model(s): M with F edit format, weak model W"
# (to v0.5x, with "♾️" before F when the model takes a prefill), "Main model: ..." (since).
MODEL_RE = re.compile(r"^(?:Main model|Models?): (\S+) (?:with|using) (?:\S+ )?([\w-]+) edit format")
EDITOR_RE = re.compile(r"^Editor model: (\S+) with ([\w-]+) edit format")


@dataclass
class Line:
    """One transcript line: its bytes with the line ending, and its text without."""

    raw: bytes
    text: str


@dataclass
class Item:
    """A parsed piece of transcript: a session start, user input, aider output or a response."""

    kind: str  # session | user | tool | response
    lines: list = field(default_factory=list)
    text: str = ""
    index: int = -1  # response number in the transcript, from 0
    version: str | None = None
    model: str | None = None
    fmt: str | None = None
    session: int = 0  # which `# aider chat started at` section the item is in


def split_lines(data: bytes) -> list[Line]:
    out = []
    for raw in data.splitlines(keepends=True):
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        out.append(Line(raw, text))
    return out


def is_aider_line(text: str) -> bool:
    """A `> ` or `#### ` line that aider wrote with its two trailing spaces."""
    return text.endswith("  ") and (text.startswith(">") or text.startswith("#### "))


def blob_end(lines: list[Line], i: int) -> int:
    """The last line of a multi-line message that starts at line i.

    Only that line ends with two spaces, but a line of code quoted in the message can
    too, so the failure reports of SEARCH/REPLACE and unified-diff edits end only at
    the line those reports end with.
    """
    head = lines[i].text[1:].strip()
    if re.match(r"# \d+ SEARCH/REPLACE blocks? failed to match", head):
        ends = ("docstrings, etc", "above that failed to match.")
    elif head.startswith("UnifiedDiffNo") or head.startswith("UnifiedDiffNot"):
        ends = ("```", "See the updated source code shown above.")
    else:
        ends = None
    for j in range(i, len(lines)):
        t = lines[j].text
        if not t.endswith("  ") or not t.strip():
            continue
        if ends is None or t.rstrip().endswith(ends):
            return j
    return len(lines) - 1


def parse_transcript(data: bytes) -> list[Item]:
    """Split a transcript into sessions, user input, aider output and model responses."""
    lines = split_lines(data)
    items: list[Item] = []
    i, n, pending = 0, len(lines), []
    prev_aider = False

    def flush():
        body = pending[:]
        pending.clear()
        while body and not body[0].text.strip():
            body.pop(0)
        while body and not body[-1].text.strip():
            body.pop()
        if body:
            items.append(Item("response", lines=body))

    while i < n:
        t = lines[i].text
        if t.startswith("# aider chat started at"):
            flush()
            items.append(Item("session", text=t))
            prev_aider = True
            i += 1
        elif is_aider_line(t):
            flush()
            kind = "user" if t.startswith("#### ") else "tool"
            items.append(Item(kind, text=t[2:].strip() if kind == "tool" else t[5:].rstrip()))
            prev_aider = True
            i += 1
        elif prev_aider and t.startswith(">"):
            # A multi-line `tool_output`: `> ` on its first line, two spaces on its last.
            flush()
            j = blob_end(lines, i)
            block = [ln.text for ln in lines[i : min(j + 1, n)]]
            block[0] = block[0][1:].strip()
            items.append(Item("tool", text="\n".join(block)))
            prev_aider = True
            i = j + 1
        else:
            pending.append(lines[i])
            prev_aider = False
            i += 1
    flush()
    annotate(items)
    return items


def annotate(items: list[Item]) -> None:
    """Number the responses and give each item the aider version, model and format in force."""
    version = model = fmt = None
    editor = None
    count = session = 0
    for it in items:
        if it.kind == "session":
            version = model = fmt = editor = None
            session += 1
        it.session = session
        if it.kind == "tool":
            first = it.text.split("\n", 1)[0]
            m = VERSION_RE.match(first)
            if m:
                version = m.group(1)
            m = MODEL_RE.match(first)
            if m:
                model, fmt = m.group(1), m.group(2)
                editor = None
            m = EDITOR_RE.match(first)
            if m:
                editor = (m.group(1), m.group(2))
        if it.kind == "response":
            it.index = count
            count += 1
        it.version = version
        if fmt == "architect" and editor:
            it.model, it.fmt = editor
        elif fmt in ("ask", "context", "help"):
            # A response applied after `/code` in such a session: the format is the
            # model's default, which the transcript does not name.
            it.model, it.fmt = model, None
        else:
            it.model, it.fmt = model, fmt


@dataclass
class Outcome:
    """What aider printed after one response, up to the next response or user input."""

    applied: list = field(default_factory=list)
    dirty_commits: list = field(default_factory=list)  # (hash, subject) before the edits
    commit: tuple | None = None  # (hash, subject) of the response's own commit
    later_commits: list = field(default_factory=list)
    failed: bool = False
    partial_ok: bool = False  # the failure report says some blocks were written
    aborted: bool = False
    next_response: int | None = None  # item index of a retry in the same turn


def read_outcome(items: list[Item], start: int) -> Outcome:
    out = Outcome()
    k = start + 1
    while k < len(items) and items[k].kind == "tool":
        text = items[k].text
        first = text.split("\n", 1)[0]
        m = APPLIED_RE.match(first)
        c = COMMIT_RE.match(first)
        if m:
            out.applied.append(m.group(1).strip())
        elif c:
            pair = (c.group(1), c.group(2).strip())
            if out.applied and out.commit is None:
                out.commit = pair
            elif out.applied or out.failed:
                out.later_commits.append(pair)
            else:
                out.dirty_commits.append(pair)
        k += 1
        if out.commit is not None:
            continue  # what follows the response's commit does not change the case
        if any(mark in text for mark in FAILURE_MARKERS):
            out.failed = True
        if "were applied successfully" in text:
            out.partial_ok = True
        if any(mark in first for mark in ABORT_MARKERS):
            out.aborted = True
    if k < len(items) and items[k].kind == "response":
        out.next_response = k
    return out


class Git:
    """Reads one bare repository through `git cat-file --batch`."""

    def __init__(self, git_dir: str):
        self.git_dir = git_dir
        self.proc = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.cache: dict = {}

    def run(self, *args: str) -> str:
        res = subprocess.run(
            ["git", "--git-dir", self.git_dir, *args],
            capture_output=True,
        )
        if res.returncode != 0:
            return ""
        return res.stdout.decode("utf-8", errors="replace")

    def blob(self, rev: str, path: str) -> bytes | None:
        """The bytes of `path` at `rev`, or None when it is absent or not a blob."""
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(f"{rev}:{path}\n".encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().decode("utf-8", errors="replace").rstrip("\n")
        if line.endswith((" missing", " ambiguous")):
            return None  # the request is echoed, and a path may hold spaces
        header = line.split()
        if len(header) != 3 or header[1] != "blob":
            if len(header) == 3 and header[2].isdigit():
                self.proc.stdout.read(int(header[2]) + 1)
            return None
        size = int(header[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        return data

    def resolve(self, short: str) -> str | None:
        if short in self.cache:
            return self.cache[short]
        full = self.run("rev-parse", "--verify", "--quiet", f"{short}^{{commit}}").strip()
        self.cache[short] = full or None
        return self.cache[short]

    def commit_info(self, full: str) -> tuple[list, str, str]:
        """(parents, subject, author name) of a commit."""
        out = self.run("log", "-1", "--format=%P%x00%s%x00%an", full)
        parents, subject, author = (out.rstrip("\n").split("\x00") + ["", "", ""])[:3]
        return parents.split(), subject, author

    def changed(self, a: str, b: str) -> dict:
        """Paths changed from a to b: path -> status letter (A, M, D, T...)."""
        out = self.run("diff", "--no-renames", "--name-status", "-z", a, b)
        parts = out.split("\x00")
        res = {}
        for k in range(0, len(parts) - 1, 2):
            res[parts[k + 1]] = parts[k][:1]
        return res

    def transcript_versions(self) -> list[tuple[str, str]]:
        """Every (commit, path) where a transcript was added or changed, newest first."""
        out = self.run(
            "log", "--all", "--format=C %H", "--name-only", "--diff-filter=AM",
            "--", "*chat.history*.md", "*chat_history*.md",
        )
        res, commit = [], None
        for line in out.splitlines():
            if line.startswith("C "):
                commit = line[2:]
            elif line.strip() and commit and is_transcript_name(line):
                res.append((commit, line))
        return res


def is_transcript_name(path: str) -> bool:
    """`.aider.chat.history.md`, or a copy or rename of it (`aider.chat.history.public.md`)."""
    name = os.path.basename(path).lower()
    return "aider" in name and ("chat.history" in name or "chat_history" in name)


def model_family(model: str | None) -> str:
    if not model:
        return "other"
    m = model.lower()
    for fam, keys in (
        ("claude", ("claude", "anthropic", "sonnet", "opus", "haiku")),
        ("deepseek", ("deepseek",)),
        ("qwen", ("qwen", "qwq")),
        ("gemini", ("gemini", "gemma")),
        ("llama", ("llama", "hermes")),
        ("mistral", ("mistral", "codestral", "devstral", "mixtral")),
        ("grok", ("grok", "xai/")),
        ("gpt", ("gpt", "openai/", "o1", "o3", "o4", "chatgpt")),
    ):
        if any(k in m for k in keys):
            return fam
    return "other"


def count_blocks(response: str, fmt: str | None) -> int:
    """Edit blocks in a response: SEARCH sections, unified-diff hunks, or path+fence pairs."""
    f = fmt or ""
    if "udiff" in f:
        return len(re.findall(r"^@@", response, re.M))
    if "whole" in f:
        lines = response.splitlines()
        n = 0
        for a, b in zip(lines, lines[1:]):
            if a.strip() and not a.startswith("```") and re.match(r"^(```|<source>|<code>|<pre>)", b):
                if re.search(r"[\w-]\.\w+$|/|\\", a.strip().strip("`*")):
                    n += 1
        return n
    return len(re.findall(r"^<{5,9} SEARCH", response, re.M))


def map_paths(applied: list[str], changed: dict, exists) -> dict | None:
    """Map the paths aider printed (possibly absolute, or with backslashes) to repo paths.

    A path the commit did not change is kept when the file exists: the response edited
    it to the bytes it already had, and aider commits only files that changed.
    """
    res = {}
    for p in applied:
        q = p.replace("\\", "/")
        if q in changed:
            res[p] = q
            continue
        hits = [c for c in changed if q.endswith("/" + c)]
        if len(hits) == 1:
            res[p] = hits[0]
        elif not hits and not q.startswith("/") and exists(q):
            res[p] = q
        else:
            return None
    return res


def searches_created(response: bytes, created: list, paths: list) -> bool:
    """Whether a SEARCH block with text targets a file the parent commit does not hold.

    aider edits files git does not track yet and adds them in its commit; the parent
    then lacks the text the SEARCH was matched against, so `before` cannot be known.
    """
    for name, search, _ in blocks(response.decode("utf-8", errors="replace")):
        path = resolve(name, sorted(paths)) if name else None
        if path in created and any(line.strip() for line in search):
            return True
    return False


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


@dataclass
class Case:
    meta: dict
    response: bytes
    before: dict  # path -> bytes (absent: created)
    expected: dict  # path -> bytes
    check: bool | None  # what reproduce() said


class Builder:
    """Turns the transcripts of one repository into cases."""

    def __init__(self, git: Git, repo: str, log):
        self.git = git
        self.repo = repo
        self.log = log
        self.cases: dict[str, Case] = {}
        self.skips: dict[str, int] = {}
        self.where = ""

    def skip(self, why: str) -> None:
        self.skips[why] = self.skips.get(why, 0) + 1
        if self.log:
            print(f"{self.repo}: response {self.where}: {why}", file=self.log)

    def run(self) -> None:
        seen_blobs = set()
        for commit, path in self.git.transcript_versions():
            data = self.git.blob(commit, path)
            if data is None or b"# aider chat started at" not in data:
                continue
            key = hash(data)
            if key in seen_blobs:
                continue
            seen_blobs.add(key)
            self.scan(parse_transcript(data), commit, path)

    def resolve_commit(self, pair: tuple) -> str | None:
        short, subject = pair
        full = self.git.resolve(short)
        if not full:
            return None
        _, real, _ = self.git.commit_info(full)
        a, b = norm_subject(real), norm_subject(subject)
        if a and b and not (a.startswith(b) or b.startswith(a)):
            self.skip("commit subject differs")
            return None
        return full

    def edited_words(self, items: list[Item]) -> set | None:
        """Words that an edit of the transcript put in place of what aider printed.

        A commit subject the transcript prints that disagrees with the repository's
        shows the transcript was edited after aider wrote it: a project rename replaced
        a word through the whole file, say. Then a response that holds the new word may
        not be what the model sent. Returns those words, an empty set for a transcript
        that agrees with the repository, or None when a disagreement is not a
        word-for-word substitution (the whole transcript is then in doubt).
        """
        words: set = set()
        for it in items:
            m = COMMIT_RE.match(it.text.split("\n", 1)[0]) if it.kind == "tool" else None
            full = self.git.resolve(m.group(1)) if m else None
            if not full:
                continue
            _, real, _ = self.git.commit_info(full)
            a, b = norm_subject(real).split(), norm_subject(m.group(2)).split()
            if not a or not b or a == b:
                continue
            ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
            if any(op not in ("equal", "replace") for op, *_ in ops):
                return None
            for op, _, _, j1, j2 in ops:
                if op == "replace":
                    words.update(w.strip("'\"`.,:;()") for w in b[j1:j2])
        return {w for w in words if w}

    def scan(self, items: list[Item], tcommit: str, tpath: str) -> None:
        prev_failed_uncommitted = False
        edited = self.edited_words(items)
        if edited is None:
            self.where = f"- ({tpath} at {tcommit[:10]})"
            self.skip("transcript version edited after aider wrote it (commit subjects differ)")
            return
        for k, it in enumerate(items):
            if it.kind == "user" or it.kind == "session":
                prev_failed_uncommitted = False
            if it.kind != "response":
                continue
            text = "".join(ln.text for ln in it.lines).lower()
            if any(w.lower() in text for w in edited):
                self.where = f"{it.index} ({tpath} at {tcommit[:10]})"
                self.skip("response holds a word an edit of the transcript put in")
                continue
            out = read_outcome(items, k)
            self.where = f"{it.index} ({tpath} at {tcommit[:10]}, commit {(out.commit or ('-',))[0]})"
            tainted = prev_failed_uncommitted
            if out.failed and out.next_response is not None:
                self.refuse_case(items, k, out, tcommit, tpath)
            if out.failed or out.aborted:
                committed = out.commit or out.later_commits
                prev_failed_uncommitted = bool(out.applied or out.partial_ok) and not committed
                if out.failed and not committed and version_lt(it.version, "0.50.0"):
                    prev_failed_uncommitted = True
                continue
            if not out.applied:
                continue
            if out.commit is None:
                self.skip("applied but no commit printed")
                continue
            self.ok_case(it, out, tcommit, tpath, tainted)

    def response_bytes(self, it: Item) -> bytes | None:
        data = b"".join(ln.raw for ln in it.lines)
        text = data.decode("utf-8", errors="replace")
        if any(t in text for t in REPORT_TEXT):
            self.skip("response holds aider report text")
            return None
        crlf = data.endswith(b"\r\n")
        data = data.rstrip(b"\r\n")
        return data + (b"\r\n" if crlf else b"\n")

    def meta(self, it: Item, kind: str, commit: str, parent: str, paths, created, resp: bytes, tcommit, tpath):
        owner, name = self.repo.split("/", 1)
        cid = f"{owner}.{name}.{'x' if kind != 'ok' else ''}{commit[:10]}"
        text = resp.decode("utf-8", errors="replace")
        return {
            "aider_format": it.fmt or "unknown",
            "aider_version": it.version,
            "commit": commit,
            "created": sorted(created),
            "id": cid,
            "kind": kind,
            "model": it.model,
            "model_family": model_family(it.model),
            "n_blocks": count_blocks(text, it.fmt),
            "parent": parent,
            "paths": sorted(paths),
            "repo": self.repo,
            "response_crlf": b"\r\n" in resp,
            "response_index": it.index,
            "transcript": tpath,
            "transcript_commit": tcommit,
        }

    def files(self, parent: str, commit: str, paths) -> tuple[dict, dict] | None:
        before, expected = {}, {}
        for p in paths:
            b = self.git.blob(parent, p)
            e = self.git.blob(commit, p)
            if e is None:
                self.skip("file deleted by the commit")
                return None
            for blob in (b, e):
                if blob is not None and (len(blob) > MAX_FILE_BYTES or is_binary(blob)):
                    self.skip("binary or large file")
                    return None
            if b is not None:
                before[p] = b
            expected[p] = e
        return before, expected

    def ok_case(self, it: Item, out: Outcome, tcommit: str, tpath: str, tainted: bool) -> None:
        full = self.resolve_commit(out.commit)
        if not full:
            self.skip("commit not in repository")
            return
        parents, _, _ = self.git.commit_info(full)
        if len(parents) != 1:
            self.skip("commit is not a single-parent commit")
            return
        parent = parents[0]
        for d in out.dirty_commits:
            dfull = self.resolve_commit(d)
            if dfull and dfull != parent and len(out.dirty_commits) == 1:
                self.skip("dirty commit is not the parent")
                return
        changed = self.git.changed(parent, full)
        mapping = map_paths(out.applied, changed, lambda q: self.git.blob(full, q) is not None)
        if mapping is None:
            self.skip("applied path not changed by the commit")
            return
        paths = set(mapping.values())
        if not set(changed) <= paths or not changed:
            self.skip("commit changes files the response did not edit")
            return
        resp = self.response_bytes(it)
        if resp is None:
            return
        got = self.files(parent, full, paths)
        if got is None:
            return
        before, expected = got
        created = [p for p in paths if p not in before]
        if searches_created(resp, created, list(paths)):
            self.skip("a SEARCH targets a file git did not track before the commit")
            return
        check = reproduce(resp, it.fmt or "", before, expected)
        if tainted and check is not True:
            # An earlier response of this turn failed after writing some of its blocks,
            # and aider did not commit them: this commit may hold them too.
            self.skip("earlier partial edits were not committed")
            return
        meta = self.meta(it, "ok", full, parent, paths, created, resp, tcommit, tpath)
        self.add(Case(meta, resp, before, expected, check))

    def refuse_case(self, items, k: int, out: Outcome, tcommit: str, tpath: str) -> None:
        """A failed response: before = the state it saw, expected = after the next applied response."""
        it = items[k]
        nxt = read_outcome(items, out.next_response)
        if nxt.failed or nxt.aborted or not nxt.applied or nxt.commit is None:
            self.skip("refused response not followed by an applied retry")
            return
        wrote_nothing = not (out.applied or out.partial_ok or out.later_commits or out.commit)
        if nxt.dirty_commits and (out.dirty_commits or not wrote_nothing or version_lt(it.version, "0.50.0")):
            # The dirty commit would hold what the failed response wrote, or a change of
            # the user's that the failed response did not see.
            self.skip("refused: the retry committed dirty files first")
            return
        full = self.resolve_commit(nxt.commit)
        if not full:
            self.skip("commit not in repository")
            return
        chain = []
        for pair in out.later_commits + ([out.commit] if out.commit else []):
            c = self.resolve_commit(pair)
            if not c:
                self.skip("refused: intermediate commit not in repository")
                return
            chain.append(c)
        # Walk back from the retry's commit through the commits the failed response made.
        cur = full
        for c in reversed(chain):
            parents, _, _ = self.git.commit_info(cur)
            if parents != [c]:
                self.skip("refused: commits are not a linear chain")
                return
            cur = c
        parents, _, _ = self.git.commit_info(cur)
        if len(parents) != 1:
            self.skip("commit is not a single-parent commit")
            return
        parent = parents[0]
        dirty = out.dirty_commits or nxt.dirty_commits
        if dirty:
            d = self.resolve_commit(dirty[-1])
            if d != parent:
                self.skip("refused: dirty commit is not the parent")
                return
        changed = self.git.changed(parent, full)
        mapping = map_paths(nxt.applied, changed, lambda q: self.git.blob(full, q) is not None)
        if mapping is None:
            self.skip("applied path not changed by the commit")
            return
        paths = set(changed)
        resp = self.response_bytes(it)
        if resp is None:
            return
        got = self.files(parent, full, paths)
        if got is None:
            return
        before, expected = got
        created = [p for p in paths if p not in before]
        if searches_created(resp, created, list(paths)):
            self.skip("a SEARCH targets a file git did not track before the commit")
            return
        meta = self.meta(it, "refuse_or_unknown", full, parent, paths, created, resp, tcommit, tpath)
        meta["chain"] = chain
        meta = dict(sorted(meta.items()))
        self.add(Case(meta, resp, before, expected, None))

    def add(self, case: Case) -> None:
        cid = case.meta["id"]
        if cid in self.cases:
            return  # an older transcript version holds the same response
        self.cases[cid] = case


def norm_subject(s: str) -> str:
    s = s.strip()
    if s.startswith("aider: "):
        s = s[len("aider: ") :]
    return re.sub(r"\s+", " ", s)


def version_lt(v: str | None, w: str) -> bool:
    if not v:
        return True
    return tuple(int(x) for x in v.split(".")) < tuple(int(x) for x in w.split("."))


def safe_path(p: str) -> bool:
    """A relative path inside the case folder, and not a file aider named after prose.

    aider's whole-file reader takes the line before a fence as the file name, so it has
    created files like "manifest.json** (updated to include new files)"; such a commit is
    aider's mistake, not ground truth.
    """
    parts = p.split("/")
    if p.startswith("/") or ".." in parts or not all(parts):
        return False
    return not any(c in p for c in "*`")


# Names a project commonly gives a file without an extension.
BARE_NAMES = {
    "makefile", "dockerfile", "license", "licence", "readme", "procfile", "gemfile",
    "rakefile", "vagrantfile", "jenkinsfile", "brewfile", "justfile", "caddyfile",
    "containerfile", "copying", "authors", "changelog", "notice", "version", "codeowners",
}


def plausible_new_file(p: str) -> bool:
    """Whether a file a response created looks like a file the model meant.

    aider's whole-file reader names a file after the line above a fence, so it has
    created files named "cabal run", "true" or "└── README.md - This file".
    """
    name = p.rsplit("/", 1)[-1]
    return plausible_name(p) and ("." in name or name.lower() in BARE_NAMES)


def plausible_name(p: str) -> bool:
    """A path with no tree-drawing characters, and with an extension if it holds a space."""
    name = p.rsplit("/", 1)[-1]
    if any(c in p for c in "└├│─"):
        return False
    return not any(c.isspace() for c in name) or re.search(r"\.[A-Za-z0-9]+$", name) is not None


def write_case(out_dir: str, case: Case) -> None:
    root = os.path.join(out_dir, case.meta["id"])
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "response.md"), "wb") as f:
        f.write(case.response)
    for sub, files in (("before", case.before), ("expected", case.expected)):
        for p, data in files.items():
            dst = os.path.join(root, sub, p)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
    with open(os.path.join(root, "meta.json"), "w") as f:
        f.write(json.dumps(case.meta, indent=1, sort_keys=True) + "\n")


def write_index(out_dir: str) -> list:
    metas = []
    for name in sorted(os.listdir(out_dir)):
        m = os.path.join(out_dir, name, "meta.json")
        if os.path.isfile(m):
            with open(m) as f:
                metas.append(json.load(f))
    with open(os.path.join(out_dir, "index.json"), "w") as f:
        f.write(json.dumps(metas, indent=0, sort_keys=True) + "\n")
    return metas


def repo_name(git_dir: str) -> str:
    """owner/name from a path like .../owner+name/repo."""
    for part in reversed(os.path.normpath(git_dir).split(os.sep)):
        if "+" in part:
            owner, name = part.split("+", 1)
            return f"{owner}/{name}"
    raise SystemExit(f"cannot tell owner/name from {git_dir}; pass OWNER/NAME=GITDIR")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="*", help="GITDIR or OWNER/NAME=GITDIR")
    ap.add_argument("--out", required=True, help="folder the case folders are written into")
    ap.add_argument("--exclude", action="append", default=[], help="OWNER/NAME to leave out")
    ap.add_argument("--report", help="write per-repository counts and each case's re-application check here (JSON)")
    ap.add_argument("--verbose", action="store_true", help="say why each response was left out")
    ap.add_argument("--dry-run", action="store_true", help="count cases, write nothing")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    report = {"repos": [], "checks": {}}
    seen_commits: set = set()  # a fork or copy of a repository holds the same cases
    for src in args.sources:
        repo, git_dir = src.split("=", 1) if "=" in src else (repo_name(src), src)
        if repo in args.exclude:
            print(f"{repo}: excluded", file=sys.stderr)
            continue
        builder = Builder(Git(git_dir), repo, sys.stderr if args.verbose else None)
        builder.run()
        kinds: dict = {}
        for case in builder.cases.values():
            paths, created = case.meta["paths"], case.meta["created"]
            if not all(safe_path(p) and plausible_name(p) for p in paths) or not all(
                plausible_new_file(p) for p in created
            ):
                builder.skips["a path aider made from prose"] = builder.skips.get("a path aider made from prose", 0) + 1
                continue
            key = (case.meta["kind"], case.meta["commit"])
            if key in seen_commits:
                continue
            seen_commits.add(key)
            kinds[case.meta["kind"]] = kinds.get(case.meta["kind"], 0) + 1
            report["checks"][case.meta["id"]] = case.check
            if not args.dry_run:
                write_case(args.out, case)
        row = {"repo": repo, "cases": kinds, "skipped": builder.skips}
        report["repos"].append(row)
        print(json.dumps(row), flush=True)
    if not args.dry_run:
        write_index(args.out)
    if args.report:
        with open(args.report, "w") as f:
            f.write(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
