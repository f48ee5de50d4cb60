// Hunk application: the hunks a notification carries, applied to a
// document's text, give exactly the notification's text; anything that does
// not fit falls back to one minimal edit, never a wrong text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyEdits, editsFor, hunkEdits, lineCount, lineStarts, minimalEdit } from '../../src/hunks.ts';

test('lines are counted as the server counts them', () => {
  assert.deepEqual(lineStarts(''), [0]);
  assert.equal(lineCount(''), 0);
  assert.deepEqual(lineStarts('a\nb\n'), [0, 2, 4]);
  assert.deepEqual(lineStarts('a\nb'), [0, 2, 3]);
  assert.equal(lineCount('a\r\nb\r\n'), 2);
});

test('hunks replace whole lines, each against the text before the change', () => {
  const text = 'one\ntwo\nthree\nfour\n';
  const hunks = [
    { start: 0, end: 1, text: 'ONE\n' },
    { start: 2, end: 2, text: 'inserted\n' },
    { start: 3, end: 4, text: '' },
  ];
  const edits = hunkEdits(text, hunks)!;
  assert.equal(applyEdits(text, edits), 'ONE\ntwo\ninserted\nthree\n');
});

test('a hunk at the end of a text without a final newline', () => {
  const text = 'a\nb';
  assert.equal(applyEdits(text, hunkEdits(text, [{ start: 1, end: 2, text: 'b\nc' }])!), 'a\nb\nc');
  assert.equal(applyEdits(text, hunkEdits(text, [{ start: 2, end: 2, text: 'x' }])!), 'a\nbx');
});

test('CRLF lines keep their endings', () => {
  const text = 'a\r\nb\r\nc\r\n';
  const out = applyEdits(text, hunkEdits(text, [{ start: 1, end: 2, text: 'B\r\n' }])!);
  assert.equal(out, 'a\r\nB\r\nc\r\n');
});

test('a BOM in the first hunk stays out of the document', () => {
  const edits = hunkEdits('a\nb\n', [{ start: 0, end: 1, text: '\ufeffA\n' }])!;
  assert.equal(applyEdits('a\nb\n', edits), 'A\nb\n');
});

test('hunks that do not fit the text are refused', () => {
  assert.equal(hunkEdits('a\n', [{ start: 0, end: 2, text: '' }]), undefined);
  assert.equal(hunkEdits('a\nb\nc\n', [{ start: 2, end: 3, text: '' }, { start: 0, end: 1, text: '' }]), undefined);
  assert.equal(hunkEdits('a\nb\n', [{ start: 0, end: 2, text: '' }, { start: 1, end: 2, text: '' }]), undefined);
  assert.equal(hunkEdits('a\n', [{ start: 1, end: 0, text: '' }]), undefined);
});

test('editsFor gives the target whatever the hunks say', () => {
  const text = 'a\nb\nc\n';
  // Hunks computed against another text: the result is still the target.
  const target = 'a\nB\nc\nd\n';
  const stale = [{ start: 0, end: 1, text: 'x\n' }];
  assert.equal(applyEdits(text, editsFor(text, stale, target)), target);
  // Fitting hunks are used as they are.
  const fit = [{ start: 1, end: 2, text: 'B\n' }, { start: 3, end: 3, text: 'd\n' }];
  const edits = editsFor(text, fit, target);
  assert.equal(edits.length, 2);
  assert.equal(applyEdits(text, edits), target);
  assert.deepEqual(editsFor(text, [], text), []);
});

test('the minimal edit touches only the differing middle', () => {
  assert.deepEqual(minimalEdit('abcdef', 'abXYef'), { start: 2, end: 4, text: 'XY' });
  assert.equal(minimalEdit('same', 'same'), undefined);
  // Never between CR and LF, never inside a surrogate pair.
  const crlf = minimalEdit('a\r\nb', 'a\nb')!;
  assert.equal(applyEdits('a\r\nb', [crlf]), 'a\nb');
  assert.ok(crlf.start <= 1);
  const emoji = minimalEdit('x\u{1F600}y', 'x\u{1F601}y')!;
  assert.equal(emoji.start, 1);
  assert.equal(applyEdits('x\u{1F600}y', [emoji]), 'x\u{1F601}y');
});

test('random texts and hunks: the edits reproduce the server\'s splice', () => {
  let seed = 7;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const words = ['a\n', 'b\n', 'c\r\n', '\n', 'dd\n', 'é\n'];
  for (let round = 0; round < 500; round++) {
    const lines = Array.from({ length: rand(8) }, () => words[rand(words.length)]);
    const text = lines.join('');
    // Hunks as the server makes them: sorted, not overlapping.
    const hunks = [];
    let at = 0;
    while (at <= lines.length && rand(3) > 0) {
      const start = at + rand(lines.length - at + 1);
      const end = start + rand(lines.length - start + 1);
      hunks.push({ start, end, text: Array.from({ length: rand(3) }, () => words[rand(words.length)]).join('') });
      at = end + 1;
      if (at > lines.length) break;
    }
    const expected = [...lines];
    for (const h of [...hunks].reverse()) {
      expected.splice(h.start, h.end - h.start, h.text);
    }
    const target = expected.join('');
    assert.equal(applyEdits(text, hunkEdits(text, hunks)!), target);
    assert.equal(applyEdits(text, editsFor(text, hunks, target)), target);
  }
});
