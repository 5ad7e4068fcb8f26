// Reading one domain event: its facts from PostgreSQL, its deliveries created once (issue #11).
import type { Clock } from "@baton/clock";
import {
  type Db,
  groupEmails,
  notificationDeliveries,
  notificationEvents,
  rowsOf,
  webhookSubscriptions,
} from "@baton/db";
import type { Logger } from "@baton/kit";
import { and, eq, sql } from "drizzle-orm";
import { type DomainEventMessage, type RunFacts, webhookData } from "./payload.ts";
import { isNotified, type MailPlan, planDeliveries } from "./plan.ts";

/** What reading events needs. */
export interface IngestDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  publicUrl: string;
  mail: MailPlan;
  /** How long a new delivery is retried before it is dead, ms. */
  giveUpMs: number;
}

/** What became of one event: its deliveries were created now, it had been read before, or nobody hears of its type. */
export type Ingested = { outcome: "new"; pending: number } | { outcome: "seen" } | { outcome: "ignored" };

/**
 * Builds the function that reads one event. It is idempotent on the event's id (its outbox row):
 * the event's row and its deliveries are inserted in one transaction, and a second read of the same
 * event — JetStream redelivering it, another replica reading it at the same moment, the outbox read
 * again after a crash — inserts nothing (issue #11: one delivery per (event, destination), whatever
 * NATS does). The run's process, version and step, and the step's due time, come from PostgreSQL;
 * the event itself carries ids only. Throws when the database fails (the caller reads it again later).
 */
export function createIngest(deps: IngestDeps): (event: DomainEventMessage) => Promise<Ingested> {
  const { db, clock, publicUrl, mail, giveUpMs } = deps;

  async function facts(event: DomainEventMessage): Promise<RunFacts> {
    const result = await db.execute(sql`
      select r.process, r.version,
        (r.doc->'steps'->(${event.stepId ?? ""}::text)->>'dueAt')::bigint as due_at,
        (select s from jsonb_array_elements(v.definition->'steps') s where s->>'id' = ${event.stepId ?? ""}::text limit 1) as step
      from runs r
      left join process_versions v on v.org = r.org and v.name = r.process and v.version = r.version
      where r.id = ${event.runId} and r.org = ${event.org}`);
    const row = rowsOf<{
      process: string;
      version: number;
      due_at: string | number | null;
      step: { kind?: string; instructions?: string } | null;
    }>(result)[0];
    if (!row) return { process: "", version: 0, step: null, dueAt: null };
    return {
      process: row.process,
      version: Number(row.version),
      step:
        event.stepId !== undefined && row.step
          ? { kind: String(row.step.kind ?? ""), instructions: row.step.instructions ?? null }
          : null,
      dueAt: row.due_at === null || row.due_at === undefined ? null : Number(row.due_at),
    };
  }

  return async function ingest(event) {
    if (!isNotified(event.type)) return { outcome: "ignored" };
    const seen = await db
      .select({ id: notificationEvents.eventId })
      .from(notificationEvents)
      .where(eq(notificationEvents.eventId, event.id));
    if (seen.length > 0) return { outcome: "seen" };
    const known = await facts(event);
    const subscriptions = await db
      .select({
        id: webhookSubscriptions.id,
        events: webhookSubscriptions.events,
        includeTestRuns: webhookSubscriptions.includeTestRuns,
        createdAt: webhookSubscriptions.createdAt,
      })
      .from(webhookSubscriptions)
      .where(and(eq(webhookSubscriptions.org, event.org), eq(webhookSubscriptions.state, "active")));
    const groups = new Map(
      (
        await db
          .select({ group: groupEmails.groupId, address: groupEmails.address })
          .from(groupEmails)
          .where(eq(groupEmails.org, event.org))
      ).map((g) => [g.group, g.address]),
    );
    const planned = planDeliveries(
      event,
      known,
      subscriptions.map((s) => ({ ...s, createdAt: s.createdAt.getTime() })),
      groups,
      mail,
      publicUrl,
    );
    const now = new Date(clock.now());
    const data = webhookData(event, known, publicUrl);
    return db.transaction(async (tx) => {
      const inserted = await tx
        .insert(notificationEvents)
        .values({
          eventId: event.id,
          org: event.org,
          type: event.type,
          runId: event.runId,
          mode: event.mode,
          at: new Date(event.at),
          data,
          receivedAt: now,
        })
        .onConflictDoNothing()
        .returning({ id: notificationEvents.eventId });
      // Another reader got there first (it waited on the key until that one committed).
      if (inserted.length === 0) return { outcome: "seen" } as const;
      if (planned.length > 0) {
        await tx
          .insert(notificationDeliveries)
          .values(
            planned.map((p) => ({
              eventId: event.id,
              destination: p.destination,
              org: event.org,
              channel: p.channel,
              subscriptionId: p.subscriptionId,
              address: p.address,
              runId: event.runId,
              type: event.type,
              state: p.state,
              attempts: 0,
              nextAttemptAt: p.state === "pending" ? now : null,
              giveUpAt: new Date(now.getTime() + giveUpMs),
              message: p.message,
              reason: p.reason,
              createdAt: now,
            })),
          )
          .onConflictDoNothing();
      }
      return { outcome: "new", pending: planned.filter((p) => p.state === "pending").length } as const;
    });
  };
}
