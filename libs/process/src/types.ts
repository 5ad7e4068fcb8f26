/**
 * The parsed shape of a PROCESS.md file (specification §2).
 *
 * The parser keeps what the author wrote where the wire shows it "exactly as written" (field
 * declarations appear in `claim.step.output` and `list_processes.inputs` in shorthand or long form,
 * as declared), and normalizes only what every consumer would otherwise normalize again
 * (route lists become `{ to, when? }` objects, `evidence` becomes a list of kinds).
 */

/** The eight core field types (§2.3). */
export const FIELD_TYPES = [
  "string",
  "number",
  "boolean",
  "date",
  "datetime",
  "list",
  "object",
  "person",
] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** A `one_of` value: a value of the field's own type (§2.3). */
export type OneOfValue = string | number | boolean;

/** The long form of a field declaration (§2.3). */
export interface FieldObject {
  type: FieldType;
  description?: string;
  optional?: boolean;
  one_of?: OneOfValue[];
  /** For `list`: the item type, as a type name or a field object. */
  items?: FieldDecl;
}

/** A field declaration as written: a bare type name or a field object (§2.3). */
export type FieldDecl = FieldType | FieldObject;

/** A map of field name to declaration: `inputs`, a step's `output` (§2.3). */
export type Fields = Record<string, FieldDecl>;

/** Evidence kinds (§5). */
export const EVIDENCE_KINDS = ["file", "link"] as const;
export type EvidenceKind = (typeof EVIDENCE_KINDS)[number];

/** One route of a list `next` (§2.2, §3.2). A bare step id in YAML becomes `{ to }`. */
export interface Route {
  to: string;
  when?: string;
}

/**
 * `next` as written: a single step id, or a list of two or more routes (agent and task only).
 * `null` when the step does not name `next` (the default is the following step, §2.2).
 */
export type Next = string | Route[];

/** The step kinds of the core plus the `parallel` profile (§2.2, profiles/parallel.md §1). */
export const STEP_KINDS = [
  "agent",
  "task",
  "approve",
  "wait",
  "wait_until",
  "wait_for",
  "finish",
  "parallel",
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

interface StepCommon {
  id: string;
  /** 1-based line of the step's `id` key (or of the list item) in the file, for messages. */
  line: number;
}

/** `agent:` — an agent completes it; the value is its instructions (§2.2). */
export interface AgentStep extends StepCommon {
  kind: "agent";
  instructions: string;
  output: Fields | null;
  evidence: EvidenceKind[] | null;
  next: Next | null;
  due: string | null;
  /** The `check` profile's key as written (profiles/check.md §2); validated, not interpreted here. */
  check: unknown;
  advisory: boolean | null;
}

/** `task:` — a person completes it (§2.2). */
export interface TaskStep extends StepCommon {
  kind: "task";
  instructions: string;
  person: string;
  output: Fields | null;
  evidence: EvidenceKind[] | null;
  next: Next | null;
  due: string | null;
  check: unknown;
  advisory: boolean | null;
}

/** `approve:` — a person approves or rejects (§2.2). `next` is never a list. */
export interface ApproveStep extends StepCommon {
  kind: "approve";
  instructions: string;
  person: string;
  next: string | null;
  onReject: string | null;
  due: string | null;
}

/** `wait:` — the server continues after a duration (§2.2, §2.4). */
export interface WaitStep extends StepCommon {
  kind: "wait";
  duration: string;
  next: string | null;
}

/** `wait_until:` — a path into run data holding a `datetime` (§2.2). */
export interface WaitUntilStep extends StepCommon {
  kind: "wait_until";
  path: string;
  next: string | null;
}

/** `wait_for:` — continues when `send_event` delivers the named event (§2.2, §3.6). */
export interface WaitForStep extends StepCommon {
  kind: "wait_for";
  event: string;
  timeout: string | null;
  onTimeout: string | null;
  next: string | null;
}

/** `finish:` — ends the run with an outcome (§2.2). */
export interface FinishStep extends StepCommon {
  kind: "finish";
  outcome: string;
}

/** `parallel:` — the parallel profile's fork step (profiles/parallel.md §1). */
export interface ParallelStep extends StepCommon {
  kind: "parallel";
  branches: string[];
  next: string | null;
}

export type Step =
  | AgentStep
  | TaskStep
  | ApproveStep
  | WaitStep
  | WaitUntilStep
  | WaitForStep
  | FinishStep
  | ParallelStep;

/** `requires` (§2.1, revision 10). */
export interface Requires {
  systems: string[];
}

/** A valid, parsed process. */
export interface Process {
  name: string;
  description: string;
  /** `inputs` as written; `{}` when absent. */
  inputs: Fields;
  requires: Requires | null;
  steps: Step[];
  /** The frontmatter as parsed (plain JSON values), the input of the content hash (§6 rule 5). */
  frontmatter: Record<string, unknown>;
  /** The body exactly as written: everything after the closing delimiter line's line ending. */
  body: string;
  /** `sha256:`-less lowercase hex SHA-256 (§6 rule 5). */
  contentHash: string;
  /** Profiles the process uses by using their keys (§8): `parallel-1`, `check-1`. */
  profiles: string[];
  /** Optional tools the process needs (§4.2): `upload` for `evidence: [file]`, `send_event` for `wait_for`. */
  tools: string[];
  /** Role names used in `person:` (not `initiator`, not paths), in first-use order (§7). */
  roles: string[];
}

/** One problem found in a PROCESS.md file, with its 1-based position in the file. */
export interface Issue {
  line: number;
  col: number;
  message: string;
}

/** The result of parsing: a valid process, or every issue at once. Never throws. */
export type ParseResult = { ok: true; process: Process } | { ok: false; issues: Issue[] };
