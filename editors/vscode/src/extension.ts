// The extension's entry: one `mend editor` server per root (the worktree
// holding a workspace folder), buffer sync for the documents under it, the
// review view and CodeLenses, the commands, and a status bar item.

import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { Mode, Review, SCHEME, Target } from './review';
import { errorOf, Server } from './server';
import { real, Sync } from './sync';

interface Root {
  server: Server;
  sync: Sync;
  /** The workspace folders it serves. */
  folders: Set<string>;
}

let output: vscode.OutputChannel;
const roots = new Map<string, Root>();
let status: vscode.StatusBarItem;
let review: Review;

function log(line: string): void {
  output.appendLine(line);
}

/** The worktree holding `folder` (the folder itself outside git). */
function worktree(folder: string): Promise<string> {
  return new Promise((resolve) => {
    execFile('git', ['-C', folder, 'rev-parse', '--show-toplevel'], (err, out) => {
      resolve(real(err ? folder : out.trim() || folder));
    });
  });
}

function config(): { command: string; merge: string; trace: boolean } {
  const c = vscode.workspace.getConfiguration('mend');
  return {
    command: c.get<string>('path') || 'mend',
    merge: c.get<string>('merge') || 'git',
    trace: c.get<boolean>('trace') ?? false,
  };
}

/** Folder changes and restarts, one at a time: two of them interleaved
 *  could start two servers for one root. */
let setup: Promise<void> = Promise.resolve();
function serially(fn: () => Promise<void> | void): void {
  setup = setup.then(fn).catch((e) => log(`setup: ${errorOf(e).describe()}`));
}

/** The settings the servers were started with. */
let started = '';

async function addFolder(folder: vscode.WorkspaceFolder): Promise<void> {
  if (folder.uri.scheme !== 'file') {
    return;
  }
  const rootPath = await worktree(folder.uri.fsPath);
  const existing = roots.get(rootPath);
  if (existing) {
    existing.folders.add(folder.uri.toString());
    return;
  }
  const { command, merge, trace } = config();
  const server = new Server({ command, root: rootPath, merge, trace, log: (l) => log(`[${rootPath}] ${l}`) });
  const sync = new Sync(server, (l) => log(`[${rootPath}] ${l}`));
  const root: Root = { server, sync, folders: new Set([folder.uri.toString()]) };
  roots.set(rootPath, root);
  sync.onDidChange = () => updateStatus();
  sync.onDidApply = () => void review.refresh();
  server.onState = (s) => {
    if (s === 'dead') {
      sync.reset();
    }
    updateStatus();
  };
  server.onSpawnError = (m) => void vscode.window.showErrorMessage(`mend: ${m}`);
  server.onStarted = () => {
    log(`[${rootPath}] watching ${server.canonicalRoot}`);
    for (const doc of vscode.workspace.textDocuments) {
      void openDoc(doc);
    }
  };
  server.start();
}

function removeFolder(folder: vscode.WorkspaceFolder): void {
  for (const [key, root] of roots) {
    if (root.folders.delete(folder.uri.toString()) && root.folders.size === 0) {
      root.server.stop();
      root.sync.dispose();
      roots.delete(key);
    }
  }
  updateStatus();
}

/** The root whose server keeps `doc`: the deepest root holding it. */
function rootOf(doc: vscode.TextDocument): Root | undefined {
  let best: Root | undefined;
  for (const r of roots.values()) {
    if (r.sync.relative(doc) !== undefined) {
      if (!best || r.server.canonicalRoot.length > best.server.canonicalRoot.length) {
        best = r;
      }
    }
  }
  return best;
}

async function openDoc(doc: vscode.TextDocument): Promise<void> {
  await rootOf(doc)?.sync.open(doc);
}

/** The root the commands act on: the active document's, else the first. */
function currentRoot(): Root | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  return (doc && rootOf(doc)) ?? roots.values().next().value;
}

function updateStatus(): void {
  const r = currentRoot();
  if (!r) {
    status.hide();
    return;
  }
  let conflicts = 0;
  for (const root of roots.values()) {
    conflicts += root.sync.counts().conflicts;
  }
  const s = r.server.state;
  status.backgroundColor = undefined;
  if (s === 'dead') {
    status.text = '$(error) mend: dead';
    status.tooltip = 'The mend server is not running: documents are not kept in step. Click to restart.';
    status.command = 'mend.restart';
    status.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
  } else if (s === 'starting') {
    status.text = '$(sync~spin) mend: starting';
    status.tooltip = 'mend is starting';
    status.command = 'mend.reviewTurn';
  } else if (s === 'lost') {
    status.text = '$(warning) mend: root lost';
    status.tooltip = `The folder ${r.server.canonicalRoot} is gone from its path; no change reaches the documents`;
    status.command = 'mend.reviewTurn';
    status.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  } else if (conflicts > 0) {
    status.text = `$(warning) mend: conflict (${conflicts})`;
    status.tooltip = 'A write of the agent overlapped your unsaved edits: resolve the markers, then save';
    status.command = 'mend.reviewTurn';
    status.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  } else {
    status.text = '$(eye) mend';
    status.tooltip = `mend is watching ${r.server.canonicalRoot}. Click to review the turn.`;
    status.command = 'mend.reviewTurn';
  }
  status.show();
}

/** Runs a request on the current root's server, showing a failure with its kind. */
async function call<T = any>(method: string, params: object, what: string): Promise<T | undefined> {
  const r = currentRoot();
  if (!r) {
    void vscode.window.showErrorMessage('mend: no workspace folder is open');
    return undefined;
  }
  try {
    return await r.server.request<T>(method, params);
  } catch (e) {
    void vscode.window.showErrorMessage(`mend: ${what}: ${errorOf(e).describe()}`);
    return undefined;
  }
}

async function showReview(mode: Mode): Promise<void> {
  const r = currentRoot();
  if (!r) {
    void vscode.window.showErrorMessage('mend: no workspace folder is open');
    return;
  }
  try {
    await review.load(mode, r.server);
  } catch (e) {
    void vscode.window.showErrorMessage(`mend: review ${mode}: ${errorOf(e).describe()}`);
    return;
  }
  await vscode.commands.executeCommand('mend.review.focus');
  if (review.files.length === 0) {
    void vscode.window.showInformationMessage(
      mode === 'turn' ? 'mend: no changes in this turn' : 'mend: no pending changes',
    );
    return;
  }
  // The first file in an editor, where its hunks have their CodeLenses.
  const first = review.files.find((f) => f.letter !== 'D' && f.hunks.length > 0);
  if (first) {
    const uri = vscode.Uri.joinPath(vscode.Uri.file(r.server.canonicalRoot), first.path);
    await vscode.window.showTextDocument(uri, { preview: false });
  }
}

export function activate(ctx: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('mend');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  review = new Review(log);
  const sub = (d: vscode.Disposable) => ctx.subscriptions.push(d);
  sub(output);
  sub(status);
  sub(review);
  sub(vscode.window.registerTreeDataProvider('mend.review', review));
  sub(vscode.languages.registerCodeLensProvider({ scheme: 'file' }, review));
  sub(vscode.workspace.registerTextDocumentContentProvider(SCHEME, review));

  sub(vscode.workspace.onDidOpenTextDocument((d) => void openDoc(d)));
  // Only the root that keeps a document has it; no path is resolved per key.
  const keeper = (d: vscode.TextDocument) => [...roots.values()].find((r) => r.sync.has(d));
  sub(vscode.workspace.onDidChangeTextDocument((ev) => keeper(ev.document)?.sync.changed(ev)));
  sub(vscode.workspace.onWillSaveTextDocument((ev) => {
    const r = keeper(ev.document);
    if (r) {
      ev.waitUntil(r.sync.willSave(ev.document).catch((e) => log(`save: ${errorOf(e).describe()}`)));
    }
  }));
  sub(vscode.workspace.onDidSaveTextDocument((d) => void keeper(d)?.sync.saved(d)));
  sub(vscode.workspace.onDidCloseTextDocument((d) => {
    for (const r of roots.values()) {
      r.sync.closed(d);
    }
  }));
  sub(vscode.window.onDidChangeActiveTextEditor(() => updateStatus()));
  sub(vscode.window.onDidChangeVisibleTextEditors((eds) => {
    for (const ed of eds) {
      keeper(ed.document)?.sync.decorate(ed.document);
    }
    review.decorate(eds);
  }));
  sub(vscode.workspace.onDidChangeWorkspaceFolders((ev) => {
    serially(() => ev.removed.forEach(removeFolder));
    ev.added.forEach((f) => serially(() => addFolder(f)));
  }));
  sub(vscode.workspace.onDidChangeConfiguration((ev) => {
    // Settings may arrive after activation (code-server reads the user's
    // from the browser): the servers start again only when they changed.
    if (ev.affectsConfiguration('mend') && JSON.stringify(config()) !== started) {
      serially(restartAll);
    }
  }));

  const command = (id: string, fn: (...args: any[]) => unknown) =>
    sub(vscode.commands.registerCommand(id, fn));
  command('mend.reviewTurn', () => showReview('turn'));
  command('mend.reviewPending', () => showReview('pending'));
  command('mend.refreshReview', () => review.refresh());
  command('mend.act', (t: Target) => review.act(t));
  command('mend.openDiff', (f) => review.openDiff(f));
  command('mend.acceptFile', (f) => review.act({ action: 'accept', path: f.path, seen: f.version }));
  command('mend.rejectFile', (f) => review.act({ action: 'reject', path: f.path, seen: f.version }));
  command('mend.beginTurn', async () => {
    const r = await call<{ turn: { id: string } }>('turn/begin', {}, 'begin turn');
    if (r) {
      vscode.window.setStatusBarMessage(`mend: turn ${r.turn.id} begun`, 4000);
    }
  });
  command('mend.endTurn', async () => {
    if (await call('turn/end', {}, 'end turn')) {
      vscode.window.setStatusBarMessage('mend: turn ended', 4000);
      await review.refresh();
    }
  });
  command('mend.undoReject', async () => {
    const r = await call<{ undone: string }>('turn/undo', {}, 'undo');
    if (r) {
      vscode.window.setStatusBarMessage(`mend: the last ${r.undone} undone`, 4000);
      await review.refresh();
    }
  });
  command('mend.restart', () => serially(restartAll));
  command('mend.dismissResolved', () => roots.forEach((r) => r.sync.dismissResolved()));

  serially(restartAll);
}

/** Stops every server and starts one per root of the workspace folders. */
async function restartAll(): Promise<void> {
  for (const r of roots.values()) {
    r.server.stop();
    r.sync.reset();
    r.sync.dispose();
  }
  roots.clear();
  started = JSON.stringify(config());
  for (const f of vscode.workspace.workspaceFolders ?? []) {
    await addFolder(f);
  }
  updateStatus();
}

export function deactivate(): void {
  for (const r of roots.values()) {
    r.server.stop();
  }
}
