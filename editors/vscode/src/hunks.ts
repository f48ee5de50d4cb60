// Applying the server's line hunks to a document's text. Pure (no `vscode`),
// so the unit tests run it in plain Node.

/** Lines `start..end` (0-based, end excluded) of the text before the change
 *  become `text`: whole lines with their endings, empty to delete. */
export interface Hunk {
  start: number;
  end: number;
  text: string;
}

/** A replacement of `start..end` (UTF-16 offsets of the old text). */
export interface OffsetEdit {
  start: number;
  end: number;
  text: string;
}

/** The byte-order mark as a character: the server keeps it in a text's
 *  first line, while VS Code keeps it out of the document. */
export const BOM = '\ufeff';

/** The offset where each line starts, as the server counts lines (each
 *  ends after its `\n`; a last line without one counts too), followed by
 *  the text's length. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    starts.push(i + 1);
  }
  if (starts[starts.length - 1] !== text.length) {
    starts.push(text.length);
  }
  return starts;
}

/** The number of lines as the server counts them. */
export function lineCount(text: string): number {
  return lineStarts(text).length - 1;
}

/** The hunks as offset edits of `text` (a document's text, without a BOM),
 *  or undefined when they do not fit it: unsorted, overlapping, or past its
 *  end. A BOM at the start of a first hunk's text is dropped. */
export function hunkEdits(text: string, hunks: readonly Hunk[]): OffsetEdit[] | undefined {
  const starts = lineStarts(text);
  const lines = starts.length - 1;
  const edits: OffsetEdit[] = [];
  let last = 0;
  for (const h of hunks) {
    if (!Number.isInteger(h.start) || !Number.isInteger(h.end) || typeof h.text !== 'string') {
      return undefined;
    }
    if (h.start < last || h.end < h.start || h.end > lines) {
      return undefined;
    }
    last = h.end;
    const body = h.start === 0 && h.text.startsWith(BOM) ? h.text.slice(1) : h.text;
    edits.push({ start: starts[h.start], end: starts[h.end], text: body });
  }
  return edits;
}

/** The text with the edits made (sorted, not overlapping, offsets of `text`). */
export function applyEdits(text: string, edits: readonly OffsetEdit[]): string {
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/** One edit turning `from` into `to`, touching only what lies between their
 *  common beginning and common end, so what is outside keeps its place. */
export function minimalEdit(from: string, to: string): OffsetEdit | undefined {
  if (from === to) {
    return undefined;
  }
  let head = 0;
  const short = Math.min(from.length, to.length);
  while (head < short && from.charCodeAt(head) === to.charCodeAt(head)) {
    head++;
  }
  let tail = 0;
  while (
    tail < short - head &&
    from.charCodeAt(from.length - 1 - tail) === to.charCodeAt(to.length - 1 - tail)
  ) {
    tail++;
  }
  // Never split a surrogate pair or a CR LF.
  while (head > 0 && splits(from, head)) {
    head--;
  }
  while (tail > 0 && splits(from, from.length - tail)) {
    tail--;
  }
  return { start: head, end: from.length - tail, text: to.slice(head, to.length - tail) };
}

function splits(s: string, at: number): boolean {
  const before = s.charCodeAt(at - 1);
  const after = s.charCodeAt(at);
  const pair = before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
  return pair || (before === 13 && after === 10);
}

/** The edits that turn a document holding `text` into `target` (the
 *  notification's text, without its BOM): the hunks when they reproduce it
 *  exactly, else one minimal edit, so a notification is never applied as
 *  anything but its text. */
export function editsFor(text: string, hunks: readonly Hunk[], target: string): OffsetEdit[] {
  const edits = hunkEdits(text, hunks);
  if (edits !== undefined && applyEdits(text, edits) === target) {
    return edits.filter((e) => e.start !== e.end || e.text !== '');
  }
  const one = minimalEdit(text, target);
  return one ? [one] : [];
}

/** The text without a leading BOM, and whether it had one. */
export function splitBom(text: string): { bom: boolean; body: string } {
  return text.startsWith(BOM) ? { bom: true, body: text.slice(1) } : { bom: false, body: text };
}
