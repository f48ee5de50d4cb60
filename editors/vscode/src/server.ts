// One `mend editor` child process for one root, spoken to over the editor
// protocol (JSON-RPC with LSP framing, carried by vscode-jsonrpc). It is
// started again when it dies, and says so, so the documents can be opened
// to it again.

import { ChildProcess, spawn } from 'child_process';
import * as rpc from 'vscode-jsonrpc/node.js';

/** The server's state, as the status bar shows it. */
export type State = 'starting' | 'watching' | 'lost' | 'dead';

/** A failure the server answered with: its message and `error.data.kind`. */
export class MendError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
    readonly kind: string | undefined,
  ) {
    super(message);
  }

  /** The message with its kind, as shown to the person. */
  describe(): string {
    return this.kind ? `${this.message} (${this.kind})` : this.message;
  }
}

type Handler = (params: any) => void;

export interface ServerOptions {
  /** The `mend` binary. */
  command: string;
  root: string;
  merge: string;
  /** Log every message. */
  trace: boolean;
  log: (line: string) => void;
}

/** One root's server, restarted when it dies. */
export class Server {
  state: State = 'starting';
  /** The root the server answered `initialize` with (links resolved). */
  canonicalRoot: string;
  private conn: rpc.MessageConnection | undefined;
  private child: ChildProcess | undefined;
  private handlers = new Map<string, Handler>();
  private stopped = false;
  private restarts: number[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Called after every start, once `initialize` is answered. */
  onStarted: () => void = () => {};
  /** Called when the binary cannot be run at all. */
  onSpawnError: (message: string) => void = () => {};
  /** Called on every change of `state`. */
  onState: (s: State) => void = () => {};

  constructor(readonly opts: ServerOptions) {
    this.canonicalRoot = opts.root;
  }

  /** Handles the server's notification `method`. */
  on(method: string, h: Handler): void {
    this.handlers.set(method, h);
  }

  start(): void {
    this.stopped = false;
    this.setState('starting');
    const child = spawn(this.opts.command, ['editor', '--root', this.opts.root], {
      cwd: this.opts.root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    const conn = rpc.createMessageConnection(
      new rpc.StreamMessageReader(child.stdout!),
      new rpc.StreamMessageWriter(child.stdin!),
    );
    this.conn = conn;
    for (const [method, h] of this.handlers) {
      conn.onNotification(method, (p: unknown) => {
        if (this.conn === conn) {
          h(p);
        }
      });
    }
    child.stderr!.on('data', (d: Buffer) => this.opts.log(d.toString().trimEnd()));
    child.on('error', (e) => {
      this.opts.log(`cannot run ${this.opts.command}: ${e.message}`);
      this.onSpawnError(`cannot run ${this.opts.command} (the mend.path setting): ${e.message}`);
      this.exited(child, null, null);
    });
    child.on('exit', (code, signal) => this.exited(child, code, signal));
    conn.onError(([e]) => this.opts.log(`protocol error: ${e.message}`));
    if (this.opts.trace) {
      void conn.trace(rpc.Trace.Verbose, { log: (m: string, d?: string) => this.opts.log(d ? `${m} ${d}` : m) });
    }
    conn.listen();
    conn
      .sendRequest('initialize', { root: this.opts.root, merge: this.opts.merge })
      .then((r: any) => {
        if (this.conn !== conn) {
          return;
        }
        this.canonicalRoot = typeof r?.root === 'string' ? r.root : this.opts.root;
        this.setState('watching');
        this.onStarted();
      })
      .catch((e) => this.opts.log(`initialize failed: ${errorOf(e).describe()}`));
  }

  private exited(child: ChildProcess, code: number | null, signal: string | null): void {
    if (this.child !== child) {
      return;
    }
    this.conn?.dispose();
    this.conn = undefined;
    this.child = undefined;
    this.setState('dead');
    if (this.stopped) {
      return;
    }
    this.opts.log(`mend editor ended (${signal ?? `exit ${code}`}); starting it again`);
    // At most five starts a minute: a binary that cannot start stays dead.
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    if (this.restarts.length >= 5) {
      this.opts.log('mend editor keeps ending; run "mend: Restart Server" once it is fixed');
      return;
    }
    this.restarts.push(now);
    this.timer = setTimeout(() => this.start(), 300 * this.restarts.length);
  }

  private setState(s: State): void {
    this.state = s;
    this.onState(s);
  }

  /** Marks the root lost or restored (`root/lost`, `root/restored`). */
  rootLost(lost: boolean): void {
    if (this.state !== 'dead') {
      this.setState(lost ? 'lost' : 'watching');
    }
  }

  get running(): boolean {
    return this.conn !== undefined && (this.state === 'watching' || this.state === 'lost');
  }

  /** A request; a failure is thrown as a MendError. */
  async request<T = any>(method: string, params: object): Promise<T> {
    const conn = this.conn;
    if (!conn) {
      throw new MendError('the mend server is not running', undefined, 'dead');
    }
    try {
      return (await conn.sendRequest(method, params)) as T;
    } catch (e) {
      throw errorOf(e);
    }
  }

  /** Stops the server for good (or until `start`). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    const conn = this.conn;
    const child = this.child;
    if (conn && child) {
      conn.sendRequest('shutdown').then(
        () => conn.sendNotification('exit'),
        () => child.kill(),
      );
      setTimeout(() => child.kill(), 2000);
    }
  }

  /** The child's process id (the tests kill it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }
}

/** A thrown value as a MendError, with the kind the server gave. */
export function errorOf(e: unknown): MendError {
  if (e instanceof MendError) {
    return e;
  }
  if (e instanceof rpc.ResponseError) {
    const data = e.data as { kind?: unknown } | undefined;
    const kind = typeof data?.kind === 'string' ? data.kind : undefined;
    return new MendError(e.message, e.code, kind);
  }
  return new MendError(e instanceof Error ? e.message : String(e), undefined, undefined);
}
