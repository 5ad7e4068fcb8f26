// Publishing each commit's domain events from the outbox table to NATS JetStream.
import type { Bus } from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Db, outbox, rowsOf } from "@baton/db";
import { type Logger, outboxRounds } from "@baton/kit";
import { and, isNotNull, lt, sql } from "drizzle-orm";

/** How the relay runs; each has a default. */
export interface OutboxOptions {
  /** How often a round runs without a kick, ms (1 s). */
  intervalMs?: number;
  /** Rows published per transaction (200). */
  batch?: number;
  /** How long published rows are kept, ms (a day). */
  keepMs?: number;
  /** How long a kick waits for others to share its round, ms ({@link GATHER_MS}). */
  gatherMs?: number;
}

/**
 * How long a round waits after the commit that asked for it, ms (issue #15). Events reach JetStream
 * up to this much after their commit, which only the notifier reads (a webhook or a mail a fifth of a
 * second later). Each round costs the relay a transaction and the notifier a wake-up, a read and an
 * acknowledgement write whatever the round holds: at 20 ms a busy engine relayed in rounds of a few
 * dozen events, and the notifier cost 0.20 ms of CPU per transition; at 200 ms, 0.10, with
 * PostgreSQL's share down by a sixth (one bench run each, the same hour).
 */
export const GATHER_MS = 200;

/**
 * Relays domain events from the outbox table to the bus (`events.>` on JetStream). Rows are written in
 * the transition's commit, so an event exists exactly when its transition does; the relay publishes at
 * least once (a crash between publish and mark republishes), and consumers dedupe on the row id.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private busy: Promise<void> = Promise.resolve();
  private pending = false;
  private stopped = false;
  private lastCleanup = 0;
  private gather: NodeJS.Timeout | null = null;

  private readonly db: Db;
  private readonly bus: Bus;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly options: OutboxOptions;

  constructor(deps: { db: Db; bus: Bus; clock: Clock; log: Logger; options?: OutboxOptions }) {
    this.db = deps.db;
    this.bus = deps.bus;
    this.clock = deps.clock;
    this.log = deps.log;
    this.options = deps.options ?? {};
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.options.intervalMs ?? 1_000);
  }

  /**
   * Asks for a relay round soon (after a commit). Rounds never overlap, and kicks within
   * {@link GATHER_MS} share one round, so a busy engine relays many transitions' events per round
   * instead of paying a round (a transaction) per transition.
   */
  kick(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    this.gather = setTimeout(() => {
      this.gather = null;
      if (this.stopped) return;
      this.busy = this.busy
        .then(async () => {
          this.pending = false;
          await this.round();
        })
        .catch((error) => this.log.warn({ err: String(error) }, "outbox relay round failed"));
    }, this.options.gatherMs ?? GATHER_MS);
  }

  private async round(): Promise<void> {
    const batch = this.options.batch ?? 200;
    for (;;) {
      outboxRounds.inc();
      const published = await this.db.transaction(async (tx) => {
        const rows = await tx.execute(
          sql`select id, subject, payload from ${outbox} where published_at is null order by id limit ${batch} for update skip locked`,
        );
        const list = rowsOf<{ id: number | string; subject: string; payload: unknown }>(rows);
        // Sent in id order on one connection; their acknowledgements are awaited together.
        await Promise.all(
          list.map((row) =>
            this.bus.publish(row.subject, { id: Number(row.id), ...(row.payload as object) }),
          ),
        );
        if (list.length > 0) {
          await tx.execute(
            sql`update ${outbox} set published_at = ${new Date(this.clock.now())} where id in (${sql.join(
              list.map((r) => sql`${Number(r.id)}`),
              sql`, `,
            )})`,
          );
        }
        return list.length;
      });
      if (published < batch) break;
    }
    const now = Date.now();
    if (now - this.lastCleanup < 60_000) return;
    this.lastCleanup = now;
    const keep = this.options.keepMs ?? 24 * 3600_000;
    outboxRounds.inc();
    await this.db
      .delete(outbox)
      .where(and(isNotNull(outbox.publishedAt), lt(outbox.publishedAt, new Date(this.clock.now() - keep))));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    // Unrelayed rows stay in the outbox for the next round of any replica.
    if (this.gather) clearTimeout(this.gather);
    await this.busy;
  }
}
