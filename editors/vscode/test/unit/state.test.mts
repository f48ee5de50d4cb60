// Version bookkeeping: the protocol's version grows with every change and
// every save; a notification is applied only to the version it was
// computed against; the base follows what the server agreed on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ChangeParams, DocState, hasMarkers } from '../../src/state.ts';

function change(over: Partial<ChangeParams>): ChangeParams {
  return {
    buffer: 1, path: 'a.py', abspath: '/r/a.py', version: 1, seq: 1,
    text: 'x\n', hunks: [], disk_sha256: 'h1', ...over,
  };
}

test('saves count in the version', () => {
  const st = new DocState('a.py');
  assert.equal(st.version(3), 3);
  st.saved('x\n', 'h');
  assert.equal(st.version(3), 4);
  // A notification computed before the save is not applied after it.
  assert.equal(st.fits(3, 3), false);
  assert.equal(st.fits(4, 3), true);
  assert.equal(st.fits(null, 3), true);
});

test('a report is sent once per version unless forced, and carries applied', () => {
  const st = new DocState('a.py');
  const first = st.report('a\n', true, 1, false)!;
  assert.deepEqual(first, { path: 'a.py', text: 'a\n', dirty: true, version: 1, applied: undefined });
  assert.equal(st.report('a\n', true, 1, false), undefined);
  st.took('merged', change({ seq: 5, version: 1 }));
  assert.equal(st.report('a\n', true, 1, true)!.applied, 5);
});

test('a clean report makes the text the base; a merge takes the disk it names', () => {
  const st = new DocState('a.py');
  st.report('clean\n', false, 1, false);
  assert.equal(st.base, 'clean\n');
  st.took('merged', change({ text: 'mine\ntheirs\n', disk: 'theirs\n', disk_sha256: 'h2' }));
  assert.equal(st.base, 'theirs\n');
  assert.equal(st.diskSha, 'h2');
  assert.equal(st.merged, true);
  st.took('reload', change({ text: 'r\n', disk_sha256: 'h3' }));
  assert.equal(st.base, 'r\n');
  assert.equal(st.merged, false);
});

test('conflict mode lasts until the markers are gone or the file is saved', () => {
  const st = new DocState('a.py');
  const marked = '<<<<<<< buffer\na\n=======\nb\n>>>>>>> disk\n';
  assert.ok(hasMarkers(marked));
  st.took('conflict', change({ text: marked }));
  assert.equal(st.conflict, true);
  st.report(marked, true, 2, false);
  assert.equal(st.conflict, true);
  st.report('b\n', true, 3, false);
  assert.equal(st.conflict, false);
  st.took('conflict', change({ text: marked }));
  st.saved(marked, 'h');
  assert.equal(st.conflict, false);
});

test('resolved regions add up until saved', () => {
  const st = new DocState('a.py');
  st.took('merged', change({ resolved: [{ resolver: 'adjacent', start: 1, end: 3 }] }));
  st.took('merged', change({ resolved: [{ resolver: 'whitespace', start: 5, end: 6 }] }));
  assert.equal(st.resolved.length, 2);
  st.saved('x\n', 'h');
  assert.deepEqual(st.resolved, []);
});

test('a BOM the file has is put back in reports', () => {
  const st = new DocState('a.py');
  st.took('reload', change({ text: '\ufeffa\n' }));
  assert.equal(st.report('a\n', false, 2, true)!.text, '\ufeffa\n');
});
