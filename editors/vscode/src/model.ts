// The review model the extension shows: files with their letters, and
// their diffs as numbered hunks. Built from the editor protocol's
// `turn/diff`, `pending/status` and `pending/diff` results, which carry
// each file's hunks as data (`diff_hunks`, the service's review model);
// only a server older than that model has its unified text read here. Pure (no `vscode`), so the unit tests run it in plain Node.

/** One hunk of a file's diff, numbered as the server numbered it. */
export interface ReviewHunk {
  /** The number `hunks` selects it by, from 1. */
  number: number;
  /** The `@@ … @@` line. */
  header: string;
  oldStart: number;
  oldCount: number;
  /** First line (from 1) of the hunk in the file as it is now. */
  newStart: number;
  newCount: number;
  /** The hunk's lines, each with its ` `, `-` or `+` prefix. */
  lines: string[];
}

/** One file under review. */
export interface ReviewFile {
  path: string;
  /** The status letter: M, A, D, R, T, ~M, … */
  letter: string;
  /** A rename's old path. */
  from?: string;
  /** A pending rename's new path. */
  to?: string;
  /** The version the hunk numbers were read from (`seen`). */
  version?: string;
  /** What else to know (a type change, why it cannot be read). */
  note?: string;
  hunks: ReviewHunk[];
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(?: hunk (\d+))?/;

/** The hunks of one file's unified diff text. */
export function parseHunks(diff: string): ReviewHunk[] {
  const hunks: ReviewHunk[] = [];
  let cur: ReviewHunk | undefined;
  for (const line of splitLines(diff)) {
    const m = HEADER.exec(line);
    if (m) {
      cur = {
        number: m[5] ? Number(m[5]) : hunks.length + 1,
        header: line,
        oldStart: Number(m[1]),
        oldCount: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newCount: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
      };
      hunks.push(cur);
    } else if (cur && /^[ +\-\\]/.test(line)) {
      cur.lines.push(line);
    } else {
      cur = undefined;
    }
  }
  return hunks;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  return lines;
}

/** Hunks given as data (the review model's `diff_hunks`; `hunks` or
 *  `diff.hunks` as arrays), else, from a server older than the review
 *  model, read from the unified text (`diff`, or `diff.text`). */
function hunksOf(f: Record<string, unknown>): ReviewHunk[] {
  const diff = f.diff as Record<string, unknown> | string | undefined;
  const given = Array.isArray(f.diff_hunks)
    ? f.diff_hunks
    : Array.isArray(f.hunks)
      ? f.hunks
      : typeof diff === 'object' && Array.isArray(diff?.hunks)
        ? diff.hunks
        : undefined;
  if (given) {
    return given.map((h, i) => fromData(h as Record<string, unknown>, i));
  }
  const text = typeof diff === 'string' ? diff : typeof diff?.text === 'string' ? diff.text : '';
  return parseHunks(text);
}

/** A hunk given as data, its numbers taken from its fields (camelCase or
 *  snake_case) or else from its header. */
function fromData(h: Record<string, unknown>, i: number): ReviewHunk {
  const header = String(h.header ?? '');
  const m = HEADER.exec(header);
  const num = (a: string, b: string, fallback: string | undefined, dflt: number) => {
    const v = h[a] ?? h[b];
    return typeof v === 'number' ? v : fallback === undefined ? dflt : Number(fallback);
  };
  return {
    number: typeof h.number === 'number' ? h.number : i + 1,
    header,
    oldStart: num('oldStart', 'old_start', m?.[1], 1),
    oldCount: num('oldCount', 'old_count', m?.[2], 1),
    newStart: num('newStart', 'new_start', m?.[3], 1),
    newCount: num('newCount', 'new_count', m?.[4], 1),
    lines: Array.isArray(h.lines) ? h.lines.map(String) : [],
  };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** The files of a `turn/diff` (or `turn/status`) result. */
export function turnFiles(result: { files?: Record<string, unknown>[] }): ReviewFile[] {
  return (result.files ?? []).map((f) => ({
    path: String(f.path),
    letter: String(f.letter ?? f.status ?? ''),
    from: str(f.from),
    to: str(f.to),
    version: str(f.version),
    note: str(f.note) ?? str(f.change),
    hunks: hunksOf(f),
  }));
}

/** The files of a pending session: `pending/status`'s list, each with its
 *  hunks from `pending/diff`'s text (split at each file's `# PATH: version
 *  ID` line) and its version. */
export function pendingFiles(
  status: { files?: Record<string, unknown>[] },
  diff: { diff?: string; versions?: Record<string, string>; files?: Record<string, unknown>[] },
): ReviewFile[] {
  const versions = diff.versions ?? {};
  const given = new Map((diff.files ?? []).map((d) => [String(d.path), d]));
  const sections = given.size > 0 ? new Map<string, string>() : splitPending(diff.diff ?? '', versions);
  return (status.files ?? []).map((f) => {
    const path = String(f.path);
    const d = given.get(path);
    if (d !== undefined) {
      return {
        path,
        letter: String(f.letter ?? f.status ?? '').trim(),
        from: str(f.from),
        to: str(f.to),
        version: versions[path] ?? str(d.version),
        note: str(f.note) ?? str(f.reason),
        hunks: hunksOf(d),
      };
    }
    return {
      path,
      letter: String(f.letter ?? f.status ?? '').trim(),
      from: str(f.from),
      to: str(f.to),
      version: versions[path],
      note: str(f.note) ?? str(f.reason),
      hunks: Array.isArray(f.hunks) ? hunksOf(f) : parseHunks(sections.get(path) ?? ''),
    };
  });
}

/** Each numbered file's part of a pending diff, by path. */
function splitPending(text: string, versions: Record<string, string>): Map<string, string> {
  const heads = new Map<string, string>();
  for (const [path, id] of Object.entries(versions)) {
    heads.set(`# ${path}: version ${id}`, path);
  }
  const parts = new Map<string, string>();
  let path: string | undefined;
  for (const line of splitLines(text)) {
    const starts = heads.get(line);
    if (starts !== undefined) {
      path = starts;
      parts.set(path, '');
    } else if (line.startsWith('# ')) {
      path = undefined;
    } else if (path !== undefined) {
      parts.set(path, parts.get(path) + line + '\n');
    }
  }
  return parts;
}

/** Where a hunk's CodeLens goes: the 0-based line of its first changed line
 *  in the file on the hunk's `new` side (a turn: the file now) or its `old`
 *  side (a pending proposal: the file the output would replace). */
export function lensLine(h: ReviewHunk, side: 'new' | 'old' = 'new'): number {
  let line = (side === 'new' ? h.newStart : h.oldStart) - 1;
  for (const l of h.lines) {
    if (l.startsWith('+') || l.startsWith('-')) {
      break;
    }
    if (l.startsWith(' ')) {
      line++;
    }
  }
  return Math.max(0, line);
}

/** The text before a file's change: its hunks taken back out of `now`.
 *  Undefined when a hunk's lines do not match `now` (the file moved on). */
export function original(now: string, hunks: readonly ReviewHunk[]): string | undefined {
  const lines = now.split('\n');
  const hadFinal = lines[lines.length - 1] === '';
  if (hadFinal) {
    lines.pop();
  }
  const out: string[] = [];
  let at = 0;
  for (const h of hunks) {
    const start = h.newCount === 0 ? h.newStart : h.newStart - 1;
    if (start < at || start > lines.length) {
      return undefined;
    }
    out.push(...lines.slice(at, start));
    at = start;
    for (const l of h.lines) {
      const body = l.slice(1);
      if (l.startsWith(' ') || l.startsWith('+')) {
        if (lines[at] !== body) {
          return undefined;
        }
        at++;
      }
      if (l.startsWith(' ') || l.startsWith('-')) {
        out.push(body);
      }
    }
  }
  out.push(...lines.slice(at));
  return out.join('\n') + (hadFinal ? '\n' : '');
}

/** The 0-based lines of the file a hunk changes: on its `new` side the
 *  lines it adds (a turn: the file now), on its `old` side the lines it
 *  removes (a pending proposal: the file the output would replace). */
export function changedLines(h: ReviewHunk, side: 'new' | 'old'): number[] {
  const mark = side === 'new' ? '+' : '-';
  const skip = side === 'new' ? '-' : '+';
  let line = (side === 'new' ? h.newStart : h.oldStart) - 1;
  const out: number[] = [];
  for (const l of h.lines) {
    if (l.startsWith(mark)) {
      out.push(line);
    }
    if (!l.startsWith(skip) && !l.startsWith('\\')) {
      line++;
    }
  }
  return out;
}
