import { NatsBus } from "@baton/bus";
import pg from "pg";
import { NATS_URL } from "./deploy.ts";

/**
 * Reads what a distributed deployment recorded, for the scheduler's tests (issue #5): the run journal
 * in its PostgreSQL database (with the timers each transition applied), the timers table, and the
 * domain events on its NATS namespace.
 */

/** A timer a transition applied (`detail.timers` of its journal entry): its kind, step and fire time. */
export interface FiredTimer {
  kind: string;
  stepId: string;
  /** The timer's own fire time, RFC 3339. */
  at: string;
}

/** One row of `run_journal`. */
export interface JournalRow {
  runId: string;
  rev: number;
  command: string;
  actor: string;
  /** When the transition ran, on the deployment's clock, RFC 3339. */
  at: string;
  /** The domain events the transition caused (`detail.events`). */
  events: { type: string; stepId?: string; detail?: Record<string, unknown> }[];
  /** Every timer the transition applied (`detail.timers`): a tick, or a user write that found one due. */
  timers: FiredTimer[];
}

/** Runs `fn` with a connected client to `databaseUrl`. */
export async function withDb<T>(databaseUrl: string, fn: (db: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The journal of the given runs, in order. */
export function journalOf(databaseUrl: string, runIds: string[]): Promise<JournalRow[]> {
  return withDb(databaseUrl, async (db) => {
    const { rows } = await db.query(
      "select run_id, rev, command, actor, at, detail from run_journal where run_id = any($1) order by run_id, rev",
      [runIds],
    );
    return rows.map((r) => {
      const detail = r.detail as { events?: JournalRow["events"]; timers?: FiredTimer[] };
      return {
        runId: r.run_id as string,
        rev: r.rev as number,
        command: r.command as string,
        actor: r.actor as string,
        at: new Date(r.at as Date).toISOString(),
        events: detail.events ?? [],
        timers: detail.timers ?? [],
      };
    });
  });
}

/**
 * Every timer each run's journal shows fired, in journal order (issue #5: "count fired timers from
 * the journal"). Counted from the entries' `detail.timers`, not from `tick` rows: one tick crossing
 * a cascade applies several timers, and a user write can apply an expired lease itself.
 */
export async function firedTimers(databaseUrl: string, runIds: string[]): Promise<Map<string, FiredTimer[]>> {
  const fired = new Map<string, FiredTimer[]>(runIds.map((id) => [id, []]));
  for (const row of await journalOf(databaseUrl, runIds)) fired.get(row.runId)?.push(...row.timers);
  return fired;
}

/** How many timers each run's journal shows fired ({@link firedTimers}). */
export async function firedCounts(databaseUrl: string, runIds: string[]): Promise<Map<string, number>> {
  const fired = await firedTimers(databaseUrl, runIds);
  return new Map([...fired].map(([id, timers]) => [id, timers.length]));
}

/** The `timers` rows of the given runs. */
export function timersOf(
  databaseUrl: string,
  runIds: string[],
): Promise<
  {
    runId: string;
    kind: string;
    claimToken: string | null;
    /** The stored partition column (diagnostics only: the scheduler routes by its own P). */
    partition: number;
    /** Whether the row is due by the database's clock (`fire_at <= now()`; real-time deployments). */
    dueNow: boolean;
    /** How long the claim still holds by the database's clock, ms (null when unclaimed). */
    claimLeftMs: number | null;
  }[]
> {
  return withDb(databaseUrl, async (db) => {
    const { rows } = await db.query(
      `select run_id, kind, claim_token, partition, fire_at <= now() as due_now,
              extract(epoch from (claimed_until - clock_timestamp())) * 1000 as claim_left_ms
       from timers where run_id = any($1) order by run_id, kind`,
      [runIds],
    );
    return rows.map((r) => ({
      runId: r.run_id as string,
      kind: r.kind as string,
      claimToken: r.claim_token as string | null,
      partition: r.partition as number,
      dueNow: r.due_now as boolean,
      claimLeftMs: r.claim_left_ms === null ? null : Number(r.claim_left_ms),
    }));
  });
}

/** Domain events heard on a namespace's bus since {@link listenEvents} was called. */
export interface EventTap {
  events: { subject: string; data: Record<string, unknown> }[];
  /** Resolves with the first event (already heard or later) matching `match`; rejects after `timeoutMs`. */
  next(
    match: (e: { subject: string; data: Record<string, unknown> }) => boolean,
    timeoutMs?: number,
  ): Promise<{ subject: string; data: Record<string, unknown> }>;
  close(): Promise<void>;
}

/** Listens to `events.>` (or `pattern`) on the NATS namespace `namespace`, as a notifier would. */
export async function listenEvents(namespace: string, pattern = "events.>"): Promise<EventTap> {
  const bus = await NatsBus.connect(NATS_URL, "baton-test-events", namespace);
  const events: EventTap["events"] = [];
  const waiters = new Set<() => void>();
  const sub = bus.listen(pattern, (subject, data) => {
    events.push({ subject, data: data as Record<string, unknown> });
    for (const w of waiters) w();
  });
  return {
    events,
    next(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = events.find(match);
          if (!hit) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching event within ${timeoutMs} ms; heard ${JSON.stringify(events)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      await sub.stop();
      await bus.close();
    },
  };
}
