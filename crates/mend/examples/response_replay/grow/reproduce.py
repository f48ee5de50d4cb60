"""A plain re-application of a response, to check that a case's commit holds only that response.

This is not aider's applier and not mend's: it applies SEARCH/REPLACE blocks in order with
an exact match (then with trailing white space ignored, then with the indentation shifted
as a whole), and whole-file fences as they stand. Files are compared after the
normalisations aider itself makes (LF line ends, trailing white space, final newline).

`reproduce` answers True (the response alone gives the committed files), False (it does
not), or None (a format this check does not read: unified diffs, or blocks it cannot place).
"""

from __future__ import annotations

import re

SEARCH_RE = re.compile(r"^<{5,9} SEARCH>?\s*$")
DIVIDER_RE = re.compile(r"^={5,9}\s*$")
REPLACE_RE = re.compile(r"^>{5,9} REPLACE\s*$")
FENCE_RE = re.compile(r"^(```|~~~|<source>|<code>|<pre>|<codeblock>|<sourcecode>)")


def norm(text: str) -> list[str]:
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def path_from(line: str) -> str:
    line = line.strip().strip("`*#:").strip()
    return line.replace("\\", "/")


def resolve(name: str, paths: list[str]) -> str | None:
    if name in paths:
        return name
    hits = [p for p in paths if p.endswith("/" + name) or name.endswith("/" + p)]
    return hits[0] if len(hits) == 1 else None


def blocks(response: str) -> list[tuple[str | None, list[str], list[str]]]:
    """(path line, search lines, replace lines) of each SEARCH/REPLACE block, in order."""
    lines = response.replace("\r\n", "\n").split("\n")
    out = []
    i, last_path = 0, None
    while i < len(lines):
        if not SEARCH_RE.match(lines[i]):
            i += 1
            continue
        k = i - 1
        while k >= 0 and (not lines[k].strip() or FENCE_RE.match(lines[k].strip())):
            k -= 1
            if i - k > 3:
                break
        if k >= 0 and lines[k].strip() and not FENCE_RE.match(lines[k].strip()):
            cand = path_from(lines[k])
            if cand and " " not in cand:
                last_path = cand
        j = i + 1
        search = []
        while j < len(lines) and not DIVIDER_RE.match(lines[j]):
            search.append(lines[j])
            j += 1
        j += 1
        replace = []
        while j < len(lines) and not REPLACE_RE.match(lines[j]):
            replace.append(lines[j])
            j += 1
        out.append((last_path, search, replace))
        i = j + 1
    return out


def find(hay: list[str], needle: list[str]) -> tuple[int, int] | None:
    """Where needle occurs in hay: exact lines, then lines with the indentation shifted."""
    n = len(needle)
    for i in range(len(hay) - n + 1):
        if hay[i : i + n] == needle:
            return i, 0
    stripped = [ln.lstrip() for ln in needle]
    for i in range(len(hay) - n + 1):
        window = hay[i : i + n]
        if [ln.lstrip() for ln in window] != stripped:
            continue
        shifts = {len(w) - len(w.lstrip()) - (len(s) - len(s.lstrip())) for w, s in zip(window, needle) if s.strip()}
        if len(shifts) == 1:
            return i, shifts.pop()
    return None


def apply_blocks(response: str, before: dict, paths: list[str]) -> dict | None:
    files = {p: norm(before[p]) if p in before else None for p in paths}
    found = blocks(response)
    if not found:
        return None
    for name, search, replace in found:
        path = resolve(name, paths) if name else None
        if path is None:
            return None
        search = [ln.rstrip() for ln in search]
        replace = [ln.rstrip() for ln in replace]
        while search and not search[-1]:
            search.pop()
        while replace and not replace[-1]:
            replace.pop()
        cur = files[path]
        if not [s for s in search if s]:
            files[path] = (cur or []) + replace
            continue
        if cur is None:
            return None
        hit = find(cur, search)
        if hit is None:
            return None
        at, shift = hit
        if shift > 0:
            replace = [(" " * shift + ln) if ln else ln for ln in replace]
        elif shift < 0:
            replace = [ln[-shift:] if ln[: -shift].strip() == "" else ln for ln in replace]
        files[path] = cur[:at] + replace + cur[at + len(search) :]
    return files


def apply_whole(response: str, paths: list[str]) -> dict | None:
    lines = response.replace("\r\n", "\n").split("\n")
    files: dict = {}
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m or i == 0 or not lines[i - 1].strip():
            i += 1
            continue
        path = resolve(path_from(lines[i - 1]), paths)
        opener = m.group(1)
        closer = opener if opener in ("```", "~~~") else "</" + opener[1:]
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != closer:
            j += 1
        if path is not None:
            body = [ln.rstrip() for ln in lines[i + 1 : j]]
            while body and not body[-1]:
                body.pop()
            files[path] = body
        i = j + 1
    return files or None


def reproduce(response: bytes, fmt: str, before: dict, expected: dict) -> bool | None:
    text = response.decode("utf-8", errors="replace")
    b = {p: v.decode("utf-8", errors="replace") for p, v in before.items()}
    paths = sorted(expected)
    if "udiff" in fmt:
        return None
    if "whole" in fmt:
        got = apply_whole(text, paths)
    else:
        got = apply_blocks(text, b, paths)
    if got is None:
        return None
    for p in paths:
        want = norm(expected[p].decode("utf-8", errors="replace"))
        have = got.get(p)
        if have is None:
            have = norm(b[p]) if p in b else None
        if have != want:
            return False
    return True
