// The subject catalog: every service call, who serves it, and the schema of its request and reply.
import {
  type AgentWorkItem,
  CancelArgs,
  type CheckReport,
  CheckReportQuery,
  ClaimArgs,
  type ClaimResult,
  DecideArgs,
  type DeliveryList,
  type DeliveryView,
  type DraftView,
  EscalateArgs,
  FileCheck,
  FileMeta,
  GetRunArgs,
  GetWorkArgs,
  type GroupEmail,
  type JournalPage,
  JournalQuery,
  ListProcessesArgs,
  ListRunsArgs,
  NotifierCall,
  type Page,
  type PersonWorkItem,
  type ProcessSummary,
  type Published,
  RenewArgs,
  type RenewResult,
  type RunSummary,
  type RunView,
  SendEventArgs,
  type SendEventResult,
  StartRunArgs,
  SubmitArgs,
  type ToolResult,
  toolResult,
  type UploadResult,
  type VersionDetail,
  type VersionList,
  VersionsQuery,
  type WebhookCreated,
  type WebhookList,
  type WebhookView,
} from "@baton/protocol";
import { z } from "zod";

/**
 * The subject catalog: every service call Baton makes, and who answers it. Each subject's
 * {@link Contract} (in {@link CONTRACTS}) holds the schema of its request and of each reply.
 *
 * | subject | served by | request |
 * |---|---|---|
 * | `engine.p<k>` | the engine replica owning partition k | {@link EngineWrite} |
 * | `engine.read` | any engine replica (queue `engine`) | {@link EngineRead} |
 * | `engine.journal` | any engine replica (queue `engine`) | {@link JournalRead} |
 * | `engine.report` | any engine replica (queue `engine`) | {@link CheckReportRead} |
 * | `registry` | any registry replica (queue `registry`) | {@link RegistryCall} |
 * | `registry.read` | any registry replica (queue `registry`) | {@link RegistryRead} |
 * | `evidence` | any evidence replica (queue `evidence`) | {@link EvidenceCall} |
 * | `scheduler` | any scheduler replica (queue `scheduler`) | {@link SchedulerCall} |
 * | `notifier` | any notifier replica (queue `notifier`) | {@link NotifierCall} |
 * | `events.<org>.<type>` | the JetStream events stream | domain events |
 *
 * Subjects here are logical: the NATS transport puts its namespace in front (`baton.engine.p3`), so
 * several Baton deployments can share one NATS cluster.
 */
export const SUBJECTS = {
  engineWrite: (partition: number) => `engine.p${partition}`,
  engineRead: "engine.read",
  registry: "registry",
  evidence: "evidence",
  scheduler: "scheduler",
  registryRead: "registry.read",
  engineJournal: "engine.journal",
  engineReport: "engine.report",
  notifier: "notifier",
  event: (org: string, type: string) => `events.${encodeURIComponent(org).replace(/[.%*>]/g, "_")}.${type}`,
} as const;

/** Queue groups, so replicas of one service share a subject. */
export const QUEUES = {
  engine: "engine",
  registry: "registry",
  evidence: "evidence",
  scheduler: "scheduler",
  notifier: "notifier",
} as const;

/**
 * A reply's `data` whose shape is a tool's result (`@baton/protocol` shapes): checked here only for
 * being there. The shapes are checked against the official JSON Schemas (`conformance/schemas`) by
 * the tests that read them (ARCHITECTURE rule 3), so they are not restated as a second schema.
 */
const shape = <T>() => z.custom<T>((value) => value !== undefined);

const runId = z.string();

/** The `upload` result (tools.md upload): the file's id, SHA-256 and size. */
const UploadResultSchema = z.strictObject({
  id: z.string(),
  sha256: z.string(),
  bytes: z.number(),
}) satisfies z.ZodType<UploadResult>;
/** The verified content of a claim token: every write a token carries has one (issue #9). */
const claimId = z.string();

/**
 * A write to one run, served by the run's partition owner (`engine.p<partitionOf(runId, P)>`).
 * `runId` routes it. A token tool (`renew`, `submit`, `escalate`) carries the claim id its token
 * verified to: the gateway verifies the token, so the engine never sees one that does not.
 * `tick` asks the owner to apply the run's due timers (issue #5): no identity, no `requestId`.
 */
export const EngineWrite = z.discriminatedUnion("tool", [
  z.strictObject({ tool: z.literal("start_run"), args: StartRunArgs, runId }),
  z.strictObject({ tool: z.literal("claim"), args: ClaimArgs, runId }),
  z.strictObject({ tool: z.literal("renew"), args: RenewArgs, runId, claimId }),
  z.strictObject({ tool: z.literal("submit"), args: SubmitArgs, runId, claimId }),
  z.strictObject({ tool: z.literal("escalate"), args: EscalateArgs, runId, claimId }),
  z.strictObject({ tool: z.literal("decide"), args: DecideArgs, runId }),
  z.strictObject({ tool: z.literal("cancel"), args: CancelArgs, runId }),
  z.strictObject({ tool: z.literal("send_event"), args: SendEventArgs, runId }),
  z.strictObject({ tool: z.literal("tick"), runId }),
]);
export type EngineWrite = z.infer<typeof EngineWrite>;

/** Tools that change one run and are served by the run's partition owner. */
export type EngineWriteTool = Exclude<EngineWrite["tool"], "tick">;

/** The reply to a `tick`: whether a transition was committed, and the run's `rev` after it (null: no run). */
export const TickResult = z.strictObject({ committed: z.boolean(), rev: z.number().int().nullable() });
export type TickResult = z.infer<typeof TickResult>;

/** What each {@link EngineWrite} is answered with. */
export interface EngineWriteReplies {
  start_run: ToolResult<RunView>;
  claim: ToolResult<ClaimResult>;
  renew: ToolResult<RenewResult>;
  submit: ToolResult<RunView>;
  escalate: ToolResult<RunView>;
  decide: ToolResult<RunView>;
  cancel: ToolResult<RunView>;
  send_event: ToolResult<SendEventResult>;
  tick: TickResult;
}

/** A read any engine replica serves from PostgreSQL. */
export const EngineRead = z.discriminatedUnion("tool", [
  z.strictObject({ tool: z.literal("get_run"), args: GetRunArgs }),
  z.strictObject({ tool: z.literal("get_work"), args: GetWorkArgs }),
  z.strictObject({ tool: z.literal("list_runs"), args: ListRunsArgs }),
]);
export type EngineRead = z.infer<typeof EngineRead>;

/** What each {@link EngineRead} is answered with. */
export interface EngineReadReplies {
  get_run: ToolResult<RunView>;
  get_work: ToolResult<Page<AgentWorkItem> | Page<PersonWorkItem>>;
  list_runs: ToolResult<Page<RunSummary>>;
}

/**
 * A run's journal (issue #16), for anyone in the run's organization. Replies `ToolResult<JournalPage>`;
 * file evidence carries no `url` on the bus (the gateway signs them).
 */
export const JournalRead = JournalQuery;
export type JournalRead = JournalQuery;

/**
 * The check agreement report (issue #14, docs/check-report.md), for an operator of the caller's
 * organization. Replies `ToolResult<CheckReport>`.
 */
export const CheckReportRead = CheckReportQuery;
export type CheckReportRead = CheckReportQuery;

/**
 * Registry calls: the catalog tool and the admin API (§7 import, bind, publish). `bindings` travel
 * as the operator sent them: the registry checks each group id against the draft's roles.
 */
export const RegistryCall = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("list_processes"), args: ListProcessesArgs }),
  z.strictObject({ op: z.literal("import"), folderName: z.string().nullable(), source: z.string() }),
  z.strictObject({ op: z.literal("get_draft"), draftId: z.string() }),
  z.strictObject({
    op: z.literal("bind"),
    draftId: z.string(),
    bindings: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({ op: z.literal("publish"), draftId: z.string() }),
]);
export type RegistryCall = z.infer<typeof RegistryCall>;

/** What each {@link RegistryCall} is answered with. */
export interface RegistryReplies {
  list_processes: ToolResult<Page<ProcessSummary>>;
  import: ToolResult<DraftView>;
  get_draft: ToolResult<DraftView>;
  bind: ToolResult<DraftView>;
  publish: ToolResult<Published>;
}

/**
 * The admin API's version reads (issue #16), for anyone in the caller's organization: every published
 * version of a process, or one with its source and definition. Replies `ToolResult<VersionList>` /
 * `ToolResult<VersionDetail>` (`@baton/protocol` admin shapes).
 */
export const RegistryRead = VersionsQuery;
export type RegistryRead = VersionsQuery;

/**
 * Evidence calls (§5). An upload is three: `intent` (recorded before the gateway PUTs the bytes, so
 * orphan collection leaves them alone; replies {@link UploadIntent}), then `register` (records the
 * file, idempotent on `requestId`, and drops the intent; replies `ToolResult<UploadResult>`), or
 * `abandon` when the PUT failed (drops the intent; replies null). `verify` checks refs for the
 * engine (replies `Record<ref, FileCheck>`); `get` resolves one file for a download (`FileMeta |
 * null`), `meta` many for presigned URLs (`Record<id, FileMeta>`, unknown ids left out); `gc` is one
 * page of orphan collection for an operator of the caller's organization (`ToolResult<GcPage>`).
 * `gc`'s values travel as the operator sent them: the evidence service checks them, after who may
 * collect (`invalid` with every issue).
 */
export const EvidenceCall = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("intent"),
    requestId: z.string(),
    fingerprint: z.string(),
    sha256: z.string(),
    bytes: z.number().int().min(0),
  }),
  z.strictObject({
    op: z.literal("register"),
    requestId: z.string(),
    fingerprint: z.string(),
    fileName: z.string(),
    contentType: z.string(),
    sha256: z.string(),
    bytes: z.number().int().min(0),
    /** The intent this upload wrote before its PUT. */
    intentId: z.string(),
    /** The object's ETag, when the store showed it equals the bytes' MD5 (blob `PutResult.etag`). */
    etag: z.string().nullable(),
  }),
  z.strictObject({ op: z.literal("abandon"), intentId: z.string() }),
  z.strictObject({ op: z.literal("verify"), refs: z.array(z.string()) }),
  z.strictObject({ op: z.literal("get"), id: z.string() }),
  z.strictObject({ op: z.literal("meta"), ids: z.array(z.string()) }),
  z.strictObject({
    op: z.literal("gc"),
    /** Objects and intents younger than this are kept, ms (at least {@link GC_MIN_AGE_MS}). */
    olderThanMs: z.unknown().optional(),
    /** Report what would be deleted, delete nothing. */
    dryRun: z.unknown().optional(),
    /** The last key of the previous page, or null for the first. */
    cursor: z.unknown().optional(),
    /** Objects examined in this page (1–1000). */
    limit: z.unknown().optional(),
  }),
]);
export type EvidenceCall = z.infer<typeof EvidenceCall>;

/**
 * The least age `gc` accepts, ms: an upload that wrote its intent is done (or has failed) well within
 * a minute, so nothing in flight is older.
 */
export const GC_MIN_AGE_MS = 60_000;

/**
 * The reply to an `intent`: go ahead and store the bytes (`intentId` to cite in `register`), or the
 * `requestId` was used before and this is that call's answer (its result, or `conflict`): nothing
 * is stored.
 */
export type UploadIntent =
  | { kind: "intent"; intentId: string }
  | { kind: "replay"; result: ToolResult<UploadResult> };

/**
 * One page of `baton evidence gc` in the caller's organization: the objects examined; those deleted
 * (or, in a dry run, that would be), each `{ key, bytes, modifiedAt }` (RFC 3339); how many were kept
 * for being younger than the age or having an upload intent younger than it (`keptYoung`) and for
 * being named by a file (`keptReferenced`); the stale intents dropped (after the last page, not in a
 * dry run); and the cursor of the next page (null after the last).
 */
export interface GcPage {
  examined: number;
  deleted: { key: string; bytes: number; modifiedAt: string }[];
  keptYoung: number;
  keptReferenced: number;
  intentsDropped: number;
  cursor: string | null;
}

/** What each {@link EvidenceCall} is answered with: `verify` by ref, `get` null for no such file. */
export interface EvidenceReplies {
  intent: ToolResult<UploadIntent>;
  register: ToolResult<UploadResult>;
  abandon: null;
  verify: Record<string, FileCheck>;
  get: FileMeta | null;
  meta: Record<string, FileMeta>;
  gc: ToolResult<GcPage>;
}

/**
 * Scheduler calls (issue #5): the manual clock, from the admin API (operators only).
 *
 * - `advance`: move the manual clock forward by `ms` (a whole number ≥ 0), then apply every timer that
 *   fell due (cascades included) before replying `{ now, from, manual, applied, pending }`; `pending`
 *   > 0 means the caller's deadline came first. With a `requestId` (1–200 characters) the move is
 *   idempotent: the same call again moves nothing and carries on applying up to the same target (how
 *   the CLI retries and carries on); the id with another `ms` is a `conflict`. `ms: 0` without one
 *   applies what is due at the current time. `conflict` when the clock is real time. `ms` (null when
 *   the operator sent no number) and `requestId` travel as sent: the scheduler checks them after
 *   who may move the clock and whether it can be moved (`invalid`).
 * - `now`: the current time `{ now, manual }`.
 */
export const SchedulerCall = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("advance"), ms: z.number().nullable(), requestId: z.unknown().optional() }),
  z.strictObject({ op: z.literal("now") }),
]);
export type SchedulerCall = z.infer<typeof SchedulerCall>;

/** The reply to a {@link SchedulerCall}, under `{ ok: true, data }`. */
export const ClockReply = z.strictObject({
  /** `now`: the clock's time. `advance`: the time this advance moved the clock to (a retry: the same). RFC 3339. */
  now: z.string(),
  /** True when the clock is manual (movable). */
  manual: z.boolean(),
  /** `advance` only: the time this advance moved the clock from, RFC 3339. */
  from: z.string().exactOptional(),
  /**
   * `advance` only: timers with a fire time in (`from`, `now`] that the journal shows applied when
   * the reply was made, by any transition (this call's ticks, another replica's or the scheduler's
   * own loop, or a user write that found one expired). Counted from the journal entries'
   * `detail.timers`, so a retry of the same advance reports the whole window again, not a delta.
   */
  applied: z.number().int().exactOptional(),
  /**
   * `advance` only: timers due by `now` still not applied when the call's deadline came (0 when
   * everything that fell due has been applied). Send the same advance again (same `requestId`) to
   * carry on; it does not move the clock again.
   */
  pending: z.number().int().exactOptional(),
});
export type ClockReply = z.infer<typeof ClockReply>;

/** What each {@link SchedulerCall} is answered with. */
export interface SchedulerReplies {
  advance: ToolResult<ClockReply>;
  now: ToolResult<ClockReply>;
}

export { NotifierCall };

/** What each {@link NotifierCall} is answered with (the notifier's admin shapes, `@baton/protocol`). */
export interface NotifierReplies {
  webhook_add: ToolResult<WebhookCreated>;
  webhook_list: ToolResult<WebhookList>;
  webhook_remove: ToolResult<WebhookView>;
  webhook_deliveries: ToolResult<DeliveryList>;
  run_deliveries: ToolResult<DeliveryList>;
  redeliver: ToolResult<DeliveryView>;
  group_email: ToolResult<GroupEmail>;
  group_emails: ToolResult<{ groups: GroupEmail[] }>;
}

/**
 * One subject's contract (CONVENTIONS: "a catalog of subjects that maps each to its request and
 * reply schema"). `Req` is the request; `Replies` maps each kind of request (its `tool` or `op`, or
 * `reply` when there is one kind) to what answers it.
 */
export interface Contract<
  Req extends object,
  Replies extends object,
  Partitioned extends boolean = false,
  Caller extends "identified" | "any" = "identified",
> {
  /** The subject's name in the catalog (`engine.write` for `engine.p<k>`). */
  readonly name: string;
  /** Whether the subject is one per run partition (`engine.p<k>`): served and called with a partition. */
  readonly partitioned: Partitioned;
  /** The logical subject (`engine.p3`); `partition` only for a partitioned one. */
  readonly subject: (partition: number) => string;
  /** The queue group replicas share the subject in; none when one replica owns it (a partition). */
  readonly queue: string | undefined;
  /**
   * `identified`: the envelope must carry the caller's identity (an envelope without one is
   * malformed). `any`: server-internal calls too (`identity: null`), which the handler tells apart.
   */
  readonly caller: Caller;
  readonly request: z.ZodType<Req>;
  readonly replies: { readonly [K in keyof Replies]: z.ZodType<Replies[K]> };
  /** The envelope's `type`, for logs (`engine.claim`, `registry.import`). */
  readonly type: (request: Req) => string;
}

/** Any contract of the catalog. */
// biome-ignore lint/suspicious/noExplicitAny: a constraint that every contract satisfies
export type AnyContract = Contract<any, any, boolean, "identified" | "any">;

/** The request type of a contract. */
export type RequestOf<C extends AnyContract> = z.output<C["request"]>;

/** Which of a contract's replies answers a request: its `tool`, else its `op`, else `reply`. */
export type ReplyKey<R> = R extends { tool: infer T extends string }
  ? T
  : R extends { op: infer O extends string }
    ? O
    : "reply";

/** What answers request `R` on contract `C` (a union when `R` is). */
export type ReplyOf<C extends AnyContract, R = RequestOf<C>> = z.output<
  C["replies"][ReplyKey<R> & keyof C["replies"]]
>;

/** The runtime twin of {@link ReplyKey}. */
export function replyKey(request: object): string {
  if ("tool" in request && typeof request.tool === "string") return request.tool;
  if ("op" in request && typeof request.op === "string") return request.op;
  return "reply";
}

/** Where a subject served by any replica of a queue group is, and who may call it. */
function queued<Caller extends "identified" | "any">(subject: string, queue: string, caller: Caller) {
  return { name: subject, partitioned: false as const, subject: () => subject, queue, caller };
}

/** `engine.p<k>`: writes to the runs of partition k (ARCHITECTURE rule 5). */
const engineWrite: Contract<EngineWrite, EngineWriteReplies, true, "any"> = {
  name: "engine.write",
  partitioned: true,
  subject: SUBJECTS.engineWrite,
  queue: undefined,
  caller: "any",
  request: EngineWrite,
  replies: {
    start_run: toolResult(shape<RunView>()),
    claim: toolResult(shape<ClaimResult>()),
    renew: toolResult(shape<RenewResult>()),
    submit: toolResult(shape<RunView>()),
    escalate: toolResult(shape<RunView>()),
    decide: toolResult(shape<RunView>()),
    cancel: toolResult(shape<RunView>()),
    send_event: toolResult(shape<SendEventResult>()),
    tick: TickResult,
  },
  type: (r) => `engine.${r.tool}`,
};

/** `engine.read`: `get_run`, `get_work`, `list_runs`. */
const engineRead: Contract<EngineRead, EngineReadReplies> = {
  ...queued(SUBJECTS.engineRead, QUEUES.engine, "identified"),
  request: EngineRead,
  replies: {
    get_run: toolResult(shape<RunView>()),
    get_work: toolResult(shape<Page<AgentWorkItem> | Page<PersonWorkItem>>()),
    list_runs: toolResult(shape<Page<RunSummary>>()),
  },
  type: (r) => `engine.${r.tool}`,
};

/** `engine.journal`: a run's journal (issue #16). */
const engineJournal: Contract<JournalRead, { reply: ToolResult<JournalPage> }> = {
  ...queued(SUBJECTS.engineJournal, QUEUES.engine, "identified"),
  request: JournalRead,
  replies: { reply: toolResult(shape<JournalPage>()) },
  type: () => SUBJECTS.engineJournal,
};

/** `engine.report`: the check agreement report (issue #14). */
const engineReport: Contract<CheckReportRead, { reply: ToolResult<CheckReport> }> = {
  ...queued(SUBJECTS.engineReport, QUEUES.engine, "identified"),
  request: CheckReportRead,
  replies: { reply: toolResult(shape<CheckReport>()) },
  type: () => SUBJECTS.engineReport,
};

/** `registry`: `list_processes` and the admin API's import, bind, publish (§7). */
const registry: Contract<RegistryCall, RegistryReplies> = {
  ...queued(SUBJECTS.registry, QUEUES.registry, "identified"),
  request: RegistryCall,
  replies: {
    list_processes: toolResult(shape<Page<ProcessSummary>>()),
    import: toolResult(shape<DraftView>()),
    get_draft: toolResult(shape<DraftView>()),
    bind: toolResult(shape<DraftView>()),
    publish: toolResult(shape<Published>()),
  },
  type: (r) => `registry.${r.op}`,
};

/** `registry.read`: published versions (issue #16). */
const registryRead: Contract<RegistryRead, { reply: ToolResult<VersionList | VersionDetail> }> = {
  ...queued(SUBJECTS.registryRead, QUEUES.registry, "identified"),
  request: RegistryRead,
  replies: { reply: toolResult(shape<VersionList | VersionDetail>()) },
  type: () => SUBJECTS.registryRead,
};

/** `evidence`: uploads, file checks, downloads (§5). */
const evidence: Contract<EvidenceCall, EvidenceReplies> = {
  ...queued(SUBJECTS.evidence, QUEUES.evidence, "identified"),
  request: EvidenceCall,
  replies: {
    intent: toolResult(
      z.discriminatedUnion("kind", [
        z.strictObject({ kind: z.literal("intent"), intentId: z.string() }),
        z.strictObject({ kind: z.literal("replay"), result: toolResult(UploadResultSchema) }),
      ]) satisfies z.ZodType<UploadIntent>,
    ),
    register: toolResult(UploadResultSchema),
    abandon: z.null(),
    verify: z.record(z.string(), FileCheck),
    get: FileMeta.nullable(),
    meta: z.record(z.string(), FileMeta),
    gc: toolResult(shape<GcPage>()),
  },
  type: (r) => `evidence.${r.op}`,
};

/** `scheduler`: the manual clock's admin calls (issue #5). */
const scheduler: Contract<SchedulerCall, SchedulerReplies, false, "any"> = {
  ...queued(SUBJECTS.scheduler, QUEUES.scheduler, "any"),
  request: SchedulerCall,
  replies: { advance: toolResult(ClockReply), now: toolResult(ClockReply) },
  type: (r) => `scheduler.${r.op}`,
};

/** `notifier`: webhook subscriptions, group mailing addresses, the record of deliveries (issue #11). */
const notifier: Contract<NotifierCall, NotifierReplies> = {
  ...queued(SUBJECTS.notifier, QUEUES.notifier, "identified"),
  request: NotifierCall,
  replies: {
    webhook_add: toolResult(shape<WebhookCreated>()),
    webhook_list: toolResult(shape<WebhookList>()),
    webhook_remove: toolResult(shape<WebhookView>()),
    webhook_deliveries: toolResult(shape<DeliveryList>()),
    run_deliveries: toolResult(shape<DeliveryList>()),
    redeliver: toolResult(shape<DeliveryView>()),
    group_email: toolResult(shape<GroupEmail>()),
    group_emails: toolResult(shape<{ groups: GroupEmail[] }>()),
  },
  // One type for every call, as the gateway named them before the contract.
  type: () => SUBJECTS.notifier,
};

/** Every subject's contract, by the name services use. */
export const CONTRACTS = {
  engineWrite,
  engineRead,
  engineJournal,
  engineReport,
  registry,
  registryRead,
  evidence,
  scheduler,
  notifier,
} as const;
