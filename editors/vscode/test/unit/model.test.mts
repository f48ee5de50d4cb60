// The review model: files and numbered hunks from today's turn/diff and
// pending/diff results; hunks given as data are taken as they are.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { changedLines, lensLine, original, parseHunks, pendingFiles, turnFiles } from '../../src/model.ts';

const TWO = '--- a/b.py\n+++ b/b.py\n@@ -1,4 +1,4 @@ hunk 1\n a\n-b\n+B\n c\n d\n@@ -10,3 +10,3 @@ hunk 2\n j\n-k\n+K\n l\n';

test('hunks are read with their numbers and lines', () => {
  const hs = parseHunks(TWO);
  assert.equal(hs.length, 2);
  assert.deepEqual([hs[0].number, hs[0].newStart, hs[0].newCount], [1, 1, 4]);
  assert.deepEqual(hs[1].lines, [' j', '-k', '+K', ' l']);
  assert.equal(lensLine(hs[0]), 1);
  assert.equal(lensLine(hs[1]), 10);
  assert.equal(parseHunks('@@ -3 +3,0 @@\n-x\n')[0].newCount, 0);
});

test('turn files keep letter, rename, version and note', () => {
  const files = turnFiles({
    files: [
      { path: 'b.py', status: 'M', version: 'v1', hunks: 2, diff: TWO },
      { path: 'n.py', status: 'R', from: 'o.py', version: 'v2', hunks: 0, diff: '' },
      { path: 't', status: 'T', change: 'file -> link', version: 'v3', hunks: 0, diff: '' },
    ],
  });
  assert.equal(files[0].hunks.length, 2);
  assert.equal(files[0].version, 'v1');
  assert.equal(files[1].from, 'o.py');
  assert.equal(files[2].note, 'file -> link');
});

test('hunks given as data are used, not parsed', () => {
  const hunk = { number: 3, header: '@@ -1 +1 @@', oldStart: 1, oldCount: 1, newStart: 1, newCount: 1, lines: ['-a', '+b'] };
  const [f] = turnFiles({ files: [{ path: 'x', letter: 'M', hunks: [hunk], diff: TWO }] });
  assert.deepEqual(f.hunks, [hunk]);
  assert.equal(f.letter, 'M');
});

test('a pending diff is split at each file\'s version line', () => {
  const diff =
    '# b.py: version aaa\n--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@ hunk 1\n a\n-b\n+B\n' +
    '# c.py: version ccc\n--- a/c.py\n+++ b/c.py\n@@ -2 +2 @@ hunk 1\n-y\n+Y\n';
  const files = pendingFiles(
    { files: [{ path: 'b.py', status: 'M' }, { path: 'c.py', status: '~M' }, { path: 'd.py', status: '?', reason: 'binary' }] },
    { diff, versions: { 'b.py': 'aaa', 'c.py': 'ccc' } },
  );
  assert.deepEqual(files.map((f) => [f.path, f.letter, f.version, f.hunks.length]), [
    ['b.py', 'M', 'aaa', 1],
    ['c.py', '~M', 'ccc', 1],
    ['d.py', '?', undefined, 0],
  ]);
  assert.equal(files[2].note, 'binary');
  assert.equal(lensLine(files[1].hunks[0], 'old'), 1);
});

test('the text before a change is the hunks taken back out', () => {
  const now = 'a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nK\nl\n';
  assert.equal(original(now, parseHunks(TWO)), 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n');
  // A file that moved on since the diff: no guess.
  assert.equal(original('z\n', parseHunks(TWO)), undefined);
});

test('the lines a hunk changes, on either side', () => {
  const [h] = parseHunks('@@ -2,4 +2,5 @@\n a\n-b\n+B\n+B2\n c\n-d\n+D\n');
  assert.deepEqual(changedLines(h, 'new'), [2, 3, 5]);
  assert.deepEqual(changedLines(h, 'old'), [2, 4]);
});

test('hunks as data without their numbers take them from the header', () => {
  const [f] = turnFiles({
    files: [{ path: 'x', status: 'M', diff: { text: TWO, hunks: [{ number: 2, header: '@@ -10,3 +10,3 @@ hunk 2', lines: [' j', '-k', '+K', ' l'] }] } }],
  });
  assert.equal(f.hunks.length, 1);
  assert.deepEqual([f.hunks[0].number, f.hunks[0].newStart, f.hunks[0].oldCount], [2, 10, 3]);
  assert.equal(lensLine(f.hunks[0]), 10);
  const [g] = turnFiles({ files: [{ path: 'y', status: 'M', diff: { text: TWO } }] });
  assert.equal(g.hunks.length, 2);
});

test('the review model\'s diff_hunks are taken as data, for turns and pending files', () => {
  const h = { number: 2, header: '@@ -4,3 +4,3 @@', lines: [' c', '-d', '+D', ' e'] };
  const [t] = turnFiles({ files: [{ path: 'a', status: 'M', hunks: 1, version: 'v1', diff: 'not parsed', diff_hunks: [h] }] });
  assert.equal(t.hunks.length, 1);
  assert.equal(t.hunks[0].number, 2);
  assert.equal(t.hunks[0].newStart, 4);
  const [p] = pendingFiles(
    { files: [{ path: 'b', status: 'M', hunks: 1 }] },
    { diff: '', versions: { b: 'v9' }, files: [{ path: 'b', diff: 'not parsed', diff_hunks: [h] }] },
  );
  assert.equal(p.version, 'v9');
  assert.deepEqual(p.hunks[0].lines, [' c', '-d', '+D', ' e']);
});
