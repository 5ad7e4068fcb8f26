import type { Bus, Clock, Logger } from "@baton/bus";
import { type Db, outbox } from "@baton/db";
import { and, isNotNull, lt, sql } from "drizzle-orm";

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

  constructor(
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: { intervalMs?: number; batch?: number; keepMs?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => this.kick(), this.options.intervalMs ?? 1_000);
  }

  /** Asks for a relay round soon (after a commit). Rounds never overlap. */
  kick(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    this.busy = this.busy
      .then(async () => {
        this.pending = false;
        await this.round();
      })
      .catch((error) => this.log.warn({ err: String(error) }, "outbox relay round failed"));
  }

  private async round(): Promise<void> {
    const batch = this.options.batch ?? 200;
    for (;;) {
      const published = await this.db.transaction(async (tx) => {
        const rows = await tx.execute(
          sql`select id, subject, payload from ${outbox} where published_at is null order by id limit ${batch} for update skip locked`,
        );
        const list = (
          rows as unknown as { rows: { id: number | string; subject: string; payload: unknown }[] }
        ).rows;
        for (const row of list)
          await this.bus.publish(row.subject, { id: Number(row.id), ...(row.payload as object) });
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
    const keep = this.options.keepMs ?? 24 * 3600_000;
    await this.db
      .delete(outbox)
      .where(and(isNotNull(outbox.publishedAt), lt(outbox.publishedAt, new Date(this.clock.now() - keep))));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.busy;
  }
}
