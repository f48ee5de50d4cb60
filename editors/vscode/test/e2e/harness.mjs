// Drives a real VS Code (code-server) through Debian's Chromium with
// puppeteer-core: starts code-server with the packaged extension installed,
// opens a folder per scenario in its own window, and offers the person's
// actions (open a file, type, save, run a command, click a CodeLens) and the
// checks (an editor shows a text, a file holds a text).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value, or throws `what` after `ms`. */
export async function until(what, fn, ms = 15000, every = 25) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await sleep(every);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** code-server and Chromium, shared by every scenario. */
export class VSCode {
  static async start({ codeServer, chromium, vsix, mend, work }) {
    const ext = path.join(work, 'extensions');
    const user = path.join(work, 'user');
    fs.mkdirSync(path.join(user, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(user, 'User', 'settings.json'),
      JSON.stringify(
        {
          'security.workspace.trust.enabled': false,
          'workbench.startupEditor': 'none',
          'workbench.tips.enabled': false,
          'workbench.enableExperiments': false,
          'telemetry.telemetryLevel': 'off',
          'update.mode': 'none',
          'extensions.autoCheckUpdates': false,
          'extensions.ignoreRecommendations': true,
          'files.autoSave': 'off',
          'files.hotExit': 'off',
          'editor.codeLens': true,
          'editor.autoClosingBrackets': 'never',
          'editor.autoClosingQuotes': 'never',
          'editor.acceptSuggestionOnEnter': 'off',
          'editor.quickSuggestions': { other: false, comments: false, strings: false },
          'editor.suggestOnTriggerCharacters': false,
          'editor.minimap.enabled': false,
          'git.enabled': false,
          'workbench.secondarySideBar.defaultVisibility': 'hidden',
          'chat.disableAIFeatures': true,
          'window.restoreWindows': 'none',
          'mend.path': mend,
          'mend.trace': true,
        },
        null,
        2,
      ),
    );
    // Its own config file, so nothing is written to the user's.
    const config = path.join(work, 'config.yaml');
    fs.writeFileSync(config, 'auth: none\n');
    execFileSync(codeServer, ['--config', config, '--extensions-dir', ext, '--user-data-dir', user, '--install-extension', vsix], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const port = await freePort();
    const log = fs.openSync(path.join(work, 'code-server.log'), 'w');
    const server = spawn(
      codeServer,
      [
        '--config', config,
        '--auth', 'none',
        '--bind-addr', `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--extensions-dir', ext,
        '--user-data-dir', user,
      ],
      { stdio: ['ignore', log, log], detached: false },
    );
    const url = `http://127.0.0.1:${port}`;
    await until('code-server to listen', async () => (await fetch(`${url}/healthz`)).ok, 60000, 200);
    const browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,900'],
      defaultViewport: { width: 1400, height: 900 },
    });
    return new VSCode(server, browser, url, work);
  }

  constructor(server, browser, url, work) {
    this.server = server;
    this.browser = browser;
    this.url = url;
    this.work = work;
  }

  /** A window with `folder` open, once mend's status bar item shows. */
  async open(folder) {
    const page = await this.browser.newPage();
    const w = new Window(page, folder);
    page.on('pageerror', (e) => w.errors.push(String(e)));
    await page.goto(`${this.url}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('.monaco-workbench', { timeout: 90000 });
    await w.waitStatus(/mend(?!: starting)/, 90000);
    return w;
  }

  async stop() {
    await this.browser.close().catch(() => {});
    this.server.kill();
  }
}

const ctrl = process.platform === 'darwin' ? 'Meta' : 'Control';

export class Window {
  constructor(page, folder) {
    this.page = page;
    this.folder = folder;
    this.errors = [];
  }

  async key(combo) {
    const keys = combo.split('+');
    for (const k of keys) await this.page.keyboard.down(k === 'Ctrl' ? ctrl : k);
    for (const k of keys.reverse()) await this.page.keyboard.up(k === 'Ctrl' ? ctrl : k);
  }

  /** The status bar's text. */
  status() {
    return this.page.evaluate(() => document.querySelector('.part.statusbar')?.textContent ?? '');
  }

  waitStatus(re, ms = 15000) {
    return until(`the status bar to show ${re}`, async () => re.test(await this.status()), ms, 100);
  }

  /** Opens a file by name with Ctrl+P and waits for its editor. */
  async openFile(name) {
    await this.key('Ctrl+P');
    await this.page.waitForSelector('.quick-input-widget input', { visible: true });
    await this.page.keyboard.type(name);
    await until(`quick open to list ${name}`, () =>
      this.page.evaluate(
        (n) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(n)),
        name,
      ),
    );
    await this.page.keyboard.press('Enter');
    await until(`an editor of ${name}`, () =>
      this.page.evaluate(
        (n) => document.querySelector('.editor-group-container.active .tab.active')?.textContent.includes(n),
        name,
      ),
    );
    await this.page.waitForSelector('.editor-group-container.active .monaco-editor .view-lines');
    await sleep(300);
  }

  /** Runs a command from the palette (F1) by its title. */
  async command(title) {
    await this.key('F1');
    await this.page.waitForSelector('.quick-input-widget input', { visible: true });
    await this.page.keyboard.type(title);
    await until(`the palette to list ${title}`, () =>
      this.page.evaluate(
        (t) => document.querySelector('.quick-input-list .monaco-list-row.focused')?.textContent.includes(t),
        title,
      ),
    );
    await this.page.keyboard.press('Enter');
  }

  /** The lines the active editor shows (spaces as spaces). */
  shown() {
    return this.page.evaluate(() => {
      const lines = [...document.querySelectorAll('.editor-group-container.active .monaco-editor .view-lines .view-line')];
      return lines
        .map((l) => ({ top: parseFloat(l.style.top), text: l.textContent.replace(/\u00a0/g, ' ') }))
        .sort((a, b) => a.top - b.top)
        .map((l) => l.text)
        .join('\n');
    });
  }

  waitShown(text, ms = 15000) {
    return until(`the editor to show ${JSON.stringify(text)}`, async () => (await this.shown()).includes(text), ms, 10);
  }

  /** The notifications' texts (toasts and the center). */
  notifications() {
    return this.page.evaluate(() =>
      [...document.querySelectorAll('.notification-list-item')].map((n) => n.textContent).join('\n'),
    );
  }

  /** The CodeLens links in the active editor, in order. */
  lenses() {
    return this.page.evaluate(() =>
      [...document.querySelectorAll('.editor-group-container.active .codelens-decoration a')].map((a) => a.textContent),
    );
  }

  /** Clicks the `n`th CodeLens link titled `title` in the active editor
   *  (again if the lenses were drawn anew meanwhile). */
  async clickLens(title, n = 0) {
    await until(`CodeLens ${title} number ${n + 1} to take a click`, async () => {
      const links = await this.page.$$('.editor-group-container.active .codelens-decoration a');
      const matching = [];
      for (const l of links) {
        if ((await l.evaluate((a) => a.textContent)) === title) matching.push(l);
      }
      if (!matching[n]) return false;
      await matching[n].click();
      return true;
    });
  }

  async screenshot(file) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await this.page.screenshot({ path: file });
  }

  async close() {
    await this.page.close().catch(() => {});
  }
}

/** Writes a file the way agents and editors save: a temporary file renamed
 *  over it. */
export function agentWrite(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.agent-tmp`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** A git repository with `files`, committed. */
export function repo(dir, files) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args) =>
    execFileSync('git', ['-c', 'user.name=mend test', '-c', 'user.email=test@mend.invalid', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  git('init', '-q');
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  git('add', '-A');
  git('commit', '-qm', 'start');
  return fs.realpathSync(dir);
}

export function read(dir, name) {
  return fs.readFileSync(path.join(dir, name), 'utf8');
}
