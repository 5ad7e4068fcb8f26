import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";

/**
 * Baton's tables (ARCHITECTURE: PostgreSQL is the truth). Every row belongs to an organization; every
 * query filters by `org`. Times are `timestamptz` with millisecond precision, always written from the
 * injected clock, never from `now()`, so a manual clock moves everything together.
 */

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date", precision: 3 });

/** An imported PROCESS.md awaiting role bindings and publication (§7). */
export const drafts = pgTable(
  "drafts",
  {
    id: text("id").primaryKey(),
    org: text("org").notNull(),
    name: text("name").notNull(),
    folderName: text("folder_name"),
    source: text("source").notNull(),
    bindings: jsonb("bindings").$type<Record<string, string>>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("drafts_org_name").on(t.org, t.name)],
);

/** A published, immutable version (§6 rule 5). */
export const processVersions = pgTable(
  "process_versions",
  {
    org: text("org").notNull(),
    name: text("name").notNull(),
    version: integer("version").notNull(),
    contentHash: text("content_hash").notNull(),
    source: text("source").notNull(),
    /** The parsed process (`@baton/process` `Process`), so no service parses on the hot path. */
    definition: jsonb("definition").notNull(),
    bindings: jsonb("bindings").$type<Record<string, string>>().notNull(),
    publishedBy: text("published_by").notNull(),
    publishedAt: ts("published_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.org, t.name, t.version] })],
);

/** One row per run: the state document fenced by `rev`, plus the columns cross-run reads filter on. */
export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    org: text("org").notNull(),
    process: text("process").notNull(),
    version: integer("version").notNull(),
    mode: text("mode").notNull(),
    state: text("state").notNull(),
    outcome: text("outcome"),
    startedAt: ts("started_at").notNull(),
    updatedAt: ts("updated_at").notNull(),
    inputs: jsonb("inputs").$type<Record<string, unknown>>().notNull(),
    snapshot: text("snapshot").notNull(),
    rev: integer("rev").notNull(),
    partition: integer("partition").notNull(),
    /** The engine's `Run` document (`@baton/engine`). */
    doc: jsonb("doc").notNull(),
  },
  (t) => [
    index("runs_org_started").on(t.org, t.startedAt, t.id),
    index("runs_org_process_started").on(t.org, t.process, t.startedAt, t.id),
  ],
);

/** The append-only record (ARCHITECTURE rule 6): one row per committed transition. */
export const runJournal = pgTable(
  "run_journal",
  {
    runId: text("run_id").notNull(),
    rev: integer("rev").notNull(),
    org: text("org").notNull(),
    at: ts("at").notNull(),
    actor: text("actor").notNull(),
    actorKind: text("actor_kind").notNull(),
    command: text("command").notNull(),
    requestId: text("request_id"),
    process: text("process").notNull(),
    version: integer("version").notNull(),
    contentHash: text("content_hash").notNull(),
    /** The command's arguments (tokens reduced to claim ids) and the domain events it caused. */
    detail: jsonb("detail").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.rev] })],
);

/** Idempotency records (§4): scope is the organization; a failed call is never recorded. */
export const idempotency = pgTable(
  "idempotency",
  {
    org: text("org").notNull(),
    requestId: text("request_id").notNull(),
    tool: text("tool").notNull(),
    /** SHA-256 over the canonical tool name, arguments and caller. */
    fingerprint: text("fingerprint").notNull(),
    result: jsonb("result").notNull(),
    createdAt: ts("created_at").notNull(),
  },
  // created_at: the retention window's prune (issue #13) deletes the oldest records in batches.
  (t) => [primaryKey({ columns: [t.org, t.requestId] }), index("idempotency_created_at").on(t.createdAt)],
);

/** Index of agent steps that are ready or claimed (a claimed row reappears when its lease ends). */
export const readySteps = pgTable(
  "ready_steps",
  {
    runId: text("run_id").notNull(),
    stepId: text("step_id").notNull(),
    org: text("org").notNull(),
    process: text("process").notNull(),
    version: integer("version").notNull(),
    mode: text("mode").notNull(),
    readySince: ts("ready_since").notNull(),
    dueAt: ts("due_at"),
    leaseExpiresAt: ts("lease_expires_at"),
    /** The live claim's last progress note, handed over if the lease ends (§3.3). */
    progress: text("progress"),
    handoff: jsonb("handoff"),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.stepId] }),
    index("ready_steps_org_order").on(t.org, t.readySince, t.runId, t.stepId),
  ],
);

/** Index of open work items (§3.4), for a person's `get_work`. */
export const workItems = pgTable(
  "work_items",
  {
    runId: text("run_id").notNull(),
    workItemId: text("work_item_id").notNull(),
    org: text("org").notNull(),
    process: text("process").notNull(),
    version: integer("version").notNull(),
    mode: text("mode").notNull(),
    groupId: text("group_id"),
    person: text("person"),
    createdAt: ts("created_at").notNull(),
    /** The work item shape without its snapshot (filled from `runs.snapshot` at read time). */
    item: jsonb("item").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.workItemId] }),
    index("work_items_org_group").on(t.org, t.groupId, t.createdAt),
    index("work_items_org_person").on(t.org, t.person, t.createdAt),
  ],
);

/**
 * Durable timers (issue #5): kept equal to the run's pending timers in the transition's commit, so the
 * engine alone inserts and deletes rows. The scheduler only claims a due row (`claimedUntil`,
 * `claimToken`) for the moment it takes to deliver a `tick` to the run's partition; the claim is a
 * short lease, not a row lock, because the engine's commit deletes the very row while the tick runs.
 */
export const timers = pgTable(
  "timers",
  {
    runId: text("run_id").notNull(),
    kind: text("kind").notNull(),
    stepId: text("step_id").notNull(),
    org: text("org").notNull(),
    /**
     * The run's partition under the P of the engine that wrote the row. Diagnostics only: the
     * scheduler routes a tick by `partitionOf(runId, P)` under its own configured P, so rows written
     * before `BATON_PARTITIONS` changed are still delivered.
     */
    partition: integer("partition").notNull(),
    /** When the timer is due, on the injected clock (ARCHITECTURE rule 7). */
    fireAt: ts("fire_at").notNull(),
    /**
     * Until when a scheduler replica holds the row, on PostgreSQL's clock (`clock_timestamp()`): a
     * claim is an operational lease between processes, so it must expire even while a manual clock
     * stands still, and every replica must measure it by the same clock whatever its host's says.
     * Null when free.
     */
    claimedUntil: ts("claimed_until"),
    /** Which take claimed the row, so a replica releases only its own claims. */
    claimToken: text("claim_token"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.kind, t.stepId] }), index("timers_fire_at").on(t.fireAt)],
);

/** Domain events written in the transition's commit, relayed to JetStream `events.>` (ARCHITECTURE). */
export const outbox = pgTable(
  "outbox",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    org: text("org").notNull(),
    subject: text("subject").notNull(),
    payload: jsonb("payload").notNull(),
    createdAt: ts("created_at").notNull(),
    publishedAt: ts("published_at"),
  },
  (t) => [index("outbox_unpublished").on(t.id).where(sql`${t.publishedAt} is null`)],
);

/** Uploaded files' metadata (§5); bytes live in the blob store, content-addressed per organization. */
export const files = pgTable(
  "files",
  {
    org: text("org").notNull(),
    id: text("id").notNull(),
    sha256: text("sha256").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    contentType: text("content_type").notNull(),
    fileName: text("file_name").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: ts("created_at").notNull(),
    /**
     * The stored object's ETag (no quotes), recorded only after it was shown to equal the MD5 of the
     * uploaded bytes: acceptance then verifies the object by one HEAD. Null (local disk, a store whose
     * ETags are not MD5s): acceptance hashes the bytes (§5).
     */
    etag: text("etag"),
  },
  (t) => [primaryKey({ columns: [t.org, t.id] }), index("files_object").on(t.org, t.sha256)],
);

/**
 * An upload about to write `<org>/<sha256>` to the blob store, written before the PUT and removed
 * when the file is recorded (or the PUT failed). `baton evidence gc` deletes an object only when no
 * file names it and no intent for it is younger than the age it was given, under the same advisory
 * lock an intent is written under, so it never deletes bytes a concurrent upload relies on.
 */
export const uploadIntents = pgTable(
  "upload_intents",
  {
    id: text("id").primaryKey(),
    org: text("org").notNull(),
    sha256: text("sha256").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    createdAt: ts("created_at").notNull(),
  },
  (t) => [index("upload_intents_object").on(t.org, t.sha256, t.createdAt)],
);

/** Server-wide settings that must survive restarts (the embedded server's secrets, the manual clock). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: jsonb("value").notNull(),
});

/**
 * Webhook subscriptions (issue #11): one organization's receiver, the domain event types it wants
 * (`null`: all) and its own signing secret (Standard Webhooks `whsec_…`, never returned after creation).
 * `state`: `active`, `disabled` (the receiver answered 410 Gone) or `removed` (kept for the deliveries'
 * history, secret wiped).
 */
export const webhookSubscriptions = pgTable(
  "webhook_subscriptions",
  {
    id: text("id").primaryKey(),
    org: text("org").notNull(),
    url: text("url").notNull(),
    events: jsonb("events").$type<string[] | null>(),
    includeTestRuns: boolean("include_test_runs").notNull(),
    secret: text("secret").notNull(),
    state: text("state").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: ts("created_at").notNull(),
    /** When it was disabled or removed, on the injected clock. */
    endedAt: ts("ended_at"),
  },
  (t) => [index("webhook_subscriptions_org").on(t.org, t.createdAt)],
);

/** A group's mailing address (issue #11 `baton group email`); a group without one gets no mail. */
export const groupEmails = pgTable(
  "group_emails",
  {
    org: text("org").notNull(),
    groupId: text("group_id").notNull(),
    address: text("address").notNull(),
    updatedBy: text("updated_by").notNull(),
    updatedAt: ts("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.org, t.groupId] })],
);

/**
 * Domain events the notifier has fanned out, one row per outbox id (issue #11): the first replica to
 * insert it creates the event's deliveries; a redelivered or replayed event finds it and creates
 * nothing. `data` is the webhook payload's `data`, built once so every attempt sends the same bytes.
 */
export const notificationEvents = pgTable(
  "notification_events",
  {
    eventId: bigint("event_id", { mode: "number" }).primaryKey(),
    org: text("org").notNull(),
    type: text("type").notNull(),
    runId: text("run_id").notNull(),
    mode: text("mode").notNull(),
    /** The event's time, on the injected clock. */
    at: ts("at").notNull(),
    data: jsonb("data").$type<Record<string, unknown>>().notNull(),
    receivedAt: ts("received_at").notNull(),
  },
  (t) => [index("notification_events_run").on(t.org, t.runId)],
);

/**
 * One delivery per (event, destination) whatever the bus does (issue #11). `destination` is
 * `webhook:<subscription id>` or `mail:<address>`. `state`: `pending` (to send at `next_attempt_at`,
 * injected clock), `delivered`, `dead` (gave up, or the subscription went away; an operator may send
 * it again), `suppressed` (a test run: recorded, never sent, §3 test mode) or `cancelled` (its
 * subscription was removed). `held_until`/`hold_token` are a replica's hold while it sends, measured
 * by PostgreSQL's clock like the scheduler's timer holds.
 */
export const notificationDeliveries = pgTable(
  "notification_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    eventId: bigint("event_id", { mode: "number" }).notNull(),
    destination: text("destination").notNull(),
    org: text("org").notNull(),
    channel: text("channel").notNull(),
    subscriptionId: text("subscription_id"),
    address: text("address"),
    runId: text("run_id").notNull(),
    type: text("type").notNull(),
    state: text("state").notNull(),
    /** Attempts made so far. */
    attempts: integer("attempts").notNull(),
    nextAttemptAt: ts("next_attempt_at"),
    /** When retrying stops (`dead`), on the injected clock. */
    giveUpAt: ts("give_up_at").notNull(),
    heldUntil: ts("held_until"),
    holdToken: text("hold_token"),
    /** A mail's rendered message (`{ to, subject, text }`); null for a webhook. */
    message: jsonb("message").$type<{ to: string; subject: string; text: string } | null>(),
    /** Why it is suppressed or dead, in words. */
    reason: text("reason"),
    createdAt: ts("created_at").notNull(),
    deliveredAt: ts("delivered_at"),
  },
  (t) => [
    uniqueIndex("notification_deliveries_pair").on(t.eventId, t.destination),
    index("notification_deliveries_due").on(t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    index("notification_deliveries_subscription").on(t.subscriptionId, t.id),
    index("notification_deliveries_run").on(t.org, t.runId, t.id),
  ],
);

/** Every attempt of a delivery (issue #11 `baton webhook deliveries`): time, outcome, response code, next retry. */
export const notificationAttempts = pgTable(
  "notification_attempts",
  {
    deliveryId: bigint("delivery_id", { mode: "number" }).notNull(),
    n: integer("n").notNull(),
    /** When it was made, on the injected clock. */
    at: ts("at").notNull(),
    /** `ok`, `failed`, `gone` (410), `refused` (the target resolved to a forbidden address). */
    status: text("status").notNull(),
    /** The HTTP status, or the SMTP reply code; null when no answer came. */
    responseCode: integer("response_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    /** When the next attempt is due (injected clock); null when none follows. */
    nextRetryAt: ts("next_retry_at"),
    replica: text("replica").notNull(),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.n] })],
);
