import type { ChildProcess } from "node:child_process";
import { join } from "node:path";
import { eventsStream } from "@baton/bus";
import { NatsClock } from "@baton/clock/nats";
import type { McpSession, Result } from "@baton/conformance/mcp";
import { partitionOf } from "@baton/protocol";
import { connect, type NatsConnection } from "nats";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, TestClock } from "../support/clock.ts";
import { type DistributedDeployment, POSTGRES_URL, REPO, startDistributed } from "../support/deploy.ts";
import { PrivateNats } from "../support/nats-server.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";

/**
 * Issue #8, part 4: a blip in a dependency never kills a service, and the service recovers by
 * itself. The services run as separate processes (two engine replicas) over a private
 * `nats-server` and the machine's PostgreSQL, reached through TCP proxies of this test's own (all
 * services to PostgreSQL; the gateway to NATS), so the test can cut the network, restart NATS,
 * delete JetStream streams and buckets and terminate the deployment's own database connections
 * without touching anything another suite uses. After every blip the same processes still run and serve `start_run`, `claim` and `submit`
 * on both engines' partitions; during one, a call answers (`retry` where it cannot finish) within
 * the call deadline. The blips run in order on one deployment, each from a serving state.
 */

const PARTITIONS = 16;
/** The gateway's call deadline here, ms: above the ~12 s a dead engine's partitions take to change owner. */
const CALL_TIMEOUT_MS = 20_000;
const SERVICES = ["registry", "evidence", "engine", "scheduler", "gateway"] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a blip in a dependency never kills a service, and it recovers by itself (issue #8, part 4)", () => {
  let nats: PrivateNats;
  /** The gateway's own way to NATS, to cut it alone. */
  let gatewayNats: TcpProxy;
  let pgProxy: TcpProxy;
  let baton: DistributedDeployment;
  /** The test's own connections, straight to the private NATS and to PostgreSQL. */
  let nc: NatsConnection;
  let db: pg.Client;
  let agent: McpSession;
  /** Every service process as started, with its service name. */
  let started: [string, ChildProcess][] = [];
  let databaseName: string;
  let serial = 0;

  beforeAll(async () => {
    nats = await PrivateNats.start();
    gatewayNats = await TcpProxy.start({ host: "127.0.0.1", port: nats.port });
    const pgUrl = new URL(POSTGRES_URL);
    pgProxy = await TcpProxy.start({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    baton = await startDistributed({
      engines: 2,
      clock: "manual",
      natsUrl: nats.url,
      postgresVia: { host: "127.0.0.1", port: pgProxy.port },
      env: { BATON_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS) },
      serviceEnv: { gateway: { NATS_URL: `nats://127.0.0.1:${gatewayNats.port}` } },
    });
    await baton.publish(join(REPO, "bench/processes/bench-step"));
    started = SERVICES.flatMap((s) => baton.running(s).map((c): [string, ChildProcess] => [s, c]));
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 250 });
    db = new pg.Client({ connectionString: baton.databaseUrl });
    db.on("error", () => undefined);
    await db.connect();
    databaseName = new URL(baton.databaseUrl).pathname.slice(1);
    agent = await baton.session({ kind: "agent", id: "a_blips" });
    await waitForOwners(["engine-0", "engine-1"]);
  }, 240_000);

  afterAll(async () => {
    await agent?.close().catch(() => undefined);
    await db?.end().catch(() => undefined);
    await nc?.close().catch(() => undefined);
    await baton?.stop();
    await gatewayNats?.close();
    await pgProxy?.close();
    await nats?.stop();
  });

  /** Every service process started with the deployment still runs (`except`: those a test ended). */
  function expectSameProcesses(except: ChildProcess[] = []): void {
    const gone = started
      .filter(([, c]) => !except.includes(c))
      .filter(([, c]) => c.exitCode !== null || c.signalCode !== null)
      .map(([s, c]) => `${s} (pid ${c.pid}, exit ${c.exitCode ?? c.signalCode})`);
    expect(gone, `services that died:\n${baton.logs()}`).toEqual([]);
    // The private NATS too: a request that makes nats-server exit would be a blip of Baton's own making.
    const server = nats.report();
    expect(server.unexpectedExits, `nats-server ended by itself; its log:\n${server.log}`).toEqual([]);
  }

  /** Partition → the replica holding its lease, read straight from the bucket (never making it). */
  async function owners(): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    try {
      // Direct gets only: STREAM.MSG.GET (a bound KV's default) ends nats-server 2.9 when it reaches
      // the bucket while an engine makes it again.
      const kv = await nc
        .jetstream()
        .views.kv(`${baton.namespace}_partitions`, { bindOnly: true, allow_direct: true });
      for (let p = 0; p < PARTITIONS; p++) {
        const entry = await kv.get(`p.${p}`);
        if (entry?.operation === "PUT") out.set(p, entry.string());
      }
    } catch {
      // The bucket is gone (a test deleted it): nobody holds a lease.
    }
    return out;
  }

  /** Waits until every partition is leased and `replicas` each hold at least one. */
  async function waitForOwners(replicas: string[], timeoutMs = 60_000): Promise<Map<number, string>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await owners();
      const holders = new Set(now.values());
      if (now.size === PARTITIONS && replicas.every((r) => holders.has(r))) return now;
      if (Date.now() > deadline) {
        throw new Error(
          `partitions not all leased to ${replicas.join(", ")}: ${JSON.stringify(Object.fromEntries(now))}\n${baton.logs()}\nnats-server: ${JSON.stringify(nats.report())}`,
        );
      }
      await sleep(250);
    }
  }

  /** Starts a bench-step run (resending `retry`); returns its id. */
  async function startRun(label: string): Promise<string> {
    const start = await agent.ok("start_run", {
      process: "bench-step",
      inputs: { n: serial },
      requestId: `${label}-start-${serial++}`,
    });
    return start.run.id as string;
  }

  /** Starts runs until one lands on a partition `replica` holds; returns its id. */
  async function runOn(replica: string, label: string): Promise<string> {
    for (let i = 0; i < 60; i++) {
      const runId = await startRun(label);
      if ((await owners()).get(partitionOf(runId, PARTITIONS)) === replica) return runId;
    }
    throw new Error(`no run landed on a partition of ${replica}`);
  }

  /**
   * The deployment serves: for each engine replica, a run on one of its partitions goes through
   * `start_run`, `claim` and `submit` (resending `retry` while it recovers, §4.3) and ends `done`.
   */
  async function expectServes(label: string, replicas = ["engine-0", "engine-1"]): Promise<void> {
    for (const replica of replicas) {
      const runId = await runOn(replica, label);
      const claim = await agent.ok("claim", { runId, stepId: "work", requestId: `${label}-claim-${runId}` });
      await agent.ok("submit", {
        token: claim.token,
        output: { n: 1 },
        summary: "done",
        requestId: `${label}-submit-${runId}`,
      });
      const run = await db.query("select state, outcome, rev from runs where id = $1", [runId]);
      expect(run.rows).toEqual([{ state: "ended", outcome: "done", rev: 3 }]);
    }
  }

  /** One call, no resend: the answer a client gets during a blip; never later than the deadline allows. */
  async function answerDuring(call: Promise<Result>): Promise<Result> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within the call deadline (${CALL_TIMEOUT_MS} ms) and 20 s more`)),
        CALL_TIMEOUT_MS + 20_000,
      );
    });
    try {
      return await Promise.race([call, hung]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Holds ACCESS EXCLUSIVE locks on `tables` until `release`. `blocked(n)` waits until `n` of the
   * deployment's connections are blocked on them: connections checked out of their pools with a
   * statement in flight, most inside a transaction (the outbox relay's, an upload's).
   */
  async function lockTables(tables: string[]) {
    const locker = new pg.Client({ connectionString: baton.databaseUrl });
    locker.on("error", () => undefined);
    await locker.connect();
    await locker.query("begin");
    await locker.query(`lock table ${tables.join(", ")} in access exclusive mode`);
    return {
      pid: (locker as unknown as { processID: number }).processID,
      async blocked(waiters: number): Promise<void> {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const now = await db.query(
            "select left(query, 80) as query from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'",
            [databaseName],
          );
          if (now.rows.length >= waiters) return;
          if (Date.now() > deadline) {
            throw new Error(`only ${now.rows.length} of ${waiters} blocked: ${JSON.stringify(now.rows)}`);
          }
          await sleep(100);
        }
      },
      release: async () => {
        await locker.query("rollback").catch(() => undefined);
        await locker.end().catch(() => undefined);
      },
    };
  }

  it("every connection of the deployment terminated (pg_terminate_backend), idle or checked out mid-transaction: no service exits", async () => {
    // The engines' outbox relays and the scheduler block on the locks, and so do an upload's
    // transaction in the evidence service and a catalog read in the registry: five connections
    // checked out, with statements in flight.
    const lock = await lockTables(["outbox", "timers", "files", "process_versions"]);
    const upload = agent.callOnce("upload", {
      fileName: "blip.txt",
      contentType: "text/plain",
      contentBase64: Buffer.from("a blip").toString("base64"),
      requestId: "blip-upload",
    });
    const catalog = agent.callOnce("list_processes", {});
    await lock.blocked(5);
    const terminated = await db.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and pid <> $2",
      [databaseName, lock.pid],
    );
    expect(terminated.rowCount).toBeGreaterThanOrEqual(5);
    await lock.release();
    for (const during of [await answerDuring(upload), await answerDuring(catalog)]) {
      if (!during.ok) expect(during.error.code).toBe("retry");
    }
    await sleep(1_000); // time for an unhandled 'error' to end a process
    expectSameProcesses();
    const again = await agent.call("upload", {
      fileName: "blip.txt",
      contentType: "text/plain",
      contentBase64: Buffer.from("a blip").toString("base64"),
      requestId: "blip-upload",
    });
    expect(again.ok, JSON.stringify(again)).toBe(true);
    await expectServes("terminated");
    expectSameProcesses();
  });

  it("PostgreSQL unreachable for a while (the network cut mid-transaction): calls answer retry, then every service serves", async () => {
    const lock = await lockTables(["outbox", "timers"]);
    await lock.blocked(3);
    pgProxy.cut();
    await lock.release();
    try {
      const start = await answerDuring(
        agent.callOnce("start_run", { process: "bench-step", inputs: { n: 0 }, requestId: "pg-down-start" }),
      );
      expect(start.ok ? "ok" : start.error.code).toBe("retry");
      const work = await answerDuring(agent.callOnce("get_work", {}));
      expect(work.ok ? "ok" : work.error.code).toBe("retry");
      // Long enough for the relays', the scheduler's and the registry's next rounds to fail too.
      await sleep(2_500);
      expectSameProcesses();
    } finally {
      pgProxy.restore();
    }
    await expectServes("pg-back");
    expectSameProcesses();
  });

  /**
   * Puts a `start_run` in flight and returns once its engine is applying it: its commit waits on a
   * lock this test holds, until `release`. `answer` is the call's one answer (no resend).
   */
  async function writeInFlight(requestId: string) {
    const lock = await lockTables(["outbox"]);
    await lock.blocked(2); // the two relays
    const answer = answerDuring(
      agent.callOnce("start_run", { process: "bench-step", inputs: { n: 0 }, requestId }),
    );
    const deadline = Date.now() + 30_000;
    for (;;) {
      const committing = await db.query(
        "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and query like '%baton_commit%'",
        [databaseName],
      );
      if (committing.rows[0].n > 0) break;
      if (Date.now() > deadline) throw new Error(`the start_run never reached its commit\n${baton.logs()}`);
      await sleep(50);
    }
    return { answer, release: lock.release };
  }

  it("NATS cut from the gateway while its write is applied: the reply lost with the connection is asked for again, and the write applies once", async () => {
    const write = await writeInFlight("nats-cut");
    gatewayNats.cut();
    try {
      await write.release(); // the engine commits and replies to a gateway that is not there
      await sleep(2_000);
      expectSameProcesses();
    } finally {
      gatewayNats.restore();
    }
    const during = await write.answer;
    expect(during.ok ? "ok" : during.error.code, JSON.stringify(during)).toBe("ok");
    expect(await journalCounts(["nats-cut"])).toEqual({ "nats-cut": 1 });
    await expectServes("nats-back");
    expectSameProcesses();
  });

  it("NATS restarted while a write is applied (the gateway back last): the call answers within its deadline, the write applies once, every service serves", async () => {
    const write = await writeInFlight("nats-restart");
    gatewayNats.cut();
    try {
      await nats.down();
      await write.release(); // committed; the reply waits in the engine for NATS
      await sleep(1_000);
      await nats.up();
      await sleep(2_000); // the other services reconnect first, and the engine sends its reply
      expectSameProcesses();
    } finally {
      gatewayNats.restore();
      await nats.up();
    }
    const during = await write.answer;
    expect(during.ok ? "ok" : during.error.code, JSON.stringify(during)).toBe("ok");
    expect(await journalCounts(["nats-restart"])).toEqual({ "nats-restart": 1 });
    await waitForOwners(["engine-0", "engine-1"]);
    await expectServes("nats-restarted");
    expectSameProcesses();
  });

  it("the events stream deleted: the relay makes it again and every event of later transitions reaches it", async () => {
    const jsm = await nc.jetstreamManager();
    const stream = eventsStream(baton.namespace);
    expect(await jsm.streams.delete(stream)).toBe(true);
    await expectServes("events");
    const deadline = Date.now() + 30_000;
    for (;;) {
      const unpublished = await db.query("select count(*)::int as n from outbox where published_at is null");
      const info = await jsm.streams.info(stream).catch(() => null);
      if (unpublished.rows[0].n === 0 && (info?.state.messages ?? 0) > 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `${unpublished.rows[0].n} outbox rows unpublished; stream ${info ? `holds ${info.state.messages}` : "missing"}\n${baton.logs()}`,
        );
      }
      await sleep(250);
    }
    expectSameProcesses();
  });

  it("the partitions bucket deleted: the engines lease every partition again and serve", async () => {
    const jsm = await nc.jetstreamManager();
    expect(await jsm.streams.delete(`KV_${baton.namespace}_partitions`)).toBe(true);
    await waitForOwners(["engine-0", "engine-1"]);
    await expectServes("leases");
    expectSameProcesses();
  });

  it("the clock bucket deleted: the shared manual clock is made again, never earlier, and moves", async () => {
    const clock = await TestClock.of(baton);
    const before = await clock.now();
    const jsm = await nc.jetstreamManager();
    expect(await jsm.streams.delete(`KV_${NatsClock.bucket(baton.namespace)}`)).toBe(true);
    const moved = await clock.advanceReport(HOUR, 60_000);
    expect(Date.parse(moved.from)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(moved.now)).toBe(Date.parse(moved.from) + HOUR);
    expect(await clock.now()).toBe(Date.parse(moved.now));
    const kv = await nc
      .jetstream()
      .views.kv(NatsClock.bucket(baton.namespace), { bindOnly: true, allow_direct: true });
    const stored = JSON.parse((await kv.get("now"))?.string() ?? "null") as { now: number } | null;
    expect(stored?.now).toBe(Date.parse(moved.now));
    await expectServes("clock");
    expectSameProcesses();
  });

  /** The process of `engine-1`, the second engine replica started. */
  function secondEngine(): ChildProcess {
    const engine = started.filter(([s]) => s === "engine")[1]?.[1];
    if (!engine) throw new Error("the deployment has no second engine");
    return engine;
  }

  /** The journal entries of each `requestId`: exactly one each means no write applied twice (§4.3). */
  async function journalCounts(requestIds: string[]): Promise<Record<string, number>> {
    const rows = await db.query(
      "select request_id, count(*)::int as n from run_journal where request_id = any($1) group by request_id",
      [requestIds],
    );
    const out = Object.fromEntries(requestIds.map((id) => [id, 0]));
    for (const r of rows.rows) out[r.request_id] = r.n;
    return out;
  }

  it("an engine stalls with calls in flight (SIGSTOP): the partitions' new owner answers them within the deadline, and the stalled engine's backlog applies nothing twice", async () => {
    const stalled = secondEngine();
    await waitForOwners(["engine-0", "engine-1"]);
    const toClaim = await runOn("engine-1", "stall");
    const toSubmit = await runOn("engine-1", "stall");
    const claimed = await agent.ok("claim", { runId: toSubmit, stepId: "work", requestId: "stall-claim-0" });

    stalled.kill("SIGSTOP");
    let answers: Result[];
    try {
      answers = await Promise.all([
        answerDuring(agent.callOnce("claim", { runId: toClaim, stepId: "work", requestId: "stall-claim" })),
        answerDuring(
          agent.callOnce("submit", {
            token: claimed.token,
            output: { n: 2 },
            summary: "sent while its engine stalled",
            requestId: "stall-submit",
          }),
        ),
      ]);
    } finally {
      stalled.kill("SIGCONT");
    }
    expect(answers.map((a) => (a.ok ? "ok" : a.error.code))).toEqual(["ok", "ok"]);
    // The stalled engine wakes with the same writes queued, finds its leases gone and takes its
    // share back; whatever it did with its backlog, each write is in the journal once.
    await waitForOwners(["engine-0", "engine-1"]);
    expect(await journalCounts(["stall-claim", "stall-submit"])).toEqual({
      "stall-claim": 1,
      "stall-submit": 1,
    });
    const ended = await db.query("select state, rev from runs where id = $1", [toSubmit]);
    expect(ended.rows).toEqual([{ state: "ended", rev: 3 }]);
    await expectServes("after-stall");
    expectSameProcesses();
  });

  it("an engine killed (kill -9) with a call in flight: the survivor answers it within the deadline, once", async () => {
    const victim = secondEngine();
    await waitForOwners(["engine-0", "engine-1"]);
    const runId = await runOn("engine-1", "kill");
    // Stopped first, so the call is surely in flight to it when it dies.
    victim.kill("SIGSTOP");
    const call = answerDuring(agent.callOnce("claim", { runId, stepId: "work", requestId: "kill-claim" }));
    await sleep(1_000);
    victim.kill("SIGKILL");
    const answer = await call;
    expect(answer.ok ? "ok" : answer.error.code, JSON.stringify(answer)).toBe("ok");
    expect(await journalCounts(["kill-claim"])).toEqual({ "kill-claim": 1 });
    await waitForOwners(["engine-0"]);
    await expectServes("survivor", ["engine-0"]);
    expectSameProcesses([victim]);
  });
});
