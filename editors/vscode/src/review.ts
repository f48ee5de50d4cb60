// Review: a turn's changes (`turn/*`) or a pending session's proposals
// (`pending/*`) as a tree of files with their status letters, each opening
// its diff, and a CodeLens "Accept" and "Reject" on every hunk in the
// file's editor. Every action names the version of what was shown (`seen`),
// so a hunk that changed since is refused and the view refreshes.

import { promises as fs } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { changedLines, lensLine, original, pendingFiles, ReviewFile, turnFiles } from './model';
import { errorOf, Server } from './server';

export type Mode = 'turn' | 'pending';

/** What a hunk's or a file's action names. */
export interface Target {
  action: 'accept' | 'reject';
  path: string;
  hunk?: number;
  seen?: string;
}

export const SCHEME = 'mend-review';

export class Review
  implements vscode.TreeDataProvider<ReviewFile>, vscode.CodeLensProvider, vscode.TextDocumentContentProvider
{
  mode: Mode | undefined;
  server: Server | undefined;
  files: ReviewFile[] = [];
  private treeChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.treeChanged.event;
  private lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private contentChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.contentChanged.event;
  /** Texts of the diff views' virtual sides, by URI. */
  private texts = new Map<string, string>();
  /** The lines a hunk adds (a turn) or would replace (a pending proposal). */
  private added = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
  });
  private removed = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.removedLineBackground'),
  });

  constructor(private log: (line: string) => void) {}

  /** Loads `mode`'s files from `server`. */
  async load(mode: Mode, server: Server): Promise<void> {
    this.mode = mode;
    this.server = server;
    try {
      if (mode === 'turn') {
        this.files = turnFiles(await server.request('turn/diff', {}));
      } else {
        const status = await server.request('pending/status', {});
        const diff = await server.request('pending/diff', {});
        this.files = pendingFiles(status, diff);
      }
    } catch (e) {
      this.files = [];
      this.changed();
      throw e;
    }
    this.changed();
  }

  /** Loads the current mode again (after an action, or a change of a file). */
  async refresh(): Promise<void> {
    if (this.mode && this.server?.running) {
      await this.load(this.mode, this.server).catch((e) => this.log(`review: ${errorOf(e).describe()}`));
    }
  }

  private changed(): void {
    this.treeChanged.fire();
    this.lensesChanged.fire();
    this.decorate(vscode.window.visibleTextEditors);
  }

  /** Highlights, in each editor of a file under review, the lines its
   *  hunks change. */
  decorate(editors: readonly vscode.TextEditor[]): void {
    const side = this.mode === 'pending' ? 'old' : 'new';
    for (const ed of editors) {
      const f = this.fileOf(ed.document);
      const lines = (f?.hunks ?? []).flatMap((h) => changedLines(h, side));
      const ranges = lines.map((l) => new vscode.Range(l, 0, l, 0));
      ed.setDecorations(side === 'new' ? this.added : this.removed, ranges);
      ed.setDecorations(side === 'new' ? this.removed : this.added, []);
    }
  }

  getTreeItem(f: ReviewFile): vscode.TreeItem {
    const item = new vscode.TreeItem(`${f.letter.padEnd(2)} ${f.path}`);
    const notes = [f.from && `from ${f.from}`, f.to && `to ${f.to}`, f.note, hunks(f.hunks.length)];
    item.description = notes.filter(Boolean).join(' · ');
    item.tooltip = `${f.path} (${f.letter})`;
    item.contextValue = 'mendFile';
    item.command = { command: 'mend.openDiff', title: 'Open Diff', arguments: [f] };
    return item;
  }

  getChildren(f?: ReviewFile): ReviewFile[] {
    return f ? [] : this.files;
  }

  /** The review's file shown in `doc`, if any. */
  private fileOf(doc: vscode.TextDocument): ReviewFile | undefined {
    if (!this.server || doc.uri.scheme !== 'file') {
      return undefined;
    }
    const root = this.server.canonicalRoot;
    const rel = path.relative(root, doc.uri.fsPath);
    return this.files.find((f) => f.path === rel || (this.mode === 'pending' && f.to === rel));
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const f = this.fileOf(doc);
    if (!f) {
      return [];
    }
    const lenses: vscode.CodeLens[] = [];
    for (const h of f.hunks) {
      const line = Math.min(lensLine(h, this.mode === 'pending' ? 'old' : 'new'), Math.max(0, doc.lineCount - 1));
      const range = new vscode.Range(line, 0, line, 0);
      for (const action of ['accept', 'reject'] as const) {
        const target: Target = { action, path: f.path, hunk: h.number, seen: f.version };
        lenses.push(
          new vscode.CodeLens(range, {
            title: action === 'accept' ? 'Accept' : 'Reject',
            tooltip: `mend: ${action} hunk ${h.number} of ${f.path} (${this.mode})`,
            command: 'mend.act',
            arguments: [target],
          }),
        );
      }
    }
    return lenses;
  }

  /** Accepts or rejects a hunk or a file, naming the version shown. */
  async act(t: Target): Promise<void> {
    if (!this.mode || !this.server) {
      return;
    }
    const params: Record<string, unknown> = { paths: [t.path] };
    if (t.seen !== undefined) {
      params.seen = t.seen;
    }
    if (t.hunk !== undefined) {
      params.hunks = [t.hunk];
    }
    const what = t.hunk !== undefined ? `hunk ${t.hunk} of ${t.path}` : t.path;
    // The file's lenses go until the review is loaded again: their numbers
    // and version are no longer what the server would act on.
    this.files = this.files.map((f) => (f.path === t.path ? { ...f, hunks: [] } : f));
    this.lensesChanged.fire();
    this.decorate(vscode.window.visibleTextEditors);
    try {
      await this.server.request(`${this.mode}/${t.action}`, params);
      vscode.window.setStatusBarMessage(`mend: ${t.action}ed ${what}`, 4000);
    } catch (e) {
      void vscode.window.showErrorMessage(`mend: ${t.action} ${what}: ${errorOf(e).describe()}`);
    }
    await this.refresh();
  }

  /** Opens a file's diff: for a turn, the file at the turn's start against
   *  the file now; for a pending proposal, the file against the output. */
  async openDiff(f: ReviewFile): Promise<void> {
    if (!this.server) {
      return;
    }
    const root = this.server.canonicalRoot;
    const file = vscode.Uri.file(path.join(root, f.path));
    const now = await fs.readFile(file.fsPath, 'utf8').catch(() => '');
    let left: vscode.Uri;
    let right: vscode.Uri;
    if (this.mode === 'turn') {
      left = this.virtual(f.path, 'start', original(now, f.hunks) ?? '');
      right = f.letter === 'D' ? this.virtual(f.path, 'deleted', '') : file;
    } else {
      let out = '';
      try {
        const r = await this.server.request<{ text: string | null }>('pending/output', { path: f.path });
        out = r.text ?? '';
      } catch (e) {
        void vscode.window.showErrorMessage(`mend: ${f.path}: ${errorOf(e).describe()}`);
        return;
      }
      left = file;
      right = this.virtual(f.to ?? f.path, 'proposed', out);
    }
    await vscode.commands.executeCommand('vscode.diff', left, right, `${f.path} (mend ${this.mode})`);
  }

  private virtual(p: string, side: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SCHEME, path: '/' + p, query: side });
    this.texts.set(uri.toString(), text);
    this.contentChanged.fire(uri);
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.added.dispose();
    this.removed.dispose();
    this.treeChanged.dispose();
    this.lensesChanged.dispose();
    this.contentChanged.dispose();
  }
}

function hunks(n: number): string {
  return n === 1 ? '1 hunk' : `${n} hunks`;
}
