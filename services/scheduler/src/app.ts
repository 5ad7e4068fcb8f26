import { randomUUID } from "node:crypto";
import {
  type Bus,
  type Clock,
  type ClockMover,
  type EngineWrite,
  type Envelope,
  envelope,
  type Logger,
  QUEUES,
  requestWithRetry,
  type SchedulerCall,
  SUBJECTS,
  type Subscription,
  type TickResult,
} from "@baton/bus";
import { type Db, timers } from "@baton/db";
import { fail, ok, protocolError, type ToolResult } from "@baton/protocol";
import { sql } from "drizzle-orm";

/** How the scheduler runs (see `config.ts` for what each means). */
export interface SchedulerSettings {
  /** This replica's name, in claim tokens and logs. */
  replicaId: string;
  /** Longest sleep between looks for due timers, ms. */
  pollMs: number;
  /** How long a take holds its rows while delivering them, ms of wall-clock time. */
  claimMs: number;
  /** Rows taken per round. */
  batch: number;
  /** Runs delivered to the engine at once. */
  concurrency: number;
  /** Deadline for delivering one run's tick, retries on no responders included, ms. */
  tickTimeoutMs: number;
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

/** The reply to a {@link SchedulerCall}, under `{ ok: true, data }`. */
export interface ClockReply {
  /** The clock's time after the call, RFC 3339. */
  now: string;
  /** True when the clock is manual (movable). */
  manual: boolean;
  /** `advance` only: transitions the engine committed for the timers that fell due. */
  transitions?: number;
  /**
   * `advance` only: timers still due when the call's deadline came (0 when everything that fell due
   * has been applied). Call `advance` with `ms: 0` to carry on.
   */
  pending?: number;
}

/** The outcome of applying due timers. */
export interface Settled {
  /** Tick transitions the engine committed. */
  transitions: number;
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
   * replicas hold, until none is left or the wall clock passes `deadline` (epoch ms).
   */
  settle(dueBy: number, deadline: number): Promise<Settled>;
}

/** The longest manual-clock step one call accepts: 100 years, far inside what a `Date` holds. */
const MAX_ADVANCE_MS = 100 * 365 * 24 * 3_600_000;

interface Taken {
  runId: string;
  partition: number;
}

type Delivery = "committed" | "unchanged" | "failed";

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The scheduler service (issue #5): delivers due timers to the engine partition that owns their run.
 *
 * The engine derives a run's timers from its state and keeps the `timers` table equal to them in
 * every transition's commit; a `tick` write applies whatever is due at the engine's clock and is
 * idempotent. So the scheduler only has to deliver each due timer at least once, and the engine makes
 * it fire exactly once:
 *
 * 1. **Take**: one short statement claims up to `batch` due, unclaimed rows with
 *    `FOR UPDATE SKIP LOCKED` and stamps them with a wall-clock lease (`claimed_until`) and a token.
 *    No row lock outlives the statement: the engine's commit deletes those rows while the tick runs.
 * 2. **Deliver**: one `tick` per run to `engine.p<partition>`, retried while no replica serves the
 *    partition (a hand-over), until the tick deadline.
 * 3. **Release** the claims of delivered runs (rows the tick did not remove were not due on the
 *    engine's clock yet and are taken again next round). A replica that dies between take and release
 *    leaves its claims to expire after `claimMs`; then another replica takes the rows again, and a
 *    tick the dead replica did send finds nothing left to do.
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

  /** Claims up to `batch` due rows no live claim holds; returns them with the claim's token. */
  async function take(dueBy: number): Promise<{ token: string; rows: Taken[] }> {
    const token = `${settings.replicaId}/${randomUUID()}`;
    const wall = Date.now();
    const result = await db.execute(sql`
      with due as (
        select run_id, kind, step_id from ${timers}
        where fire_at <= ${new Date(dueBy)}
          and (claimed_until is null or claimed_until <= ${new Date(wall)})
        order by fire_at, run_id, kind, step_id
        limit ${settings.batch}
        for update skip locked
      )
      update ${timers} as t
      set claimed_until = ${new Date(wall + settings.claimMs)}, claim_token = ${token}
      from due
      where t.run_id = due.run_id and t.kind = due.kind and t.step_id = due.step_id
      returning t.run_id, t.partition`);
    const rows = (result as unknown as { rows: { run_id: string; partition: number | string }[] }).rows;
    return { token, rows: rows.map((r) => ({ runId: r.run_id, partition: Number(r.partition) })) };
  }

  async function release(token: string, runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await db.execute(sql`
      update ${timers} set claimed_until = null, claim_token = null
      where claim_token = ${token} and run_id in (${sql.join(
        runIds.map((id) => sql`${id}`),
        sql`, `,
      )})`);
  }

  async function deliver(runId: string, partition: number): Promise<Delivery> {
    const deadline = Date.now() + settings.tickTimeoutMs;
    const write: EngineWrite = { tool: "tick", runId };
    try {
      const reply = (await requestWithRetry(
        bus,
        SUBJECTS.engineWrite(partition),
        envelope("engine.tick", null, write, deadline),
        deadline,
      )) as TickResult;
      return reply.committed ? "committed" : "unchanged";
    } catch (error) {
      // The claim stays until it expires, which spaces out retries of a run the engine cannot tick.
      log.warn({ runId, partition, err: String(error) }, "tick not delivered; retrying after the claim");
      return "failed";
    }
  }

  /** Delivers one take's runs, `concurrency` at a time; returns how many ticks committed. */
  async function deliverAll(token: string, rows: Taken[]): Promise<number> {
    const runs = [...new Map(rows.map((r) => [r.runId, r.partition])).entries()];
    const outcomes = new Map<string, Delivery>();
    let next = 0;
    const worker = async () => {
      while (next < runs.length) {
        const [runId, partition] = runs[next++] as [string, number];
        outcomes.set(runId, await deliver(runId, partition));
      }
    };
    const workers = Array.from({ length: Math.min(settings.concurrency, runs.length) }, worker);
    if (faults?.afterSend && !sentOnce) {
      // Every worker has sent its first tick synchronously before its first await.
      sentOnce = true;
      await faults.afterSend();
    }
    await Promise.all(workers);
    await release(
      token,
      [...outcomes].filter(([, o]) => o !== "failed").map(([id]) => id),
    );
    let committed = 0;
    for (const o of outcomes.values()) if (o === "committed") committed++;
    return committed;
  }

  /** Takes and delivers until nothing due at `dueBy` is free to take; returns committed ticks. */
  async function pass(dueBy: number): Promise<number> {
    let committed = 0;
    for (;;) {
      const { token, rows } = await take(dueBy);
      if (rows.length === 0) return committed;
      if (faults?.afterTake && !tookOnce) {
        tookOnce = true;
        await faults.afterTake();
      }
      committed += await deliverAll(token, rows);
      if (rows.length < settings.batch) return committed;
    }
  }

  async function countDue(dueBy: number): Promise<number> {
    const result = await db.execute(
      sql`select count(*)::int as n from ${timers} where fire_at <= ${new Date(dueBy)}`,
    );
    return Number((result as unknown as { rows: { n: number | string }[] }).rows[0]?.n ?? 0);
  }

  async function settle(dueBy: number, deadline: number): Promise<Settled> {
    let transitions = 0;
    let idle = 0;
    for (;;) {
      const committed = await pass(dueBy);
      transitions += committed;
      const pending = await countDue(dueBy);
      if (pending === 0 || stopped) return { transitions, pending };
      if (Date.now() >= deadline) return { transitions, pending };
      // What is left is held by another replica, or not due yet on the engine's copy of the clock.
      idle = committed > 0 ? 0 : idle + 1;
      await sleep(Math.min(10 * 2 ** Math.min(idle, 6), 250, Math.max(deadline - Date.now(), 1)));
    }
  }

  /** How long to sleep before the next look: until the next fire time, capped by `pollMs`. */
  async function nextDelay(): Promise<number> {
    if (mover) return settings.pollMs;
    const result = await db.execute(sql`
      select min(fire_at) as next from ${timers}
      where claimed_until is null or claimed_until <= ${new Date(Date.now())}`);
    const next = (result as unknown as { rows: { next: Date | string | null }[] }).rows[0]?.next;
    if (next === null || next === undefined) return settings.pollMs;
    const delay = new Date(next).getTime() - clock.now();
    return Math.min(Math.max(delay, 20), settings.pollMs);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      let delay = settings.pollMs;
      try {
        const committed = await pass(clock.now());
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

  async function handle(env: Envelope<SchedulerCall>): Promise<ToolResult<ClockReply>> {
    if (!env.identity?.operator) {
      return fail(protocolError("forbidden", "the clock is moved by operators only"));
    }
    const p = env.payload;
    switch (p.op) {
      case "now":
        return ok({ now: iso(clock.now()), manual: mover !== null });
      case "advance": {
        if (!mover) {
          return fail(
            protocolError(
              "conflict",
              "the clock is real time; start Baton with --clock manual (BATON_CLOCK=manual) to move it",
            ),
          );
        }
        if (!Number.isSafeInteger(p.ms) || p.ms < 0 || p.ms > MAX_ADVANCE_MS) {
          return fail(
            protocolError("invalid", "advance the clock by a whole number of milliseconds", [
              `ms: expected a whole number from 0 to ${MAX_ADVANCE_MS}`,
            ]),
          );
        }
        const now = p.ms > 0 ? await mover.advance(p.ms) : clock.now();
        // Leave the caller time to receive the reply before its own deadline.
        const deadline = Math.max(env.deadline - 1_000, Date.now() + 100);
        let settled: Settled;
        try {
          settled = await settle(now, deadline);
        } catch (error) {
          // The clock has moved; an error here must not read as "nothing happened" (a retry of the
          // same advance would move it twice). Report work left, so the caller carries on with ms 0.
          log.warn({ err: String(error) }, "applying due timers after an advance failed");
          settled = { transitions: 0, pending: 1 };
        }
        log.info({ now: iso(now), ...settled }, "clock advanced");
        return ok({ now: iso(now), manual: true, ...settled });
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
      sub = bus.serve(SUBJECTS.scheduler, (env) => handle(env as Envelope<SchedulerCall>), {
        queue: QUEUES.scheduler,
      });
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
