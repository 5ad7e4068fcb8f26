import { NatsBus } from "@baton/bus";
import pg from "pg";
import { NATS_URL } from "./deploy.ts";

/**
 * Reads what a distributed deployment recorded, for the scheduler's tests (issue #5): the run journal
 * in its PostgreSQL database, the timers table, and the domain events on its NATS namespace.
 */

/** One row of `run_journal`. */
export interface JournalRow {
  runId: string;
  rev: number;
  command: string;
  actor: string;
  /** The domain events the transition caused (`detail.events`). */
  events: { type: string; stepId?: string; detail?: Record<string, unknown> }[];
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
      "select run_id, rev, command, actor, detail from run_journal where run_id = any($1) order by run_id, rev",
      [runIds],
    );
    return rows.map((r) => ({
      runId: r.run_id as string,
      rev: r.rev as number,
      command: r.command as string,
      actor: r.actor as string,
      events: ((r.detail as { events?: JournalRow["events"] }).events ?? []) as JournalRow["events"],
    }));
  });
}

/** How many `tick` transitions (fired timers) each run's journal holds. */
export async function tickCounts(databaseUrl: string, runIds: string[]): Promise<Map<string, number>> {
  const counts = new Map(runIds.map((id) => [id, 0]));
  for (const row of await journalOf(databaseUrl, runIds))
    if (row.command === "tick") counts.set(row.runId, (counts.get(row.runId) ?? 0) + 1);
  return counts;
}

/** The `timers` rows of the given runs. */
export function timersOf(
  databaseUrl: string,
  runIds: string[],
): Promise<{ runId: string; kind: string; claimToken: string | null }[]> {
  return withDb(databaseUrl, async (db) => {
    const { rows } = await db.query(
      "select run_id, kind, claim_token from timers where run_id = any($1) order by run_id, kind",
      [runIds],
    );
    return rows.map((r) => ({
      runId: r.run_id as string,
      kind: r.kind as string,
      claimToken: r.claim_token as string | null,
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
