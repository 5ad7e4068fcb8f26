// `baton dev`'s embedded PostgreSQL (PGlite) on a worker thread of its own (issue #15).
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * The worker's code, a CommonJS script: it opens PGlite in `workerData.dataDir` and answers the main
 * thread's messages one by one. It is a string evaluated by the worker rather than a module of its
 * own so that one file works the same under `tsx` (`pnpm baton dev`), the compiled build and vitest,
 * none of which would load a `.ts` worker file alike.
 *
 * Messages in: `{ id, op, tx?, sql?, params?, rowMode?, parsers? }` with `op` one of `query`,
 * `exec`, `begin`, `commit`, `rollback`, `close`; `parsers` names the type OIDs whose text is kept
 * as it is (drizzle keeps dates and intervals as strings). Messages out: `{ id, ok: true, value }`
 * or `{ id, ok: false, error }`, the error's own fields (`code`, `severity`, `detail`, …) copied so
 * that callers read the SQLSTATE as they would on the main thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { PGlite } = require(workerData.pglite);
const keep = (value) => value;
const parserSets = new Map();
function parsersFor(oids) {
  if (!oids) return undefined;
  const key = oids.join(",");
  let set = parserSets.get(key);
  if (!set) {
    set = {};
    for (const oid of oids) set[oid] = keep;
    parserSets.set(key, set);
  }
  return set;
}
function errorOf(e) {
  const out = { message: String((e && e.message) || e), name: (e && e.name) || "Error" };
  if (e && typeof e === "object") {
    for (const k of Object.keys(e)) {
      const v = e[k];
      if (v === undefined || typeof v === "function" || typeof v === "object") continue;
      out[k] = v;
    }
  }
  return out;
}
const ROLLBACK = Symbol("rollback");
const txs = new Map();
function begin(id) {
  return new Promise((started, failed) => {
    let finish;
    const finished = new Promise((resolve) => { finish = resolve; });
    let done;
    done = db.transaction(async (tx) => {
      txs.set(id, { tx, finish, done });
      started(id);
      if ((await finished) === "rollback") throw ROLLBACK;
    });
    done.catch((e) => { if (e !== ROLLBACK) failed(e); });
  });
}
let db;
const ready = PGlite.create(workerData.dataDir).then((opened) => { db = opened; });
// A PGlite that cannot open answers every message with its error (its code kept) instead of ending
// the thread before the first one arrives.
ready.catch(() => {});
parentPort.on("message", async (m) => {
  try {
    await ready;
    let value = null;
    if (m.op === "begin") value = await begin(m.id);
    else if (m.op === "commit" || m.op === "rollback") {
      const t = txs.get(m.tx);
      if (!t) throw new Error("transaction " + m.tx + " is over");
      txs.delete(m.tx);
      t.finish(m.op);
      await t.done.catch((e) => { if (e !== ROLLBACK) throw e; });
    } else if (m.op === "close") await db.close();
    else {
      const target = m.tx === undefined ? db : txs.get(m.tx)?.tx;
      if (!target) throw new Error("transaction " + m.tx + " is over");
      if (m.op === "exec") value = await target.exec(m.sql);
      else value = await target.query(m.sql, m.params, { rowMode: m.rowMode, parsers: parsersFor(m.parsers) });
    }
    parentPort.postMessage({ id: m.id, ok: true, value });
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: errorOf(e) });
  }
});
`;

/** PGlite's query options as drizzle passes them: a row mode, and parsers keyed by type OID. */
interface QueryOptions {
  rowMode?: "array" | "object";
  parsers?: Record<number, (value: string) => unknown>;
}

/** The part of PGlite's interface a transaction's callback gets (and drizzle uses). */
export interface ThreadTransaction {
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<unknown>;
  exec(sql: string): Promise<unknown>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * PGlite on a worker thread, behind the part of PGlite's interface that drizzle's `pglite` driver
 * and migrator use (`query`, `exec`, `transaction`, `close`). PGlite runs PostgreSQL compiled to
 * WebAssembly synchronously on whichever thread calls it; on `baton dev`'s one event loop it took
 * about 60 % of the loop's time under `pnpm bench`, time during which no HTTP request, tool call or
 * reply could run. On a thread of its own the database and the services use two cores.
 *
 * Parameters cross to the thread by structured clone: strings, numbers, bigints, booleans, null,
 * dates, buffers, plain objects and arrays arrive as they are; a class instance arrives as a plain
 * object (without its `toJSON`), so pass JSON as a string (`::jsonb` of `JSON.stringify`), as every
 * service does. A value clone refuses (a function) rejects the call with a `DataCloneError`.
 *
 * Semantics are PGlite's: one session, statements and transactions one at a time in the order they
 * arrive (a statement outside a transaction waits for it to end). Errors keep their fields (the
 * SQLSTATE `code`, `severity`, `detail`), so `BT409` and friends read the same as on the main thread.
 * When the worker stops unexpectedly every waiting and later call rejects with that reason.
 */
export class PGliteThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 1;
  private failure: Error | null = null;

  private closing = false;

  private constructor(
    dataDir: string,
    private readonly onStopped?: (reason: Error) => void,
  ) {
    const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite");
    // The parent's flags are not the worker's: `--input-type=module` (or a loader) would evaluate the
    // script as an ES module, where `require` does not exist.
    this.worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { dataDir, pglite } });
    // The thread keeps the process alive only while a call waits for it, as a socket would.
    this.worker.unref();
    this.worker.on(
      "message",
      (m: { id: number; ok: boolean; value?: unknown; error?: Record<string, unknown> }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (this.pending.size === 0) this.worker.unref();
        if (m.ok) p.resolve(m.value);
        else p.reject(Object.assign(new Error(String(m.error?.message)), m.error));
      },
    );
    const stopped = (reason: Error) => {
      const unexpected = this.failure === null && !this.closing;
      this.failure ??= reason;
      for (const p of this.pending.values()) p.reject(this.failure);
      this.pending.clear();
      if (unexpected) this.onStopped?.(reason);
    };
    this.worker.on("error", (error) => stopped(new Error(`the embedded database stopped: ${error.message}`)));
    this.worker.on("exit", (code) => stopped(new Error(`the embedded database stopped (exit ${code})`)));
  }

  /**
   * Opens (or creates) the database in `dataDir` (`memory://` keeps it in memory); rejects when PGlite
   * cannot. `onStopped` is told, once, when the thread stops other than by {@link close} (PGlite's
   * WebAssembly aborted, say): every call since rejects, so whoever runs it should say so loudly.
   */
  static async create(dataDir: string, onStopped?: (reason: Error) => void): Promise<PGliteThread> {
    const thread = new PGliteThread(dataDir, onStopped);
    try {
      await thread.call({ op: "query", sql: "select 1" });
    } catch (error) {
      thread.closing = true;
      await thread.worker.terminate();
      throw error;
    }
    return thread;
  }

  private call(message: Record<string, unknown>): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      // Sent first: a parameter structured clone refuses (a function) throws here, and nothing is
      // left waiting that would keep the thread referenced for ever. No answer can arrive before
      // this executor returns.
      this.worker.postMessage({ ...message, id });
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
    });
  }

  private queryOn(tx: number | undefined, sql: string, params?: unknown[], options?: QueryOptions) {
    return this.call({
      op: "query",
      tx,
      sql,
      params,
      rowMode: options?.rowMode,
      parsers: options?.parsers ? Object.keys(options.parsers).map(Number) : undefined,
    });
  }

  /** One statement; resolves to PGlite's results (`rows`, `fields`, `affectedRows`). */
  query(sql: string, params?: unknown[], options?: QueryOptions): Promise<unknown> {
    return this.queryOn(undefined, sql, params, options);
  }

  /** Several statements without parameters; resolves to one result per statement. */
  exec(sql: string): Promise<unknown> {
    return this.call({ op: "exec", sql });
  }

  /**
   * Runs `callback` in a transaction: committed when it resolves, rolled back when it throws (the
   * error is rethrown) or when it called `rollback()`.
   */
  async transaction<T>(callback: (tx: ThreadTransaction) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: "begin" })) as number;
    let closed = false;
    const open = () => {
      if (closed) throw new Error("Transaction is closed");
    };
    const tx: ThreadTransaction = {
      query: async (sql, params, options) => {
        open();
        return this.queryOn(id, sql, params, options);
      },
      exec: async (sql) => {
        open();
        return this.call({ op: "exec", tx: id, sql });
      },
      rollback: async () => {
        open();
        closed = true;
        await this.call({ op: "rollback", tx: id });
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (error) {
      if (!closed) {
        closed = true;
        await this.call({ op: "rollback", tx: id }).catch(() => undefined);
      }
      throw error;
    }
    if (!closed) {
      closed = true;
      await this.call({ op: "commit", tx: id });
    }
    return result;
  }

  /** Closes the database and stops the thread; later calls reject saying it is closed. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      if (!this.failure) await this.call({ op: "close" });
    } finally {
      this.failure ??= new Error("the embedded database is closed");
      await this.worker.terminate();
    }
  }
}
