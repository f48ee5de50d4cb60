// Buffer sync: every open document under a server's root is reported to it
// (text, version, dirty state), and what it sends back (reload, merge,
// conflict, delete, rename) is applied as a WorkspaceEdit from its hunks,
// so the cursor and selections outside them stay.

import { createHash } from 'crypto';
import { promises as fs, readFileSync, realpathSync } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { editsFor, splitBom } from './hunks';
import { errorOf, Server } from './server';
import { ChangeParams, DocState } from './state';

interface Entry {
  doc: vscode.TextDocument;
  st: DocState;
  /** Notifications for this document, applied one at a time. */
  queue: Promise<void>;
}

type Kind = 'reload' | 'merged' | 'conflict';

/** How long a reload waits for VS Code to read a clean document's file
 *  again itself (ms). */
const RELOAD_WAIT = 1500;

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The path with links resolved (its folder's, for a file not there yet). */
export function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(p)), path.basename(p));
    } catch {
      return p;
    }
  }
}

export class Sync implements vscode.Disposable {
  private entries = new Map<string, Entry>();
  private resolvedDeco = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  /** Called when a document's conflict or resolved state changes. */
  onDidChange: () => void = () => {};
  /** Called when a notification changed a document (its file changed). */
  onDidApply: () => void = () => {};

  constructor(
    readonly server: Server,
    private log: (line: string) => void,
  ) {
    server.on('buffer/reload', (p) => this.change('reload', p));
    server.on('buffer/merged', (p) => this.change('merged', p));
    server.on('buffer/conflict', (p) => this.change('conflict', p));
    server.on('buffer/deleted', (p) => this.deleted(p));
    server.on('buffer/renamed', (p) => this.renamed(p));
    server.on('buffer/replaced', (p) => this.replaced(p));
    server.on('buffer/skipped', (p) => this.skipped(p));
    server.on('root/lost', () => server.rootLost(true));
    server.on('root/restored', () => server.rootLost(false));
  }

  /** The document's path relative to the root, or undefined when this
   *  server does not keep it (another scheme, outside the root, inside
   *  `.git` or `.mend`). */
  relative(doc: vscode.TextDocument): string | undefined {
    if (doc.uri.scheme !== 'file') {
      return undefined;
    }
    const root = this.server.canonicalRoot;
    const p = real(doc.uri.fsPath);
    if (!p.startsWith(root + path.sep)) {
      return undefined;
    }
    const rel = p.slice(root.length + 1);
    const first = rel.split(path.sep)[0];
    return first === '.git' || first === '.mend' ? undefined : rel;
  }

  /** Whether this server keeps the document. */
  has(doc: vscode.TextDocument): boolean {
    return this.entries.has(doc.uri.toString());
  }

  /** Documents in conflict mode, and those with highlighted resolutions. */
  counts(): { conflicts: number; resolved: number } {
    let conflicts = 0;
    let resolved = 0;
    for (const e of this.entries.values()) {
      conflicts += e.st.conflict ? 1 : 0;
      resolved += e.st.resolved.length > 0 ? 1 : 0;
    }
    return { conflicts, resolved };
  }

  /** Reports a document the editor opened (or every one, to a server just
   *  started: a document with unsaved edits names the text it derives
   *  from, so whatever the file gained meanwhile is merged into it). */
  async open(doc: vscode.TextDocument): Promise<void> {
    const key = doc.uri.toString();
    if (!this.server.running || this.has(doc) || this.opening.has(key)) {
      return;
    }
    const rel = this.relative(doc);
    if (rel === undefined) {
      return;
    }
    this.opening.add(key);
    const kept = this.kept.get(key);
    const st = kept?.rel === rel ? kept : new DocState(rel);
    st.id = undefined;
    st.seq = undefined;
    const e: Entry = { doc, st, queue: Promise.resolve() };
    const disk = await fs.readFile(doc.uri.fsPath).catch(() => undefined);
    if (disk !== undefined && !doc.isDirty) {
      st.bom = splitBom(disk.toString('utf8')).bom;
      st.base = disk.toString('utf8');
      st.diskSha = sha256(disk);
      e.st.knownMtime = await mtime(doc.uri.fsPath);
    }
    this.opening.delete(key);
    if (doc.isClosed || !this.server.running) {
      return;
    }
    // From here on every change is reported after this open.
    this.entries.set(key, e);
    const params: Record<string, unknown> = { ...st.report(doc.getText(), this.dirty(e), doc.version, true) };
    delete params.applied;
    if (params.dirty && st.base !== undefined) {
      params.disk = st.base;
    }
    try {
      const r = await this.server.request<{ buffer: number; path: string }>('buffer/open', params);
      st.id = r.buffer;
      st.rel = r.path;
    } catch (err) {
      this.entries.delete(key);
      this.log(`${rel}: ${errorOf(err).describe()}`);
    }
  }

  private opening = new Set<string>();

  /** What each document and a server agreed on, kept across a restart. */
  private kept = new Map<string, DocState>();

  /** Forgets every document (the server died); they are opened again,
   *  against what they last agreed on, when it is back. */
  reset(): void {
    for (const [key, e] of this.entries) {
      this.kept.set(key, e.st);
    }
    this.entries.clear();
  }

  /** Reports a change of the document. */
  changed(ev: vscode.TextDocumentChangeEvent): void {
    const e = this.entries.get(ev.document.uri.toString());
    if (!e || e.st.applying) {
      return;
    }
    const conflict = e.st.conflict;
    this.report(e, 'buffer/changed', false);
    if (conflict !== e.st.conflict) {
      this.onDidChange();
    }
    if (!ev.document.isDirty && ev.contentChanges.length > 0) {
      // VS Code read the file again on its own.
      void mtime(ev.document.uri.fsPath).then((m) => (e.st.knownMtime = m));
    }
  }

  /** Whether the document has unsaved edits. VS Code's `isDirty` is set
   *  only after the change event of a first edit, so a clean document whose
   *  text left the one it derives from is dirty unless the file holds that
   *  text (VS Code read the file again on its own). */
  private dirty(e: Entry): boolean {
    if (e.doc.isDirty) {
      return true;
    }
    const text = (e.st.bom ? '\ufeff' : '') + e.doc.getText();
    if (e.st.base === undefined || text === e.st.base) {
      return false;
    }
    try {
      return readFileSync(e.doc.uri.fsPath, 'utf8') !== text;
    } catch {
      return true;
    }
  }

  private report(e: Entry, method: string, force: boolean): void {
    const params = e.st.report(e.doc.getText(), this.dirty(e), e.doc.version, force);
    if (params) {
      this.server.request(method, params).catch((err) => this.log(`${e.st.rel}: ${errorOf(err).describe()}`));
    }
  }

  /** Before VS Code writes a document a merge changed: VS Code's record of
   *  the file is older than the file, so it would refuse ("the content of
   *  the file is newer"). When the file still holds exactly the bytes the
   *  document took from the server, nothing on disk would be lost: the
   *  file's time is set back to the one VS Code knows, so the write goes
   *  through. Otherwise the file has a change the document has not taken
   *  yet: VS Code asks as usual, and the server is asked to merge it. */
  async willSave(doc: vscode.TextDocument): Promise<void> {
    const e = this.entries.get(doc.uri.toString());
    if (!e || !e.st.merged || !this.server.running) {
      return;
    }
    const file = doc.uri.fsPath;
    const bytes = await fs.readFile(file).catch(() => undefined);
    if (bytes === undefined) {
      return;
    }
    if (sha256(bytes) !== e.st.diskSha) {
      this.report(e, 'buffer/resync', true);
      return;
    }
    const before = await fs.stat(file);
    // VS Code's record of the file is at least as new as the last time the
    // extension saw VS Code read or write it (unknown: any time will do).
    const back = new Date(Math.min(e.st.knownMtime ?? 0, before.mtimeMs));
    await fs.utimes(file, before.atime, back);
    const again = await fs.readFile(file).catch(() => undefined);
    if (again === undefined || sha256(again) !== e.st.diskSha) {
      // Written meanwhile: its time is now again, and VS Code asks.
      const now = new Date();
      await fs.utimes(file, now, now).catch(() => {});
      this.report(e, 'buffer/resync', true);
      return;
    }
    // Should the save not happen after all, the file gets its time back.
    const saves = e.st.saves;
    setTimeout(() => {
      if (e.st.saves === saves) {
        void restoreTime(file, back, before.atime, before.mtime);
      }
    }, 5000);
  }

  /** Reports a save: the file now holds what VS Code wrote. */
  async saved(doc: vscode.TextDocument): Promise<void> {
    const e = this.entries.get(doc.uri.toString());
    if (!e) {
      return;
    }
    const bytes = await fs.readFile(doc.uri.fsPath).catch(() => undefined);
    const text = bytes ? bytes.toString('utf8') : (e.st.bom ? '\ufeff' : '') + doc.getText();
    e.st.saved(text, sha256(bytes ?? text));
    e.st.knownMtime = await mtime(doc.uri.fsPath);
    e.st.sent = e.st.version(doc.version);
    this.decorate(doc);
    this.onDidChange();
    this.server
      .request('buffer/saved', { path: e.st.rel, text, version: e.st.sent })
      .catch((err) => this.log(`${e.st.rel}: ${errorOf(err).describe()}`));
  }

  closed(doc: vscode.TextDocument): void {
    const key = doc.uri.toString();
    const e = this.entries.get(key);
    this.kept.delete(key);
    if (!e) {
      return;
    }
    this.entries.delete(key);
    this.server.request('buffer/close', { path: e.st.rel }).catch(() => {});
    this.onDidChange();
  }

  /** The entry a notification is about: by the server's buffer number,
   *  else by path. */
  private find(p: { buffer?: number; path?: string }): Entry | undefined {
    for (const e of this.entries.values()) {
      if (p.buffer !== undefined && e.st.id !== undefined ? e.st.id === p.buffer : e.st.rel === p.path) {
        return e;
      }
    }
    return undefined;
  }

  private change(kind: Kind, p: ChangeParams): void {
    const e = this.find(p);
    if (!e) {
      return;
    }
    e.queue = e.queue.then(() => this.apply(kind, e, p)).catch((err) => this.log(`${p.path}: ${errorOf(err).describe()}`));
  }

  /** Applies a notification, or answers `buffer/resync` when the document
   *  moved on since the server computed it. Either way the server hears
   *  from the document before anything else changes it. */
  private async apply(kind: Kind, e: Entry, p: ChangeParams): Promise<void> {
    const doc = e.doc;
    if (doc.isClosed || this.entries.get(doc.uri.toString()) !== e) {
      return;
    }
    const target = splitBom(p.text).body;
    if (kind === 'reload' && !this.dirty(e) && (await this.reloadedByVSCode(e, target))) {
      e.st.took(kind, p);
      this.report(e, 'buffer/changed', true);
      return;
    }
    if (!e.st.fits(p.version, doc.version) || doc.isClosed) {
      this.report(e, 'buffer/resync', true);
      return;
    }
    if (!(await this.edit(e, target, p.hunks))) {
      this.report(e, 'buffer/resync', true);
      return;
    }
    // A reload applied here leaves the document modified (equal to the
    // file): its save goes through willSave as a merge's does.
    e.st.took(kind === 'reload' ? 'merged' : kind, p);
    this.report(e, 'buffer/changed', true);
    if (kind === 'conflict') {
      void vscode.window.showWarningMessage(
        `mend: ${p.path} changed on disk where you edited it; resolve the conflict markers and save`,
      );
    }
    this.decorate(doc);
    this.onDidChange();
    this.onDidApply();
  }

  /** A document without unsaved edits: VS Code reads its file again on its
   *  own (keeping the cursor), and the document stays unmodified, which an
   *  edit from here could not do. Waits a moment for that; false when the
   *  document did not come to hold `target` (the person typed, or VS Code
   *  does not watch the file), and the notification is applied as any. */
  private async reloadedByVSCode(e: Entry, target: string): Promise<boolean> {
    const start = e.doc.version;
    for (let waited = 0; waited < RELOAD_WAIT; waited += 10) {
      if (e.doc.isClosed) {
        return false;
      }
      if (e.doc.getText() === target && !e.doc.isDirty) {
        this.onDidApply();
        return true;
      }
      if (e.doc.version !== start && e.doc.isDirty) {
        return false;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    return false;
  }

  /** Makes the document hold `target`, from the hunks when they give it,
   *  as one WorkspaceEdit; false when VS Code refused it because the
   *  document changed meanwhile (it checks the version), so a hunk never
   *  lands on lines that moved. */
  private async edit(e: Entry, target: string, hunks: ChangeParams['hunks']): Promise<boolean> {
    const doc = e.doc;
    const edits = editsFor(doc.getText(), hunks, target);
    if (edits.length === 0) {
      return true;
    }
    const we = new vscode.WorkspaceEdit();
    for (const ed of edits) {
      we.replace(doc.uri, new vscode.Range(doc.positionAt(ed.start), doc.positionAt(ed.end)), ed.text);
    }
    e.st.applying = true;
    try {
      return await vscode.workspace.applyEdit(we);
    } finally {
      e.st.applying = false;
    }
  }

  private deleted(p: { buffer: number; path: string }): void {
    const e = this.find(p);
    if (!e) {
      return;
    }
    e.st.deleted = true;
    void vscode.window.showWarningMessage(`mend: ${p.path} was deleted on disk; saving recreates it`);
  }

  private async renamed(p: { buffer: number; path: string; to: string; to_abspath: string }): Promise<void> {
    const e = this.find(p);
    if (!e) {
      return;
    }
    const old = e.doc;
    const text = old.getText();
    const dirty = old.isDirty;
    // The server keeps the buffer under its new name: the old document is
    // no longer reported, and the new one is opened to it as any document.
    this.entries.delete(old.uri.toString());
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(p.to_abspath));
    if (dirty && doc.getText() !== text) {
      const we = new vscode.WorkspaceEdit();
      we.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
      await vscode.workspace.applyEdit(we);
    }
    const shown = vscode.window.visibleTextEditors.some((ed) => ed.document === old);
    if (shown) {
      await vscode.window.showTextDocument(doc, { preview: false });
    }
    if (!dirty) {
      // Nothing unsaved under the old name: its tabs go (one with unsaved
      // edits stays, marked deleted, until the person closes it).
      const tabs = vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === old.uri.toString());
      await vscode.window.tabGroups.close(tabs, true);
    }
    void vscode.window.showInformationMessage(`mend: ${p.path} was renamed to ${p.to}`);
  }

  private replaced(p: { buffer: number; path: string; by: string }): void {
    const e = this.find(p);
    if (!e) {
      return;
    }
    this.entries.delete(e.doc.uri.toString());
    void vscode.window.showWarningMessage(
      `mend: ${p.by} was moved onto ${p.path}; this document keeps its text but is no longer synced`,
    );
  }

  private skipped(p: { buffer: number; path: string; reason: string; message?: string }): void {
    const e = this.find(p);
    if (e && p.reason === 'conflict') {
      e.st.held = true;
      this.onDidChange();
    }
    void vscode.window.showWarningMessage(`mend: ${p.path}: ${p.message ?? p.reason}`);
  }

  /** Highlights the regions a resolver settled, until the document is saved. */
  decorate(doc: vscode.TextDocument): void {
    const e = this.entries.get(doc.uri.toString());
    const ranges = (e?.st.resolved ?? []).map(
      (r) => new vscode.Range(r.start, 0, Math.max(r.start, r.end - 1), 0),
    );
    for (const ed of vscode.window.visibleTextEditors) {
      if (ed.document === doc) {
        ed.setDecorations(this.resolvedDeco, ranges);
      }
    }
  }

  /** Drops the resolved highlights of every document. */
  dismissResolved(): void {
    for (const e of this.entries.values()) {
      e.st.resolved = [];
      this.decorate(e.doc);
    }
    this.onDidChange();
  }

  /** The server's number of a document (the tests ask). */
  state(doc: vscode.TextDocument): DocState | undefined {
    return this.entries.get(doc.uri.toString())?.st;
  }

  dispose(): void {
    this.resolvedDeco.dispose();
  }
}

async function mtime(file: string): Promise<number | undefined> {
  try {
    return Math.floor((await fs.stat(file)).mtimeMs);
  } catch {
    return undefined;
  }
}

/** Gives a file its time back, if it still has the one it was set to. */
async function restoreTime(file: string, set: Date, atime: Date, mtime: Date): Promise<void> {
  try {
    if ((await fs.stat(file)).mtimeMs === set.getTime()) {
      await fs.utimes(file, atime, mtime);
    }
  } catch {
    // Gone: nothing to give back.
  }
}
