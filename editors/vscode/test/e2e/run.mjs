// The extension's scenarios in a real VS Code (code-server) through Chromium,
// and the latency benchmark. Usage:
//   node test/e2e/run.mjs --mend BIN --vsix FILE --out DIR [--only NAME,...] [--bench N]
// Screenshots go to DIR/screens, the benchmark's figures to DIR/latency.json.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { agentWrite, read, repo, sleep, until, VSCode } from './harness.mjs';

const { values: args } = parseArgs({
  options: {
    mend: { type: 'string' },
    vsix: { type: 'string' },
    out: { type: 'string' },
    only: { type: 'string' },
    bench: { type: 'string' },
  },
});
const out = path.resolve(args.out);
const mend = path.resolve(args.mend);
const screens = path.join(out, 'screens');

function mendIn(dir, ...a) {
  return execFileSync(mend, a, { cwd: dir, encoding: 'utf8' });
}

function lines(n, f = (i) => `line ${i}`) {
  return Array.from({ length: n }, (_, i) => f(i + 1) + '\n').join('');
}

/** The pid of the `mend editor` serving `dir`. */
function serverPid(dir) {
  const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  for (const l of ps.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(l);
    if (m && m[2].includes(' editor --root ') && m[2].endsWith(` --root ${dir}`)) return Number(m[1]);
  }
  return undefined;
}

/** Every `mend editor` process, for a failure message. */
function editorProcesses() {
  const ps = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  return ps.split('\n').filter((l) => l.includes(' editor --root '));
}

function expectFile(dir, name, want) {
  return until(`${name} to hold ${JSON.stringify(want)}`, () => read(dir, name) === want, 15000, 50).catch((e) => {
    throw new Error(`${e.message}; it holds ${JSON.stringify(read(dir, name))}`);
  });
}

async function noSaveConflict(w) {
  const n = await w.notifications();
  if (/content of the file is newer|Failed to save/i.test(n)) {
    throw new Error(`VS Code refused the save: ${n}`);
  }
}

const A_PY = 'import os\n\n\ndef main():\n    return os.getcwd()\n';

const scenarios = {
  /** Done when: a person's unsaved line and an agent's rename-over write
   *  of line 1 both reach the file on Ctrl+S, with no conflict markers. */
  async 'merge-separate-lines'(vs, dir) {
    dir = repo(dir, { 'a.py': A_PY });
    const w = await vs.open(dir);
    await w.openFile('a.py');
    await w.key('Ctrl+End');
    await w.page.keyboard.type('# person edit');
    await w.waitShown('# person edit');
    agentWrite(path.join(dir, 'a.py'), A_PY.replace('import os', 'import os, sys'));
    await w.waitShown('import os, sys');
    await w.key('Ctrl+S');
    await expectFile(dir, 'a.py', A_PY.replace('import os', 'import os, sys') + '# person edit');
    await sleep(500);
    await noSaveConflict(w);
    return w;
  },

  /** The same line: git's conflict markers, resolved with VS Code's own
   *  "Accept Both Changes", then saved. */
  async 'merge-same-line'(vs, dir) {
    dir = repo(dir, { 'a.py': A_PY });
    const w = await vs.open(dir);
    await w.openFile('a.py');
    await w.key('Ctrl+Home');
    await w.key('End');
    await w.page.keyboard.type(', re');
    await w.waitShown('import os, re');
    agentWrite(path.join(dir, 'a.py'), A_PY.replace('import os', 'import os, sys'));
    await w.waitShown('>>>>>>> disk');
    await w.waitStatus(/mend: conflict/);
    await w.screenshot(path.join(screens, 'merge-same-line-conflict.png'));
    await until('the merge CodeLens', async () => (await w.lenses()).includes('Accept Both Changes'));
    await w.clickLens('Accept Both Changes');
    await until('the markers to go', async () => !(await w.shown()).includes('<<<<<<<'));
    await w.key('Ctrl+S');
    await expectFile(dir, 'a.py', A_PY.replace('import os', 'import os, re\nimport os, sys'));
    await w.waitStatus(/mend(?!: conflict)/);
    await noSaveConflict(w);
    return w;
  },

  /** Done when: "mend: Review Turn" puts a Reject CodeLens on each hunk of
   *  a shell edit; the first reverts only its hunk on disk. */
  async 'turn-reject'(vs, dir) {
    const start = lines(20);
    dir = repo(dir, { 'b.py': start, 'c.py': 'x = 1\n' });
    const w = await vs.open(dir);
    mendIn(dir, 'turn', 'begin');
    const edited = start.replace('line 2\n', 'line two\n').replace('line 15\n', 'line fifteen\n');
    execFileSync('sh', ['-c', `sed -i 's/^line 2$/line two/; s/^line 15$/line fifteen/' b.py && echo 'y = 2' >> c.py`], { cwd: dir });
    if (read(dir, 'b.py') !== edited) throw new Error('the shell edit did not happen');
    await w.command('mend: Review Turn');
    await until('two Reject CodeLenses', async () => (await w.lenses()).filter((t) => t === 'Reject').length === 2);
    await w.screenshot(path.join(screens, 'turn-review.png'));
    await w.clickLens('Reject', 0);
    await expectFile(dir, 'b.py', start.replace('line 15\n', 'line fifteen\n'));
    await until('one Reject CodeLens left', async () => (await w.lenses()).filter((t) => t === 'Reject').length === 1);
    if (read(dir, 'c.py') !== 'x = 1\ny = 2\n') throw new Error('c.py changed');
    return w;
  },

  /** A pending proposal accepted hunk by hunk from its CodeLenses. */
  async 'pending-accept'(vs, dir) {
    const start = lines(20);
    dir = repo(dir, { 'b.py': start });
    const response = [
      'b.py', '```python', '<<<<<<< SEARCH', 'line 3', '=======', 'line three', '>>>>>>> REPLACE', '```', '',
      'b.py', '```python', '<<<<<<< SEARCH', 'line 17', '=======', 'line seventeen', '>>>>>>> REPLACE', '```', '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, '..', 'pending-response.md'), response);
    mendIn(dir, 'apply', '--pending', path.join(dir, '..', 'pending-response.md'));
    const w = await vs.open(dir);
    await w.command('mend: Review Pending Changes');
    await until('two Accept CodeLenses', async () => (await w.lenses()).filter((t) => t === 'Accept').length === 2);
    await w.screenshot(path.join(screens, 'pending-review.png'));
    await w.clickLens('Accept', 0);
    await expectFile(dir, 'b.py', start.replace('line 3\n', 'line three\n'));
    await until('one Accept CodeLens left', async () => (await w.lenses()).filter((t) => t === 'Accept').length === 1);
    // The lens drawn for the new version (a stale one is refused, safely).
    await sleep(1000);
    await w.clickLens('Accept', 0);
    await expectFile(dir, 'b.py', start.replace('line 3\n', 'line three\n').replace('line 17\n', 'line seventeen\n'));
    return w;
  },

  /** The agent writes three times while the person types a key every
   *  20 ms for 5 s: every key and every write is in the saved file. */
  async 'typing-fast'(vs, dir) {
    const start = lines(12);
    dir = repo(dir, { 'a.py': start });
    const w = await vs.open(dir);
    await w.openFile('a.py');
    await w.key('Ctrl+End');
    const alphabet = 'abcdefghijklmnopqrstuvwxyz ';
    let typed = '';
    let disk = start;
    const writes = { 50: 1, 125: 2, 200: 3 };
    for (let i = 0; i < 250; i++) {
      const ch = alphabet[i % alphabet.length];
      const t0 = Date.now();
      await w.page.keyboard.type(ch);
      typed += ch;
      if (writes[i]) {
        disk = disk.replace(`line ${writes[i]}\n`, `agent ${writes[i]}\n`);
        agentWrite(path.join(dir, 'a.py'), disk);
      }
      await sleep(Math.max(0, 20 - (Date.now() - t0)));
    }
    await w.waitShown('agent 3');
    await w.waitShown(typed.slice(-20));
    await w.key('Ctrl+S');
    await expectFile(dir, 'a.py', disk + typed);
    await noSaveConflict(w);
    return w;
  },

  /** The server is killed with unsaved edits open; the agent writes while
   *  it is down; the extension starts it again and the document gets the
   *  write merged, keeping the person's edit. */
  async 'server-restart'(vs, dir) {
    dir = repo(dir, { 'a.py': A_PY });
    const w = await vs.open(dir);
    await w.openFile('a.py');
    await w.key('Ctrl+End');
    await w.page.keyboard.type('# kept');
    await w.waitShown('# kept');
    // A settled server first: code-server may hand the settings over after
    // activation, and the extension then starts its servers once more.
    await w.waitStatus(/mend(?!:)/, 30000);
    const pid = await until('the mend editor process', () => serverPid(dir), 30000);
    process.kill(pid, 'SIGKILL');
    await w.waitStatus(/mend: dead|mend: starting/, 5000).catch(() => {});
    agentWrite(path.join(dir, 'a.py'), A_PY.replace('import os', 'import os  # agent'));
    await until('a new server', () => {
      const p = serverPid(dir);
      return p !== undefined && p !== pid;
    }, 30000).catch((e) => {
      throw new Error(`${e.message}; mend processes: ${JSON.stringify(editorProcesses())}`);
    });
    await w.waitShown('import os  # agent');
    await w.waitShown('# kept');
    await w.key('Ctrl+S');
    await expectFile(dir, 'a.py', A_PY.replace('import os', 'import os  # agent') + '# kept');
    await noSaveConflict(w);
    return w;
  },

  /** The turn's commands from the palette: Begin Turn, a whole file
   *  rejected from the review view, Undo Last Reject, End Turn. */
  async 'turn-commands'(vs, dir) {
    const start = lines(20);
    dir = repo(dir, { 'b.py': start });
    const w = await vs.open(dir);
    const turnOpen = () => {
      try {
        return JSON.parse(mendIn(dir, 'turn', 'status', '--json')).turn != null;
      } catch {
        return false;
      }
    };
    await w.command('mend: Begin Turn');
    await until('a turn to begin', turnOpen);
    const edited = start.replace('line 2\n', 'line two\n').replace('line 15\n', 'line fifteen\n');
    fs.writeFileSync(path.join(dir, 'b.py'), edited);
    await w.command('mend: Review Turn');
    await until('two Reject CodeLenses', async () => (await w.lenses()).filter((t) => t === 'Reject').length === 2);
    // The whole file, from the button on its row in the review view.
    const row = await until('the review row of b.py', async () => {
      for (const r of await w.page.$$('.monaco-list-row')) {
        if ((await r.evaluate((e) => e.textContent)).includes('b.py') && (await r.$('.action-label'))) return r;
      }
      return undefined;
    });
    await row.hover();
    const reject = await until('the Reject File button', () => row.$('.action-label[aria-label="Reject File"]'));
    await reject.click();
    await expectFile(dir, 'b.py', start);
    await w.command('mend: Undo Last Reject');
    await expectFile(dir, 'b.py', edited);
    await w.command('mend: End Turn');
    await until('the turn to end', () => !turnOpen());
    return w;
  },

  /** A file renamed on disk with unsaved edits open: the document under the
   *  new name holds them, and saving writes them there. */
  async 'rename-follows'(vs, dir) {
    dir = repo(dir, { 'a.py': A_PY });
    const w = await vs.open(dir);
    await w.openFile('a.py');
    await w.key('Ctrl+End');
    await w.page.keyboard.type('# moved with me');
    await w.waitShown('# moved with me');
    fs.renameSync(path.join(dir, 'a.py'), path.join(dir, 'b.py'));
    await until('an editor of b.py', () =>
      w.page.evaluate(() => document.querySelector('.editor-group-container.active .tab.active')?.textContent.includes('b.py')),
    );
    await w.waitShown('# moved with me');
    await w.key('Ctrl+S');
    await expectFile(dir, 'b.py', A_PY + '# moved with me');
    if (fs.existsSync(path.join(dir, 'a.py'))) throw new Error('a.py is back');
    return w;
  },
};

/** The time from an agent's write to the document showing it, `n` times
 *  each: on a clean document and on one with unsaved edits, the file
 *  written in place and written as a temporary file renamed over it. */
async function bench(vs, dir, n) {
  const start = lines(30, (i) => `value_${i} = ${i}`);
  dir = repo(dir, { 'c.py': start });
  const w = await vs.open(dir);
  await w.openFile('c.py');
  const file = path.join(dir, 'c.py');
  const figures = {};
  for (const state of ['clean', 'dirty']) {
    if (state === 'dirty') {
      await w.key('Ctrl+End');
      await w.page.keyboard.type('# unsaved');
      await w.waitShown('# unsaved');
    }
    for (const how of ['in-place', 'rename']) {
      const times = [];
      // One write first, not counted: the first of a kind warms up the
      // server's and VS Code's paths.
      for (let i = -1; i < n; i++) {
        const token = `token_${state}_${how}_${i}`;
        const text = start.replace('value_1 = 1', `value_1 = '${token}'`);
        await sleep(how === 'rename' ? 1200 : 250);
        const t0 = performance.now();
        if (how === 'rename') agentWrite(file, text);
        else fs.writeFileSync(file, text);
        await w.waitShown(token, 10000);
        if (i >= 0) times.push(performance.now() - t0);
      }
      const order = times.map(Math.round);
      times.sort((a, b) => a - b);
      const q = (p) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)];
      figures[`${state} ${how}`] = {
        n,
        p50: Math.round(q(0.5)),
        p95: Math.round(q(0.95)),
        max: Math.round(times[times.length - 1]),
        times: order,
      };
    }
  }
  await w.screenshot(path.join(screens, 'latency.png'));
  await w.close();
  return figures;
}

async function main() {
  fs.rmSync(path.join(out, 'e2e'), { recursive: true, force: true });
  fs.rmSync(screens, { recursive: true, force: true });
  fs.mkdirSync(path.join(out, 'e2e'), { recursive: true });
  const vs = await VSCode.start({
    codeServer: process.env.MEND_CODE_SERVER,
    chromium: process.env.MEND_CHROMIUM || '/usr/bin/chromium',
    vsix: path.resolve(args.vsix),
    mend,
    work: path.join(out, 'e2e'),
  });
  const only = args.only !== undefined ? args.only.split(',').filter(Boolean) : Object.keys(scenarios);
  const failed = [];
  try {
    for (const name of only) {
      const t0 = Date.now();
      let w;
      try {
        w = await scenarios[name](vs, path.join(out, 'e2e', 'ws', name));
        await w.screenshot(path.join(screens, `${name}.png`));
        console.log(`ok   ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (e) {
        failed.push(name);
        console.log(`FAIL ${name}: ${e.message}`);
        const pages = await vs.browser.pages();
        const page = pages[pages.length - 1];
        await page.screenshot({ path: path.join(screens, `${name}-failed.png`) }).catch(() => {});
      } finally {
        await w?.close();
      }
    }
    if (args.bench) {
      const figures = await bench(vs, path.join(out, 'e2e', 'ws', 'bench'), Number(args.bench));
      fs.writeFileSync(path.join(out, 'latency.json'), JSON.stringify(figures, null, 2) + '\n');
      for (const [kind, f] of Object.entries(figures)) {
        console.log(`latency ${kind}: p50 ${f.p50} ms, p95 ${f.p95} ms, max ${f.max} ms (n ${f.n})`);
      }
      // Held to 300 ms: a write merged into a document with unsaved edits,
      // mend's own path end to end. Reported only: a clean document is read
      // again by VS Code itself (so it stays unmodified; its file watcher's
      // delay), and a rename over an open file is decided a second after it
      // (mend-sync's GRACE, which tells a save through a temporary name from
      // a swap or a backup-style save).
      for (const [kind, f] of Object.entries(figures)) {
        if (kind === 'dirty in-place' && f.p95 > 300) {
          failed.push(`latency ${kind}`);
          console.log(`FAIL latency ${kind}: p95 ${f.p95} ms > 300 ms`);
        }
      }
    }
  } finally {
    await vs.stop();
  }
  if (failed.length) {
    console.log(`${failed.length} failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
