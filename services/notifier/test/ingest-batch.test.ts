import { randomBytes } from "node:crypto";
import { ManualClock } from "@baton/clock";
import {
  connectPostgres,
  type Database,
  groupEmails,
  processVersions,
  rowsOf,
  runs,
  webhookSubscriptions,
} from "@baton/db";
import { silentLogger } from "@baton/kit";
import { sql } from "drizzle-orm";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { POSTGRES_URL } from "../../../test/support/deploy.ts";
import { createIngest, type Ingest } from "../src/ingest.ts";
import type { DomainEventMessage } from "../src/payload.ts";

/**
 * Reading domain events in batches (issue #15, keeping issue #11's rules), over this machine's real
 * PostgreSQL, one fresh database per case: a batch records exactly the rows that reading its events
 * one by one records (two organizations with their own subscriptions and group addresses, an event
 * already recorded, the same event twice, a test run — §3 test mode, a type nobody hears of, a run
 * not found); two readers recording the same batch at the same moment create one delivery per
 * (event, destination) between them; and a batch costs the same number of statements whatever its size.
 */

const T0 = Date.parse("2026-10-06T09:00:00Z");
const HOUR = 3_600_000;
const MAIL = { enabled: true, operatorsEmail: "operators@example.com", operatorGroup: "operators" };

/** Statements sent to PostgreSQL by this process's clients, per database (every `query`, `begin` and `commit` included). */
const statements = new Map<string, number>();
/**
 * Commits per database, as PostgreSQL counts them (`xact_commit`): each `commit`, and each statement
 * sent outside a transaction (it commits alone).
 */
const commits = new Map<string, number>();
const inTransaction = new WeakSet<pg.Client>();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  const name = (this as unknown as { connectionParameters: { database: string } }).connectionParameters
    .database;
  statements.set(name, (statements.get(name) ?? 0) + 1);
  const first = args[0] as string | { text?: string } | undefined;
  const text = (typeof first === "string" ? first : (first?.text ?? "")).trim().toLowerCase();
  if (text.startsWith("begin")) inTransaction.add(this);
  else if (text.startsWith("commit") || text.startsWith("rollback")) {
    inTransaction.delete(this);
    if (text.startsWith("commit")) commits.set(name, (commits.get(name) ?? 0) + 1);
  } else if (!inTransaction.has(this)) commits.set(name, (commits.get(name) ?? 0) + 1);
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const opened: { name: string; database: Database }[] = [];

/** A new, migrated database holding two organizations' runs, versions, subscriptions and group addresses. */
async function seeded(): Promise<{ name: string; db: Database["db"] }> {
  const name = `baton_test_ingest_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const database = await connectPostgres(POSTGRES_URL.replace(/\/[^/]*$/, `/${name}`), { max: 4 });
  opened.push({ name, database });
  const { db } = database;
  const definition = {
    steps: [
      { id: "write", kind: "task", instructions: "Write the summary." },
      { id: "approve", kind: "approve", instructions: "Approve it." },
    ],
  };
  for (const org of ["acme", "globex"])
    await db.insert(processVersions).values({
      org,
      name: "report",
      version: 1,
      contentHash: "h",
      source: "---",
      definition,
      bindings: {},
      publishedBy: "ops@example.com",
      publishedAt: new Date(T0 - HOUR),
    });
  const run = (id: string, org: string, mode: "live" | "test") => ({
    id,
    org,
    process: "report",
    version: 1,
    mode,
    state: "running",
    startedAt: new Date(T0),
    updatedAt: new Date(T0),
    inputs: {},
    snapshot: "s",
    rev: 1,
    partition: 0,
    doc: { steps: { write: { dueAt: T0 + HOUR } } },
  });
  await db
    .insert(runs)
    .values([
      run("r_acme", "acme", "live"),
      run("r_globex", "globex", "live"),
      run("r_test", "acme", "test"),
    ]);
  const sub = (id: string, org: string, extra: Partial<typeof webhookSubscriptions.$inferInsert> = {}) => ({
    id,
    org,
    url: `https://hooks.example.com/${id}`,
    events: null,
    includeTestRuns: false,
    secret: "whsec_x",
    state: "active",
    createdBy: "ops@example.com",
    createdAt: new Date(T0 - HOUR),
    ...extra,
  });
  await db.insert(webhookSubscriptions).values([
    sub("wh_acme_all", "acme"),
    sub("wh_acme_ended", "acme", { events: ["run.ended"], includeTestRuns: true }),
    sub("wh_acme_off", "acme", { state: "disabled" }),
    // Made after the events happened: it hears none of them.
    sub("wh_acme_late", "acme", { createdAt: new Date(T0 + HOUR) }),
    sub("wh_globex_items", "globex", { events: ["work_item.opened"] }),
  ]);
  const group = (org: string, address: string) => ({
    org,
    groupId: "managers",
    address,
    updatedBy: "ops@example.com",
    updatedAt: new Date(T0 - HOUR),
  });
  await db
    .insert(groupEmails)
    .values([group("acme", "managers@acme.example"), group("globex", "managers@globex.example")]);
  return { name, db };
}

const ingestOver = (db: Database["db"]): Ingest =>
  createIngest({
    db,
    clock: new ManualClock(T0 + 1_000),
    log: silentLogger,
    publicUrl: "http://baton.test",
    mail: MAIL,
    giveUpMs: 24 * HOUR,
  });

const event = (
  id: number,
  type: string,
  org: string,
  runId: string,
  extra: Partial<DomainEventMessage> = {},
): DomainEventMessage => ({ id, type, org, runId, mode: "live", at: T0 + id, ...extra });

const ALREADY = event(1, "run.started", "acme", "r_acme");
const OPENED = event(3, "work_item.opened", "acme", "r_acme", {
  stepId: "write",
  detail: { workItemId: "wi_1", assignedTo: { group: "managers" } },
});
/** The batch: its events in the order read. */
const BATCH: DomainEventMessage[] = [
  ALREADY,
  event(2, "step.ready", "acme", "r_acme", { stepId: "write" }),
  OPENED,
  event(4, "work_item.opened", "globex", "r_globex", {
    stepId: "write",
    detail: { workItemId: "wi_2", assignedTo: { group: "managers" } },
  }),
  OPENED,
  event(5, "step.overdue", "globex", "r_globex", {
    stepId: "write",
    detail: { workItemId: "wi_2", assignedTo: { person: "pat@globex.example" }, due: T0 + HOUR },
  }),
  event(6, "run.ended", "acme", "r_test", { mode: "test", detail: { state: "completed", outcome: "ok" } }),
  event(7, "step.checked", "acme", "r_acme", { stepId: "write" }),
  event(8, "run.started", "globex", "r_gone"),
];

/** Every recorded event and delivery (deliveries without their serial id), in a fixed order. */
async function recorded(db: Database["db"]) {
  const events = rowsOf(await db.execute(sql`select * from notification_events order by event_id`));
  const deliveries = rowsOf<Record<string, unknown>>(
    await db.execute(sql`select * from notification_deliveries order by event_id, destination`),
  ).map(({ id: _id, ...row }) => row);
  return { events, deliveries };
}

afterAll(async () => {
  pg.Client.prototype.query = query;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  for (const { name, database } of opened) {
    await database.close();
    await admin.query(`drop database if exists ${name} with (force)`);
  }
  await admin.end();
});

describe("the notifier reads domain events in batches (issue #15; issue #11's one delivery per pair)", () => {
  it("records a batch exactly as reading its events one by one records them", async () => {
    const batched = await seeded();
    const single = await seeded();
    const batch = ingestOver(batched.db);
    const one = ingestOver(single.db);
    expect(await batch([ALREADY])).toEqual([{ outcome: "new", pending: 1 }]);
    expect(await one([ALREADY])).toEqual([{ outcome: "new", pending: 1 }]);

    const outcomes = await batch(BATCH);
    const oneByOne = [];
    for (const e of BATCH) oneByOne.push(...(await one([e])));
    expect(outcomes).toEqual(oneByOne);
    expect(outcomes.map((o) => o.outcome)).toEqual([
      "seen",
      "new",
      "new",
      "new",
      "seen",
      "new",
      "new",
      "ignored",
      "ignored",
    ]);

    const got = await recorded(batched.db);
    expect(got).toEqual(await recorded(single.db));
    expect(got.events.map((e) => Number((e as { event_id: unknown }).event_id))).toEqual([1, 2, 3, 4, 5, 6]);
    // Each organization's own subscriptions and group addresses; a test run's deliveries suppressed
    // except to a subscription that includes test runs (§3 test mode); nobody hears of step.checked,
    // nor of globex's run.started (its one subscription wants work items only, and run.started is
    // never mailed), so neither is recorded.
    expect(got.deliveries.map((d) => [Number(d.event_id), d.destination, d.state])).toEqual([
      [1, "webhook:wh_acme_all", "pending"],
      [2, "webhook:wh_acme_all", "pending"],
      [3, "mail:managers@acme.example", "pending"],
      [3, "webhook:wh_acme_all", "pending"],
      [4, "mail:managers@globex.example", "pending"],
      [4, "webhook:wh_globex_items", "pending"],
      [5, "mail:operators@example.com", "pending"],
      [5, "mail:pat@globex.example", "pending"],
      [6, "webhook:wh_acme_all", "suppressed"],
      [6, "webhook:wh_acme_ended", "pending"],
    ]);
    // The facts came from PostgreSQL: the step's words and its due time.
    const e4 = got.events.find((e) => Number((e as { event_id: unknown }).event_id) === 4) as {
      data: Record<string, unknown>;
    };
    expect(e4.data).toMatchObject({ org: "globex", runId: "r_globex", process: "report", version: 1 });
  });

  it("two readers recording the same events at the same moment create one delivery per (event, destination)", async () => {
    const both = await seeded();
    const [a, b] = await Promise.all([ingestOver(both.db)(BATCH), ingestOver(both.db)([...BATCH].reverse())]);
    const reader = new Map<number, string[]>();
    for (const [list, events] of [
      [a, BATCH],
      [b, [...BATCH].reverse()],
    ] as const)
      list.forEach((o, i) => {
        const id = (events[i] as DomainEventMessage).id;
        if (o.outcome === "new") reader.set(id, [...(reader.get(id) ?? []), "new"]);
      });
    // Every notified event was new to exactly one of the two.
    expect([...reader.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6]);
    for (const list of reader.values()) expect(list).toEqual(["new"]);

    const once = await seeded();
    await ingestOver(once.db)(BATCH);
    expect(await recorded(both.db)).toEqual(await recorded(once.db));
  });

  it("a batch costs the same statements whatever its size, and one commit: four reads and two inserts in one transaction; a batch nobody hears of, two reads", async () => {
    const { name, db } = await seeded();
    const ingest = ingestOver(db);
    const cost = async (events: DomainEventMessage[]) => {
      const before = statements.get(name) ?? 0;
      const committed = commits.get(name) ?? 0;
      const outcomes = await ingest(events);
      expect(outcomes.every((o) => o.outcome === "new")).toBe(true);
      expect((commits.get(name) ?? 0) - committed).toBe(1);
      return (statements.get(name) ?? 0) - before;
    };
    let next = 100;
    const batchOf = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        i % 2 === 0
          ? event(
              next++,
              "work_item.opened",
              i % 4 === 0 ? "acme" : "globex",
              i % 4 === 0 ? "r_acme" : "r_globex",
              {
                stepId: "write",
                detail: { workItemId: `wi_${next}`, assignedTo: { group: "managers" } },
              },
            )
          : event(next++, "step.ready", "acme", "r_test", { mode: "test", stepId: "approve" }),
      );
    // begin; subscriptions, group addresses, seen, facts; the events, their deliveries; commit.
    const costs = [
      await cost(batchOf(1)),
      await cost(batchOf(2)),
      await cost(batchOf(20)),
      await cost(batchOf(200)),
    ];
    expect(costs).toEqual([8, 8, 8, 8]);
    // A batch of events read before costs three reads in one transaction; one of types nobody hears
    // of, nothing; one of events nobody hears of, the reads of who could hear, in one read-only
    // transaction, and nothing recorded.
    expect(await cost([ALREADY])).toBe(8);
    let before = statements.get(name) ?? 0;
    let committed = commits.get(name) ?? 0;
    expect((await ingest([ALREADY, ALREADY])).map((o) => o.outcome)).toEqual(["seen", "seen"]);
    expect((await ingest([event(99, "step.checked", "acme", "r_acme")])).map((o) => o.outcome)).toEqual([
      "ignored",
    ]);
    expect((statements.get(name) ?? 0) - before).toBe(5);
    expect((commits.get(name) ?? 0) - committed).toBe(1);
    const unheard = [
      event(97, "run.started", "globex", "r_globex"),
      event(98, "step.ready", "globex", "r_globex"),
    ];
    const eventsBefore = (await recorded(db)).events.length;
    before = statements.get(name) ?? 0;
    committed = commits.get(name) ?? 0;
    expect((await ingest([...unheard, ...unheard])).map((o) => o.outcome)).toEqual([
      "ignored",
      "ignored",
      "ignored",
      "ignored",
    ]);
    expect((statements.get(name) ?? 0) - before).toBe(4);
    expect((commits.get(name) ?? 0) - committed).toBe(1);
    expect((await recorded(db)).events).toHaveLength(eventsBefore);
    const { deliveries } = await recorded(db);
    // Every event new to its batch has its deliveries.
    expect(new Set(deliveries.map((d) => Number(d.event_id))).size).toBe(1 + 2 + 20 + 200 + 1);
  });
});
