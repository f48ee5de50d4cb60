// A failure from the server is shown with its message and its kind
// (`error.data.kind`), whatever else threw.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import rpc from 'vscode-jsonrpc/node.js';
import { errorOf, MendError } from '../../src/server.ts';

test('a refusal carries the kind from error.data', () => {
  const e = errorOf(new rpc.ResponseError(-32001, 'b.py: changed since it was shown', { kind: 'unseen', path: 'b.py' }));
  assert.equal(e.kind, 'unseen');
  assert.equal(e.code, -32001);
  assert.equal(e.describe(), 'b.py: changed since it was shown (unseen)');
});

test('an error without data, or not from the server, has no kind', () => {
  assert.equal(errorOf(new rpc.ResponseError(-32601, 'unknown method')).describe(), 'unknown method');
  assert.equal(errorOf(new Error('spawn mend ENOENT')).describe(), 'spawn mend ENOENT');
  const dead = new MendError('the mend server is not running', undefined, 'dead');
  assert.equal(errorOf(dead), dead);
});
