"""Pure helpers for the path part of URLs.

These never touch the filesystem and never decode percent-escapes unless
asked to: a URL path is a sequence of segments separated by "/", and "%2F"
inside a segment is not a separator.
"""

from __future__ import annotations

import re
from typing import Iterable, Iterator
from urllib.parse import quote, unquote

SEP = "/"
SAFE = "-._~!$&'()*+,;=:@"

_DOT_SEGMENTS = {".", ".."}
_MULTI_SLASH = re.compile(r"/{2,}")


class PathError(ValueError):
    """Raised for a path that cannot be represented safely."""


def split(path: str) -> list[str]:
    """Split a path into segments.

    A leading slash gives an empty first segment, a trailing slash an empty
    last one, so that ``join(*split(p)) == p`` for every ``p``.
    """
    return path.split(SEP)


def join(*parts: str) -> str:
    """Join path parts with exactly one slash between them.

    Empty parts are skipped, except that a leading empty part (or a first
    part that starts with a slash) keeps the result absolute, and a trailing
    slash on the last part is kept.
    """
    if not parts:
        return ""
    absolute = parts[0].startswith(SEP) or parts[0] == ""
    trailing = parts[-1].endswith(SEP) and len(parts[-1]) > 0
    pieces = []
    for part in parts:
        stripped = part.strip(SEP)
        if stripped:
            pieces.append(stripped)
    joined = SEP.join(pieces)
    if absolute:
        joined = SEP + joined
    if trailing and not joined.endswith(SEP):
        joined += SEP
    return joined


def is_absolute(path: str) -> bool:
    return path.startswith(SEP)


def basename(path: str) -> str:
    """The last segment, ignoring a trailing slash."""
    trimmed = path.rstrip(SEP)
    if not trimmed:
        return ""
    return trimmed.rsplit(SEP, 1)[-1]


def dirname(path: str) -> str:
    """Everything before the last segment, without a trailing slash.

    The dirname of a top-level absolute path is "/".
    """
    trimmed = path.rstrip(SEP)
    if SEP not in trimmed:
        return ""
    head = trimmed.rsplit(SEP, 1)[0]
    return head or SEP


def extension(path: str) -> str:
    """The extension of the last segment, with its dot, or "".

    Dotfiles such as ".env" have no extension.
    """
    name = basename(path)
    dot = name.rfind(".")
    if dot <= 0:
        return ""
    return name[dot:]


def with_extension(path: str, ext: str) -> str:
    if ext and not ext.startswith("."):
        raise PathError(f"extension must start with a dot: {ext!r}")
    current = extension(path)
    stem = path[: len(path) - len(current)] if current else path
    return stem + ext


def collapse_slashes(path: str) -> str:
    return _MULTI_SLASH.sub(SEP, path)


def normalize(path: str) -> str:
    """Remove "." and ".." segments the way RFC 3986 section 5.2.4 does.

    ".." at the root of an absolute path is dropped; in a relative path it
    is kept, since there is nothing to resolve it against.
    """
    absolute = is_absolute(path)
    trailing = path.endswith(SEP) or basename(path) in _DOT_SEGMENTS
    out: list[str] = []
    for segment in split(collapse_slashes(path)):
        if segment in ("", "."):
            continue
        if segment == "..":
            if out and out[-1] != "..":
                out.pop()
            elif not absolute:
                out.append("..")
            continue
        out.append(segment)
    result = SEP.join(out)
    if absolute:
        result = SEP + result
    if trailing and out and not result.endswith(SEP):
        result += SEP
    return result or ("/" if absolute else ".")


def relative_to(path: str, base: str) -> str:
    """The path from ``base`` (a directory) to ``path``.

    Both must be absolute. The result never starts with a slash and uses
    ".." to climb out of ``base``.
    """
    if not (is_absolute(path) and is_absolute(base)):
        raise PathError("relative_to needs two absolute paths")
    target = [s for s in split(normalize(path)) if s]
    origin = [s for s in split(normalize(base)) if s]
    common = 0
    for a, b in zip(target, origin):
        if a != b:
            break
        common += 1
    ups = [".."] * (len(origin) - common)
    rest = target[common:]
    result = SEP.join(ups + rest)
    if path.endswith(SEP) and rest:
        result += SEP
    return result or "."


def parents(path: str) -> Iterator[str]:
    """Each ancestor of ``path``, nearest first, ending at "/" or ""."""
    current = dirname(path)
    while current:
        yield current
        if current == SEP:
            return
        current = dirname(current)


def common_prefix(paths: Iterable[str]) -> str:
    """The longest common directory of ``paths``, segment-wise."""
    split_paths = [split(normalize(p)) for p in paths]
    if not split_paths:
        return ""
    first = split_paths[0]
    length = len(first)
    for other in split_paths[1:]:
        length = min(length, len(other))
        for i in range(length):
            if other[i] != first[i]:
                length = i
                break
    prefix = SEP.join(first[:length])
    if length == 1 and first[0] == "":
        return SEP
    return prefix


def encode_segment(segment: str) -> str:
    """Percent-encode one segment, slashes included."""
    return quote(segment, safe=SAFE)


def decode_segment(segment: str) -> str:
    decoded = unquote(segment)
    if SEP in decoded:
        raise PathError(f"segment decodes to a slash: {segment!r}")
    return decoded


def encode(path: str) -> str:
    """Percent-encode each segment of ``path``, keeping the separators."""
    return SEP.join(encode_segment(s) for s in split(path))


def decode(path: str) -> list[str]:
    """Decode each segment; a segment hiding a slash is an error."""
    return [decode_segment(s) for s in split(path)]


def is_safe_relative(path: str) -> bool:
    """Whether ``path`` is relative and stays inside its base.

    Used before joining user input onto a storage prefix.
    """
    if is_absolute(path) or "\\" in path:
        return False
    depth = 0
    for segment in split(path):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return False
        elif segment not in ("", "."):
            depth += 1
    return True


def strip_prefix(path: str, prefix: str) -> str | None:
    """``path`` without ``prefix`` (a directory), or None if it is not under it."""
    path_n = normalize(path)
    prefix_n = normalize(prefix).rstrip(SEP)
    if path_n == prefix_n:
        return ""
    if not prefix_n:
        return path_n.lstrip(SEP) if is_absolute(path_n) else path_n
    if path_n.startswith(prefix_n + SEP):
        return path_n[len(prefix_n) + 1 :]
    return None


def ensure_trailing_slash(path: str) -> str:
    return path if path.endswith(SEP) else path + SEP


def strip_trailing_slash(path: str) -> str:
    if path == SEP:
        return path
    return path.rstrip(SEP)


def segments_match(pattern: str, path: str) -> bool:
    """Match ``path`` against a pattern where "*" is one segment and "**" any.

    >>> segments_match("/static/*/app.js", "/static/v2/app.js")
    True
    >>> segments_match("/static/**", "/static/a/b/c.css")
    True
    """
    pat = [s for s in split(pattern) if s]
    parts = [s for s in split(path) if s]
    return _match(pat, parts)


def _match(pat: list[str], parts: list[str]) -> bool:
    if not pat:
        return not parts
    head, rest = pat[0], pat[1:]
    if head == "**":
        return any(_match(rest, parts[i:]) for i in range(len(parts) + 1))
    if not parts:
        return False
    if head == "*" or head == parts[0]:
        return _match(rest, parts[1:])
    return False


def depth(path: str) -> int:
    """The number of non-empty segments after normalizing."""
    return len([s for s in split(normalize(path)) if s and s != "."])


def sibling(path: str, name: str) -> str:
    """The path of ``name`` in the same directory as ``path``."""
    if SEP in name:
        raise PathError(f"a sibling name cannot hold a slash: {name!r}")
    parent = dirname(path)
    if not parent:
        return name
    return join(parent, name)


def child(path: str, name: str) -> str:
    if SEP in name:
        raise PathError(f"a child name cannot hold a slash: {name!r}")
    return join(path, name)


def walk_up(path: str, stop: str = SEP) -> Iterator[str]:
    """``path`` and each parent up to and including ``stop``."""
    current = normalize(path)
    stop = normalize(stop)
    while True:
        yield current
        if current == stop or current in (SEP, "", "."):
            return
        current = dirname(current) or "."


def same(a: str, b: str) -> bool:
    """Whether two paths name the same location once normalized."""
    return strip_trailing_slash(normalize(a)) == strip_trailing_slash(normalize(b))
