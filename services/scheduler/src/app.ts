import { randomUUID } from "node:crypto";
import {
  type Bus,
  type ClockReply,
  CONTRACTS,
  call,
  type Envelope,
  type SchedulerCall,
  type Subscription,
  serve,
} from "@baton/bus";
import { AdvanceConflict, type Clock, type ClockMove, type ClockMover } from "@baton/clock";
import { type Db, runJournal, timers } from "@baton/db";
import { DEFAULT_ATTEMPT_MS, type Logger } from "@baton/kit";
import { iso } from "@baton/process";
import { fail, ok, partitionOf, protocolError, type ToolResult } from "@baton/protocol";
import { sql } from "drizzle-orm";

/** How the scheduler runs (see `config.ts` for what each means). */
export interface SchedulerSettings {
  /** This replica's name, in claim tokens and logs. */
  replicaId: string;
  /** Longest sleep between looks for due timers, ms. */
  pollMs: number;
  /** How long a take holds its rows while delivering them, ms of the database's clock. */
  claimMs: number;
  /**
   * How long a row whose tick changed nothing (or could not be delivered) is left alone before it is
   * taken again, ms of the database's clock.
   */
  backoffMs: number;
  /** Rows taken per round. */
  batch: number;
  /** Runs delivered to the engine at once. */
  concurrency: number;
  /** Deadline for delivering one run's tick, retries on no responders included, ms. */
  tickTimeoutMs: number;
  /**
   * How long one attempt of a tick waits before it is sent again (a tick is idempotent), ms;
   * default {@link DEFAULT_ATTEMPT_MS}.
   */
  attemptMs?: number;
  /** P virtual partitions (ARCHITECTURE rule 5): a tick goes to `engine.p<partitionOf(runId, P)>`. */
  partitions: number;
  /**
   * The organization whose operators may move a manual clock. The clock is one for the whole
   * deployment, so moving it changes every organization's leases, waits and deadlines; an operator
   * of another organization may read it but not move it.
   */
  clockOrg: string;
}

/**
 * Test hooks for the exactly-once tests (issue #5), wired by `main.ts` from `BATON_SCHEDULER_FAULT`
 * only. Each is called once, at most.
 */
export interface SchedulerFaults {
  /** Called right after the first take that claimed at least one due timer, before any delivery. */
  afterTake?: () => Promise<void>;
  /** Called right after the first take's ticks were sent, before any reply is awaited. */
  afterSend?: () => Promise<void>;
}

/** What the scheduler needs (CONVENTIONS: dependencies passed explicitly). */
export interface SchedulerDeps {
  db: Db;
  bus: Bus;
  /** The clock every service of the deployment reads. */
  clock: Clock;
  /** The handle that moves {@link clock}; `null` when the clock is real time (it cannot be moved). */
  mover: ClockMover | null;
  log: Logger;
  settings: SchedulerSettings;
  faults?: SchedulerFaults;
}

/** The outcome of {@link SchedulerService.settle}. */
export interface Settled {
  /**
   * Tick transitions this call's own deliveries committed. Not every timer applied meanwhile: other
   * replicas, the scheduler's loop and user writes apply timers too, and one tick may apply several.
   */
  ticks: number;
  /** Timers due by then that are still waiting (0: all applied). */
  pending: number;
}

/** The running scheduler. */
export interface SchedulerService {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Serves one {@link SchedulerCall} (exposed for in-process tests). */
  handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>>;
  /**
   * Applies every timer due at or before `dueBy` (epoch ms, injected clock), waiting for rows other
   * replicas hold, until none is left or the wall clock passes `deadline` (epoch ms); no delivery
   * waits past `deadline` either.
   */
  settle(dueBy: number, deadline: number): Promise<Settled>;
}

/** The longest manual-clock step one call accepts: 100 years, far inside what a `Date` holds. */
const MAX_ADVANCE_MS = 100 * 365 * 24 * 3_600_000;

/** Time an `advance` keeps for its reply to reach the caller before the caller's deadline, ms. */
const REPLY_MARGIN_MS = 1_000;

type Delivery = "committed" | "unchanged" | "failed";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

/**
 * The scheduler service (issue #5): delivers due timers to the engine partition that owns their run.
 *
 * The engine derives a run's timers from its state and keeps the `timers` table equal to them in
 * every transition's commit; a `tick` write applies whatever is due at the engine's clock and is
 * idempotent. So the scheduler only has to deliver each due timer at least once, and the engine makes
 * it fire exactly once:
 *
 * 1. **Take**: one short statement claims up to `batch` due, unclaimed rows with
 *    `FOR UPDATE SKIP LOCKED` and stamps them with a lease on the database's clock
 *    (`claimed_until = clock_timestamp() + claimMs`) and a token. No row lock outlives the
 *    statement: the engine's commit deletes those rows while the tick runs.
 * 2. **Deliver**: one `tick` per run to `engine.p<partitionOf(runId, P)>`, retried while no replica
 *    serves the partition (a hand-over), until the tick deadline (never past the caller's).
 * 3. **Settle the claims**: a run whose tick committed is released (a row still there is taken
 *    again). A run whose tick changed nothing (the engine's clock is behind the scheduler's) or
 *    failed keeps its claim for `backoffMs` more, so it is not taken again at once. A replica that
 *    dies between take and release leaves its claims to expire after `claimMs`; then another replica
 *    takes the rows again, and a tick the dead replica did send finds nothing left to do.
 *
 * Wake-ups: with real time, at the next fire time, at most `pollMs` apart; with a manual clock,
 * whenever it moves, and every `pollMs`. The `scheduler` subject serves the manual clock's admin calls.
 */
export function createScheduler(deps: SchedulerDeps): SchedulerService {
  const { db, bus, clock, mover, log, settings, faults } = deps;
  let stopped = false;
  let loopDone: Promise<void> = Promise.resolve();
  let wakeUp: (() => void) | null = null;
  let sub: Subscription | null = null;
  let unwatch: (() => void) | null = null;
  let tookOnce = false;
  let sentOnce = false;

  const wake = () => wakeUp?.();
  const ms = (n: number) => sql`(${n}::double precision * interval '1 millisecond')`;

  /**
   * Claims up to `batch` due rows no live claim holds; returns their run ids and the claim's token.
   * Claims are measured by the database's clock, so every replica agrees when one ends whatever its
   * own host's clock says.
   */
  async function take(dueBy: number): Promise<{ token: string; runIds: string[] }> {
    const token = `${settings.replicaId}/${randomUUID()}`;
    const result = await db.execute(sql`
      with due as (
        select run_id, kind, step_id from ${timers}
        where fire_at <= ${new Date(dueBy)}
          and (claimed_until is null or claimed_until <= clock_timestamp())
        order by fire_at, run_id, kind, step_id
        limit ${settings.batch}
        for update skip locked
      )
      update ${timers} as t
      set claimed_until = clock_timestamp() + ${ms(settings.claimMs)}, claim_token = ${token}
      from due
      where t.run_id = due.run_id and t.kind = due.kind and t.step_id = due.step_id
      returning t.run_id`);
    return { token, runIds: rowsOf<{ run_id: string }>(result).map((r) => r.run_id) };
  }

  /** Ends this take's claims on `runIds` (`backoff`: keeps them `backoffMs` longer instead). */
  async function unclaim(token: string, runIds: string[], backoff: boolean): Promise<void> {
    if (runIds.length === 0) return;
    const ids = sql.join(
      runIds.map((id) => sql`${id}`),
      sql`, `,
    );
    await db.execute(
      backoff
        ? sql`update ${timers} set claimed_until = clock_timestamp() + ${ms(settings.backoffMs)}
              where claim_token = ${token} and run_id in (${ids})`
        : sql`update ${timers} set claimed_until = null, claim_token = null
              where claim_token = ${token} and run_id in (${ids})`,
    );
  }

  async function deliver(runId: string, by: number): Promise<Delivery> {
    // Routed by the configured P, not the row's stored partition: rows written before P changed
    // would otherwise go to a partition nobody serves any more.
    const partition = partitionOf(runId, settings.partitions);
    const deadline = Math.min(Date.now() + settings.tickTimeoutMs, by);
    try {
      const reply = await call(
        bus,
        CONTRACTS.engineWrite,
        { tool: "tick", runId },
        { identity: null, deadline, partition, attemptMs: settings.attemptMs ?? DEFAULT_ATTEMPT_MS },
      );
      return reply.committed ? "committed" : "unchanged";
    } catch (error) {
      log.warn({ runId, partition, err: String(error) }, "tick not delivered; retrying after a back-off");
      return "failed";
    }
  }

  /** Delivers one take's runs, `concurrency` at a time, until `by` at the latest; returns the outcomes. */
  async function deliverAll(token: string, runIds: string[], by: number): Promise<Map<string, Delivery>> {
    const runs = [...new Set(runIds)];
    const outcomes = new Map<string, Delivery>();
    let next = 0;
    const worker = async () => {
      while (next < runs.length) {
        const runId = runs[next++] as string;
        outcomes.set(runId, await deliver(runId, by));
      }
    };
    const workers = Array.from({ length: Math.min(settings.concurrency, runs.length) }, worker);
    if (faults?.afterSend && !sentOnce) {
      // Every worker has sent its first tick synchronously before its first await.
      sentOnce = true;
      await faults.afterSend();
    }
    await Promise.all(workers);
    const done = [...outcomes].filter(([, o]) => o === "committed").map(([id]) => id);
    const later = [...outcomes].filter(([, o]) => o !== "committed").map(([id]) => id);
    await unclaim(token, done, false);
    // A tick that changed nothing means the engine's clock has not reached the fire time yet (or the
    // engine is unreachable): taking the row again at once would spin; leave it for a back-off.
    await unclaim(token, later, true);
    return outcomes;
  }

  /**
   * Takes and delivers until nothing due at `dueBy` is free to take, or the wall clock passes `by`;
   * returns the ticks that committed.
   */
  async function pass(dueBy: number, by: number): Promise<number> {
    let committed = 0;
    while (Date.now() < by) {
      const { token, runIds } = await take(dueBy);
      if (runIds.length === 0) return committed;
      if (faults?.afterTake && !tookOnce) {
        tookOnce = true;
        await faults.afterTake();
      }
      const outcomes = await deliverAll(token, runIds, by);
      const count = (o: Delivery) => [...outcomes.values()].filter((v) => v === o).length;
      committed += count("committed");
      log.debug(
        {
          replica: settings.replicaId,
          taken: runIds.length,
          committed: count("committed"),
          unchanged: count("unchanged"),
          failed: count("failed"),
        },
        "took due timers",
      );
      if (runIds.length < settings.batch) return committed;
    }
    return committed;
  }

  async function countDue(dueBy: number): Promise<number> {
    const result = await db.execute(
      sql`select count(*)::int as n from ${timers} where fire_at <= ${new Date(dueBy)}`,
    );
    return Number(rowsOf<{ n: number | string }>(result)[0]?.n ?? 0);
  }

  /**
   * Timers with a fire time in (`from`, `to`] (epoch ms) that journal entries show applied. A
   * transition that applied one ran at or after its fire time, hence after `from`: only entries
   * stamped after `from` are read.
   */
  async function countApplied(from: number, to: number): Promise<number> {
    if (to <= from) return 0;
    const result = await db.execute(sql`
      select count(*)::int as n
      from ${runJournal} j
      cross join lateral jsonb_array_elements(
        case when jsonb_typeof(j.detail->'timers') = 'array' then j.detail->'timers' else '[]'::jsonb end
      ) as t(timer)
      where j.at > ${new Date(from)}
        and (t.timer->>'at')::timestamptz > ${new Date(from)}
        and (t.timer->>'at')::timestamptz <= ${new Date(to)}`);
    return Number(rowsOf<{ n: number | string }>(result)[0]?.n ?? 0);
  }

  async function settle(dueBy: number, deadline: number): Promise<Settled> {
    let ticks = 0;
    let idle = 0;
    for (;;) {
      const committed = await pass(dueBy, deadline);
      ticks += committed;
      const pending = await countDue(dueBy);
      if (pending === 0 || stopped) return { ticks, pending };
      if (Date.now() >= deadline) return { ticks, pending };
      // What is left is held by another replica, or backed off (not due on the engine's clock yet).
      idle = committed > 0 ? 0 : idle + 1;
      await sleep(Math.min(10 * 2 ** Math.min(idle, 6), 250, Math.max(deadline - Date.now(), 1)));
    }
  }

  /** How long to sleep before the next look: until the next fire time, capped by `pollMs`. */
  async function nextDelay(): Promise<number> {
    if (mover) return settings.pollMs;
    const result = await db.execute(sql`
      select min(fire_at) as next from ${timers}
      where claimed_until is null or claimed_until <= clock_timestamp()`);
    const next = rowsOf<{ next: Date | string | null }>(result)[0]?.next;
    if (next === null || next === undefined) return settings.pollMs;
    const delay = new Date(next).getTime() - clock.now();
    return Math.min(Math.max(delay, 20), settings.pollMs);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let delay = settings.pollMs;
      try {
        const committed = await pass(clock.now(), Number.POSITIVE_INFINITY);
        if (committed > 0) log.info({ replica: settings.replicaId, committed }, "due timers applied");
        delay = await nextDelay();
      } catch (error) {
        log.warn({ err: String(error) }, "scheduler round failed");
      }
      if (stopped) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          wakeUp = null;
          resolve();
        };
        const timer = setTimeout(done, delay);
        wakeUp = done;
      });
    }
  }

  async function advance(
    moving: ClockMover,
    p: Extract<SchedulerCall, { op: "advance" }>,
    callDeadline: number,
  ): Promise<ToolResult<ClockReply>> {
    const ms = p.ms;
    if (ms === null || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_ADVANCE_MS) {
      return fail(
        protocolError("invalid", "advance the clock by a whole number of milliseconds", [
          `ms: expected a whole number from 0 to ${MAX_ADVANCE_MS}`,
        ]),
      );
    }
    const requestId = p.requestId;
    if (
      requestId !== undefined &&
      (typeof requestId !== "string" || requestId.length < 1 || requestId.length > 200)
    ) {
      return fail(
        protocolError("invalid", "requestId must be a string of 1 to 200 characters", [
          "requestId: expected a string of 1 to 200 characters",
        ]),
      );
    }
    let move: ClockMove;
    try {
      if (ms === 0 && requestId === undefined) {
        const now = (await clock.sync?.()) ?? clock.now();
        move = { from: now, to: now, replayed: false };
      } else {
        move = await moving.advance(ms, requestId);
      }
    } catch (error) {
      if (error instanceof AdvanceConflict) return fail(protocolError("conflict", error.message));
      throw error;
    }
    // Leave the caller time to receive the reply before its own deadline.
    const deadline = Math.max(callDeadline - REPLY_MARGIN_MS, Date.now() + 100);
    let pending: number;
    try {
      ({ pending } = await settle(move.to, deadline));
    } catch (error) {
      // The clock has moved; an error here must not read as "nothing happened". Report work left, so
      // the caller sends the same advance again (its requestId keeps the clock from moving twice).
      log.warn({ err: String(error) }, "applying due timers after an advance failed");
      pending = 1;
    }
    const applied = await countApplied(move.from, move.to);
    log.info(
      { from: iso(move.from), to: iso(move.to), replayed: move.replayed, applied, pending },
      "clock advanced",
    );
    return ok({ now: iso(move.to), from: iso(move.from), manual: true, applied, pending });
  }

  async function handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>> {
    if (!env.identity?.operator) {
      return fail(protocolError("forbidden", "the clock is moved by operators only"));
    }
    const p = env.payload;
    switch (p.op) {
      case "now":
        return ok({ now: iso((await clock.sync?.()) ?? clock.now()), manual: mover !== null });
      case "advance": {
        if (env.identity.org !== settings.clockOrg) {
          return fail(
            protocolError(
              "forbidden",
              `the clock is shared by every organization on this server; only operators of ${JSON.stringify(settings.clockOrg)} (BATON_CLOCK_ORG) move it`,
            ),
          );
        }
        if (!mover) {
          return fail(
            protocolError(
              "conflict",
              "the clock is real time; start Baton with --clock manual (BATON_CLOCK=manual) to move it",
            ),
          );
        }
        return advance(mover, p, env.deadline);
      }
      default: {
        const unreachable: never = p;
        return fail(protocolError("invalid", `unknown scheduler call ${JSON.stringify(unreachable)}`));
      }
    }
  }

  return {
    handle,
    settle,
    async start() {
      sub = serve(bus, CONTRACTS.scheduler, (_call, env) => handle(env), { log });
      unwatch = mover?.onChange(wake) ?? null;
      loopDone = loop();
      log.info({ replica: settings.replicaId, manualClock: mover !== null }, "scheduler started");
    },
    async stop() {
      stopped = true;
      unwatch?.();
      await sub?.stop();
      wake();
      await loopDone;
    },
  };
}
