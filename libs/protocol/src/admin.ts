import type { Process } from "@baton/process";
import { z } from "zod";

/**
 * The admin API's shapes: drafts and publications (§7, operators), and the read endpoints (issue
 * #16): what no tool reads, for the web console and anyone in the organization. Published versions with their source, content hash and bindings (§6 rule 5, §7),
 * and a run's journal (ARCHITECTURE rule 6: who, what, when, against which version and content hash).
 * Every answer is the protocol's `{ ok, data | error }`; another organization's process or run is
 * `not_found`, as it is for the tools.
 */

/** A draft as the admin API shows it (§7: roles to bind, `requires` shown): `POST /api/processes`, `GET /api/drafts/:id`, `PUT /api/drafts/:id/bindings`. */
export interface DraftView {
  draftId: string;
  name: string;
  description: string;
  /** Role names used in `person:` that need a group. */
  roles: string[];
  bindings: Record<string, string>;
  /** Roles without a group yet; publication needs none left. */
  unbound: string[];
  requires: { systems: string[] } | null;
  contentHash: string;
}

/** The result of a publication (`POST /api/drafts/:id/publish`). */
export interface Published {
  name: string;
  version: number;
  contentHash: string;
  /** True when identical content and bindings were already the latest version (nothing new was created). */
  unchanged: boolean;
}

/** `GET /api/processes/:name/versions` and `GET /api/processes/:name/versions/:version`. */
export const VersionsQuery = z.strictObject({
  name: z.string().min(1).max(64),
  /** One version (a whole number ≥ 1); absent for the list of every version. */
  version: z.int().min(1).max(2_147_483_647).optional(),
});
export type VersionsQuery = z.infer<typeof VersionsQuery>;

/** One published version as listed: no source. */
export interface VersionSummary {
  name: string;
  version: number;
  /** SHA-256 hex of the canonical frontmatter, a newline and the body (§6 rule 5). */
  contentHash: string;
  /** Role name → group id, as bound at publication (§7). */
  bindings: Record<string, string>;
  publishedBy: string;
  /** RFC 3339. */
  publishedAt: string;
}

/** `GET /api/processes/:name/versions`: every version, newest first. */
export interface VersionList {
  name: string;
  versions: VersionSummary[];
}

/** `GET /api/processes/:name/versions/:version`: one version with its file and its parsed definition. */
export interface VersionDetail extends VersionSummary {
  /** The PROCESS.md exactly as published. */
  source: string;
  /** The parsed process (`@baton/process` `Process`): what the map is drawn from. */
  definition: Process;
}

/** `GET /api/runs/:id/journal?after=<rev>&limit=<n>`: entries after `after`, oldest first. */
export const JournalQuery = z.strictObject({
  runId: z.string().min(1).max(64),
  /** Entries with a larger `rev` than this (default 0: from the start). */
  after: z.int().min(0).max(2_147_483_647).optional(),
  /** At most this many (1–500, default 200). */
  limit: z.int().min(1).max(500).optional(),
});
export type JournalQuery = z.infer<typeof JournalQuery>;

/** One committed transition of a run (ARCHITECTURE rule 6). */
export interface JournalEntry {
  /** The run's revision this transition produced: 1, 2, … */
  rev: number;
  /** RFC 3339, on the server's clock. */
  at: string;
  /** Who: an agent id, a person's email, or `server` for timers. */
  actor: string;
  actorKind: string;
  /** What: the tool (`start_run`, `submit`, `decide`, …) or `tick` for timers. */
  command: string;
  requestId: string | null;
  process: string;
  version: number;
  contentHash: string;
  /**
   * The command's arguments (tokens left out; file evidence items carry a short-lived `url`), the
   * error code when the transition recorded a refusal that changed the run (a `handoff.issues`), the
   * timers it applied and the domain events it caused.
   */
  detail: Record<string, unknown>;
}

/** A page of a run's journal; `nextAfter` is the `after` of the next page, null at the end. */
export interface JournalPage {
  runId: string;
  entries: JournalEntry[];
  nextAfter: number | null;
}

/**
 * `GET /api/processes/:name/check-report?since=<RFC 3339>` (`baton report checks`, issue #14): the
 * agreement of a process's recorded check verdicts with its approvers' decisions (check.md §4 "earn
 * trust first"; docs/check-report.md). Operators only.
 */
export const CheckReportQuery = z.strictObject({
  name: z.string().min(1).max(64),
  /** Only verdicts recorded at or after this instant (RFC 3339 with an offset); absent: all. */
  since: z.iso.datetime({ offset: true }).optional(),
});
export type CheckReportQuery = z.infer<typeof CheckReportQuery>;

/**
 * What followed a group of verdicts: the next `approved` or `rejected` decision of an approve step on
 * the same attempt, or none yet (`undecided`).
 */
export interface DecisionCounts {
  approved: number;
  rejected: number;
  undecided: number;
}

/**
 * Agreement of one kind of result with the decisions: `agree` counts pass·approved and
 * fail·rejected, `disagree` pass·rejected and fail·approved; `agreement` is agree / (agree +
 * disagree), null when neither happened. Unsure and error never count towards it.
 */
export interface Agreement {
  agree: number;
  disagree: number;
  agreement: number | null;
}

/** One question of a checked step (by its `ask` and kind), its results paired with the decisions. */
export interface QuestionAgreement extends Agreement {
  ask: string;
  kind: "yes_no" | "choice" | "rubric";
  results: { pass: DecisionCounts; fail: DecisionCounts; unsure: DecisionCounts };
}

/** A verdict the decision went against (pass then rejected, fail then approved). */
export interface Disagreement {
  runId: string;
  verdict: "pass" | "fail";
  decision: "approved" | "rejected";
  /** The approve step that decided. */
  decidedOn: string;
  decidedBy: string;
  /** When the checked completion was recorded and when the decision was made, RFC 3339. */
  checkedAt: string;
  decidedAt: string;
  advisory: boolean;
}

/** One checked step of the process. */
export interface StepAgreement extends Agreement {
  stepId: string;
  /** Verdicts recorded on completions of this step (every run, every attempt). */
  verdicts: number;
  /** Of them, those followed by a decision. */
  decided: number;
  /** By verdict, the decisions that followed; unsure and error are counted here, apart from `agreement`. */
  byVerdict: {
    pass: DecisionCounts;
    fail: DecisionCounts;
    unsure: DecisionCounts;
    error: DecisionCounts;
  };
  questions: QuestionAgreement[];
  /** Every verdict the decision went against, oldest first. */
  disagreements: Disagreement[];
}

/** The report: the runs read and one entry per checked step, in step order of first appearance. */
export interface CheckReport {
  process: string;
  /** The `since` asked for, or null. */
  since: string | null;
  /** Live runs of the process read (test runs are left out). */
  runs: number;
  steps: StepAgreement[];
}

/**
 * `GET /api/whoami`: the caller as this server verified and mapped their bearer token (issue #16),
 * so a person can tell why they do or do not see a work item. The deployment's claim mapping (issue
 * #12, docs/security.md) has been applied: these are the values every rule is checked against, not
 * the token's raw claims. Never the token itself.
 */
export interface WhoAmI {
  /** The agent id, or the person's id (their email): the actor the journal records. */
  id: string;
  org: string;
  kind: "agent" | "person";
  /** Group ids, matched against the groups roles are bound to (`assignedTo.group`). */
  groups: string[];
  /** Baton's roles the caller holds: `["operator"]` or `[]`, whatever the provider calls the role. */
  roles: string[];
  /** The OAuth client the token was issued to (`client_id`, `azp`, `cid`, `appid`), or null. */
  client: string | null;
  /** When the token expires (its `exp`), RFC 3339. */
  expiresAt: string;
}

/**
 * How the web console's people sign in, as the gateway serves it at `GET /ui/config.json` (issue
 * #16). `token`: a pasted bearer token (the dev issuer, or an issuer without a console client).
 * `oidc`: the authorization code flow with PKCE at the issuer the RFC 9728 metadata names
 * (`/.well-known/oauth-protected-resource`, `authorization_servers[0]`), as the public client
 * `clientId`, asking for `scope`, and naming this server's MCP resource (the metadata's `resource`)
 * by the `resourceParameter` of the authorization request: `resource` (RFC 8707), `audience`
 * (Auth0) or `none` (Entra ID v2, where the scope names the API).
 */
export type ConsoleConfig =
  | { signIn: "token" }
  | { signIn: "oidc"; clientId: string; scope: string; resourceParameter: ResourceParameter };

/** How an authorization request names the resource a token is for (see {@link ConsoleConfig}). */
export const RESOURCE_PARAMETERS = ["resource", "audience", "none"] as const;
export type ResourceParameter = (typeof RESOURCE_PARAMETERS)[number];
