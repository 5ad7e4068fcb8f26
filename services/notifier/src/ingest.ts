// Reading domain events in batches: their facts from PostgreSQL, their deliveries created once (issues #11, #15).
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
import { and, eq, inArray, sql } from "drizzle-orm";
import { type DomainEventMessage, type RunFacts, webhookData } from "./payload.ts";
import {
  isNotified,
  type MailPlan,
  type PlannedDelivery,
  planDeliveries,
  type SubscriptionTarget,
} from "./plan.ts";

/** A transaction of {@link Db}: every read and write of one batch runs in one. */
type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];

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

/**
 * What became of one event: its deliveries were created now, it had been read before, or nobody hears
 * of it (its type is not one the notifier delivers, or no subscription and no mail address wants it:
 * then it is not recorded).
 */
export type Ingested = { outcome: "new"; pending: number } | { outcome: "seen" } | { outcome: "ignored" };

/**
 * Reads a batch of events and answers what became of each, in the batch's order. Resolves once every
 * new event of the batch and its deliveries are committed; throws when the database fails, and then
 * nothing of the batch is recorded (the caller reads it all again later).
 */
export type Ingest = (events: readonly DomainEventMessage[]) => Promise<Ingested[]>;

/**
 * Rows per multi-row insert: PostgreSQL takes at most 65,535 parameters in one statement, and a
 * delivery row has 15. A batch whose deliveries need more rows than this takes one more statement
 * per chunk (many subscriptions); the usual batch is one statement per table.
 */
const ROWS_PER_INSERT = 2_000;

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

/** The key of one facts lookup: events of one run and step share their facts. */
const factsKey = (e: DomainEventMessage) => JSON.stringify([e.org, e.runId, e.stepId ?? ""]);

const NO_FACTS: RunFacts = { process: "", version: 0, step: null, dueAt: null };

/**
 * Builds the function that reads a batch of events (issue #15: a constant number of statements per
 * batch, whatever its size). It is idempotent on each event's id (its outbox row): the new events'
 * rows and their deliveries are inserted in one transaction, and a second read of an event —
 * JetStream redelivering it, another replica reading it at the same moment, the outbox read again
 * after a crash, the same event twice in one batch — inserts nothing (issue #11: one delivery per
 * (event, destination), whatever NATS does). The run's process, version and step, and the step's
 * due time, come from PostgreSQL (read after the run's commit: the event exists only once the engine
 * committed it); the event itself carries ids only.
 *
 * Per batch, one transaction (one PostgreSQL commit): one read of the active webhook subscriptions
 * and, when mail is enabled, one of the group addresses of the batch's organizations; an event that
 * none of them wants (nor, for mail, its assignee or the operators) is left there, unrecorded, and a
 * batch of only such events ends with that read-only transaction. For the others: one read of the ids
 * already recorded, one read of the facts of every (run, step), then the event rows (`on conflict do
 * nothing returning`, in id order so two replicas inserting overlapping batches take the keys in one
 * order and never deadlock) and the deliveries of only the events this transaction inserted. A
 * replica that inserts an event another is inserting waits on its key until that one commits, then
 * inserts nothing for it. Not recording an event nobody hears of loses nothing: reading it again
 * finds the same nobody (a subscription hears only of what happens after it is made).
 */
export function createIngest(deps: IngestDeps): Ingest {
  const { db, clock, publicUrl, mail, giveUpMs } = deps;

  /** The facts of every distinct (org, run, step) of `events`, by {@link factsKey}; a run not found has none. */
  async function facts(q: Tx, events: readonly DomainEventMessage[]): Promise<Map<string, RunFacts>> {
    const keys = [...new Set(events.map(factsKey))];
    const wanted = keys.map((key, k) => {
      const [org, runId, stepId] = JSON.parse(key) as [string, string, string];
      return { k, org, run_id: runId, step: stepId };
    });
    const result = await q.execute(sql`
      select q.k, r.process, r.version,
        (r.doc->'steps'->(q.step)->>'dueAt')::bigint as due_at,
        (select s from jsonb_array_elements(v.definition->'steps') s where s->>'id' = q.step limit 1) as step
      from jsonb_to_recordset(${JSON.stringify(wanted)}::jsonb) as q(k int, org text, run_id text, step text)
      join runs r on r.id = q.run_id and r.org = q.org
      left join process_versions v on v.org = r.org and v.name = r.process and v.version = r.version`);
    const found = new Map<string, RunFacts>();
    for (const row of rowsOf<{
      k: number;
      process: string;
      version: number;
      due_at: string | number | null;
      step: { kind?: string; instructions?: string } | null;
    }>(result)) {
      const key = keys[Number(row.k)] as string;
      const named = (JSON.parse(key) as [string, string, string])[2] !== "";
      found.set(key, {
        process: row.process,
        version: Number(row.version),
        step:
          named && row.step
            ? { kind: String(row.step.kind ?? ""), instructions: row.step.instructions ?? null }
            : null,
        dueAt: row.due_at === null || row.due_at === undefined ? null : Number(row.due_at),
      });
    }
    return found;
  }

  /**
   * The active subscriptions and the group addresses of each of `orgs`; group addresses only when mail
   * is enabled (they are only ever mailed).
   */
  async function targets(
    q: Tx,
    orgs: readonly string[],
  ): Promise<{
    subscriptions: Map<string, SubscriptionTarget[]>;
    groups: Map<string, Map<string, string>>;
  }> {
    const subscriptions = new Map<string, SubscriptionTarget[]>(orgs.map((o) => [o, []]));
    const groups = new Map<string, Map<string, string>>(orgs.map((o) => [o, new Map()]));
    const subs = await q
      .select({
        org: webhookSubscriptions.org,
        id: webhookSubscriptions.id,
        events: webhookSubscriptions.events,
        includeTestRuns: webhookSubscriptions.includeTestRuns,
        createdAt: webhookSubscriptions.createdAt,
      })
      .from(webhookSubscriptions)
      .where(and(inArray(webhookSubscriptions.org, [...orgs]), eq(webhookSubscriptions.state, "active")));
    for (const { org, createdAt, ...s } of subs)
      subscriptions.get(org)?.push({ ...s, createdAt: createdAt.getTime() });
    if (!mail.enabled) return { subscriptions, groups };
    const addresses = await q
      .select({ org: groupEmails.org, group: groupEmails.groupId, address: groupEmails.address })
      .from(groupEmails)
      .where(inArray(groupEmails.org, [...orgs]));
    for (const g of addresses) groups.get(g.org)?.set(g.group, g.address);
    return { subscriptions, groups };
  }

  return async function ingest(events) {
    const outcomes: Ingested[] = events.map(() => ({ outcome: "ignored" }));
    // The first occurrence of each notified event id; a later copy in the same batch was read already.
    const first = new Map<number, number>();
    // The later copies of each event id in this batch, by id.
    const copies = new Map<number, number[]>();
    events.forEach((event, i) => {
      if (!isNotified(event.type)) return;
      if (first.has(event.id)) {
        outcomes[i] = { outcome: "seen" };
        copies.set(event.id, [...(copies.get(event.id) ?? []), i]);
      } else first.set(event.id, i);
    });
    if (first.size === 0) return outcomes;
    // Reads and writes share one transaction: one PostgreSQL commit per batch (issue #15), and what
    // was read as not yet recorded is decided again by the inserts' keys below.
    const planned = new Map<number, { facts: RunFacts; deliveries: PlannedDelivery[] }>();
    const inserted = await db.transaction(async (tx) => {
      // Who hears of each event comes first: most events of most deployments reach nobody (no
      // subscription wants them, no mail is sent), and such an event is neither read further nor
      // recorded; a batch of them is one read-only transaction (issue #15). Which destinations an
      // event has never depends on its facts, only their content does (see `planDeliveries`).
      const { subscriptions, groups } = await targets(tx, [
        ...new Set([...first.values()].map((i) => (events[i] as DomainEventMessage).org)),
      ]);
      for (const [id, i] of first) {
        const event = events[i] as DomainEventMessage;
        const heard = planDeliveries(
          event,
          NO_FACTS,
          subscriptions.get(event.org) ?? [],
          groups.get(event.org) ?? new Map(),
          mail,
          publicUrl,
        );
        if (heard.length > 0) continue;
        // Read one by one, every copy would be ignored alike.
        for (const copy of copies.get(id) ?? []) outcomes[copy] = { outcome: "ignored" };
        first.delete(id);
      }
      if (first.size === 0) return new Set<number>();
      const seen = await tx
        .select({ id: notificationEvents.eventId })
        .from(notificationEvents)
        .where(inArray(notificationEvents.eventId, [...first.keys()]));
      for (const { id } of seen) {
        outcomes[first.get(id) as number] = { outcome: "seen" };
        first.delete(id);
      }
      if (first.size === 0) return new Set<number>();
      const fresh = [...first.values()]
        .map((i) => events[i] as DomainEventMessage)
        .sort((a, b) => a.id - b.id);
      const known = await facts(tx, fresh);
      const now = new Date(clock.now());
      for (const event of fresh) {
        const f = known.get(factsKey(event)) ?? NO_FACTS;
        planned.set(event.id, {
          facts: f,
          deliveries: planDeliveries(
            event,
            f,
            subscriptions.get(event.org) ?? [],
            groups.get(event.org) ?? new Map(),
            mail,
            publicUrl,
          ),
        });
      }
      const ids = new Set<number>();
      for (const chunk of chunks(fresh, ROWS_PER_INSERT)) {
        const rows = await tx
          .insert(notificationEvents)
          .values(
            chunk.map((event) => ({
              eventId: event.id,
              org: event.org,
              type: event.type,
              runId: event.runId,
              mode: event.mode,
              at: new Date(event.at),
              data: webhookData(event, planned.get(event.id)?.facts ?? NO_FACTS, publicUrl),
              receivedAt: now,
            })),
          )
          .onConflictDoNothing()
          .returning({ id: notificationEvents.eventId });
        for (const { id } of rows) ids.add(id);
      }
      // An event not inserted here was inserted by another reader first (this one waited on its
      // key until that one committed): its deliveries are that reader's.
      const deliveries = fresh
        .filter((event) => ids.has(event.id))
        .flatMap((event) =>
          (planned.get(event.id)?.deliveries ?? []).map((p) => ({
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
        );
      for (const chunk of chunks(deliveries, ROWS_PER_INSERT))
        await tx.insert(notificationDeliveries).values(chunk).onConflictDoNothing();
      return ids;
    });
    // What is left in `first` was not recorded before this batch: new, unless another reader won its key.
    for (const [id, i] of first) {
      outcomes[i] = inserted.has(id)
        ? {
            outcome: "new",
            pending: (planned.get(id)?.deliveries ?? []).filter((p) => p.state === "pending").length,
          }
        : { outcome: "seen" };
    }
    return outcomes;
  };
}
