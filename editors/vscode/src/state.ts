// What the extension and the server agree on for one document, and the
// version arithmetic of the editor protocol. Pure (no `vscode`), so the unit
// tests run it in plain Node.

/** The params every text-changing notification carries (docs/editor-protocol.md). */
export interface ChangeParams {
  buffer: number;
  path: string;
  abspath: string;
  version: number | null;
  seq: number;
  text: string;
  hunks: { start: number; end: number; text: string }[];
  disk_sha256: string;
  disk?: string;
  conflicts?: { start: number; end: number }[];
  resolved?: { resolver: string; start: number; end: number }[];
}

/** A line region of a document: lines `start..end`, end excluded. */
export interface Lines {
  start: number;
  end: number;
}

/** A settled region to highlight: lines, and who settled them. */
export interface Resolved extends Lines {
  resolver: string;
}

/** One document's bookkeeping. */
export class DocState {
  /** The server's number for the buffer (`buffer/open`'s answer). */
  id: number | undefined;
  /** The path relative to the root, as the server names it. */
  rel: string;
  /** Saves of the document since it was opened: the protocol's version
   *  grows with every save too, which VS Code's document version does not. */
  saves = 0;
  /** The last version reported. */
  sent = -1;
  /** The `seq` of the last notification applied. */
  seq: number | undefined;
  /** The file's text the document derives from, as the server agreed it
   *  (sent as `disk` when the document is opened to a restarted server). */
  base: string | undefined;
  /** SHA-256 (hex) of the file's bytes the document derives from, when known. */
  diskSha: string | undefined;
  /** A merge changed the document since VS Code last read or wrote its
   *  file: VS Code's record of the file is stale. */
  merged = false;
  /** The document has conflict markers from a merge. */
  conflict = false;
  /** A change of the file is held until the conflict is resolved. */
  held = false;
  /** The file was deleted on disk. */
  deleted = false;
  /** Regions a resolver settled, highlighted until saved. */
  resolved: Resolved[] = [];
  /** A notification is being applied: its own change is not reported. */
  applying = false;
  /** The file's modification time (ms) when VS Code last read or wrote it,
   *  as far as the extension saw. */
  knownMtime: number | undefined;
  /** Whether the file starts with a byte-order mark (VS Code keeps it out of
   *  the document's text; the server's text has it). */
  bom = false;

  constructor(rel: string) {
    this.rel = rel;
  }

  /** The protocol's version of a document whose VS Code version is `docVersion`. */
  version(docVersion: number): number {
    return docVersion + this.saves;
  }

  /** Whether a notification computed against `version` may be applied to the
   *  document now; if not, the editor answers with `buffer/resync`. */
  fits(version: number | null | undefined, docVersion: number): boolean {
    return version === null || version === undefined || version === this.version(docVersion);
  }

  /** Records an applied notification of `kind`. */
  took(kind: 'reload' | 'merged' | 'conflict', p: ChangeParams): void {
    this.seq = p.seq;
    this.diskSha = p.disk_sha256;
    // A merge names the file's bytes it took; a reload's are its text.
    this.base = typeof p.disk === 'string' ? p.disk : p.text;
    this.bom = this.base.startsWith('\ufeff');
    this.deleted = false;
    this.held = false;
    if (kind === 'reload') {
      this.merged = false;
      this.resolved = [];
    } else {
      this.merged = true;
      this.resolved = this.resolved.concat(p.resolved ?? []);
    }
    this.conflict = kind === 'conflict' || (this.conflict && hasMarkers(p.text));
  }

  /** Records a save of the document whose text on disk is now `text`. */
  saved(text: string, sha: string): void {
    this.saves++;
    this.base = text;
    this.diskSha = sha;
    this.merged = false;
    this.conflict = false;
    this.held = false;
    this.deleted = false;
    this.resolved = [];
  }

  /** The report of the document's text: `buffer/changed`, `buffer/resync`
   *  or `buffer/open` params. `force` sends it even when this version was
   *  reported already (the answer to a notification). Undefined when
   *  nothing needs sending. */
  report(
    text: string,
    dirty: boolean,
    docVersion: number,
    force: boolean,
  ): { path: string; text: string; dirty: boolean; version: number; applied?: number } | undefined {
    const version = this.version(docVersion);
    if (!force && version === this.sent) {
      return undefined;
    }
    this.sent = version;
    const full = (this.bom ? '\ufeff' : '') + text;
    if (!dirty) {
      this.base = full;
    }
    if (this.conflict && !hasMarkers(full)) {
      this.conflict = false;
    }
    return { path: this.rel, text: full, dirty, version, applied: this.seq };
  }
}

/** Whether the text still has a conflict's start marker, as the server
 *  writes them. */
export function hasMarkers(text: string): boolean {
  return /^<<<<<<< /m.test(text);
}
