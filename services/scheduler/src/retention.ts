// Retention (issue #13): idempotency records are kept for a window, then pruned in batches off the hot path.
import type { Clock } from "@baton/clock";
import { type Db, rowsOf } from "@baton/db";
import { type Logger, ServiceLoop } from "@baton/kit";
import { sql } from "drizzle-orm";

/** How retention runs (`BATON_IDEMPOTENCY_RETENTION_HOURS`, `BATON_RETENTION_INTERVAL_MS`). */
export interface RetentionSettings {
  /** How long an idempotency record is kept after its write, ms of the deployment's clock. */
  idempotencyMs: number;
  /** How often a prune round runs, ms (real time). */
  intervalMs: number;
  /** Records deleted per statement (default 1,000): each batch is its own short transaction. */
  batch?: number;
}

/**
 * Deletes the idempotency records older than `idempotencyMs` on `clock` (by `created_at`, the
 * time of the write they record), `batch` rows per statement until none is left; returns how many
 * were deleted. Several scheduler replicas may prune at once: a row is deleted once, and a batch
 * never waits on rows another holds (`skip locked`). Writes never wait on it either: it locks only
 * rows no write reads again before the window ends (a replay past it is answered from the journal,
 * `services/engine` write path).
 */
export async function pruneIdempotency(db: Db, clock: Clock, settings: RetentionSettings): Promise<number> {
  const cutoff = new Date(clock.now() - settings.idempotencyMs).toISOString();
  const batch = settings.batch ?? 1_000;
  let total = 0;
  for (;;) {
    const deleted = rowsOf<{ n: string | number }>(
      await db.execute(sql`with gone as (
        delete from idempotency where ctid = any(array(
          select ctid from idempotency where created_at < ${cutoff}::timestamptz
          order by created_at limit ${batch} for update skip locked))
        returning 1)
      select count(*) as n from gone`),
    );
    const n = Number(deleted[0]?.n ?? 0);
    total += n;
    if (n < batch) return total;
  }
}

/** The scheduler's retention loop: {@link pruneIdempotency} every `intervalMs`; stop it with `stop()`. */
export function startRetention(
  deps: { db: Db; clock: Clock; log: Logger },
  settings: RetentionSettings,
): { stop(): Promise<void> } {
  const loop = new ServiceLoop(async () => {
    try {
      const pruned = await pruneIdempotency(deps.db, deps.clock, settings);
      if (pruned > 0)
        deps.log.info(
          { pruned, olderThanHours: settings.idempotencyMs / 3_600_000 },
          "idempotency records past the retention window pruned",
        );
    } catch (error) {
      deps.log.warn({ err: String(error) }, "idempotency prune failed; the next round tries again");
    }
    return settings.intervalMs;
  });
  loop.start();
  return { stop: () => loop.stop() };
}
