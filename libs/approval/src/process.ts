/**
 * The built-in approval processes (issue #17): one `tool-approval-<tier>` per risk tier, published by
 * `baton approvals enable`. Their inputs are the contract between that command and this package's
 * client, so both read them here. Pure.
 */

/** The three decisions of an approval handler, which are also the finishes of every approval process. */
export const DECISIONS = ["approved", "denied", "skipped"] as const;

/**
 * What a person decided about a tool call: `approved` (run it as shown), `denied` (do not run it), or
 * `skipped` (the agent goes on without this call).
 */
export type Decision = (typeof DECISIONS)[number];

/** The id of the one person step of every approval process (its `task`). */
export const APPROVAL_STEP = "review";

/** The role of that step (`person: approver`), bound to the tier's group at publication (§7). */
export const APPROVAL_ROLE = "approver";

/**
 * The inputs a run of an approval process starts with (§2.3), by name, with their descriptions: what
 * the client sends (`approvalInputs`) and what the person reads in the work item's run. Every one is a
 * `string`; `callerRunId` and `context` are optional. A description is a plain YAML scalar, so it holds
 * no `: ` and no `#`.
 */
export const APPROVAL_INPUTS = {
  toolName: "The tool the agent wants to call.",
  argumentsDigest:
    "SHA-256 (hex) of the call's arguments as RFC 8785 canonical JSON, which identifies the exact call.",
  argumentsPreview: "The call's arguments for reading, with secrets redacted and long values shortened.",
  riskTier: "The risk tier the agent's runtime gave the call.",
  agentId: "The agent that wants to make the call.",
  callerRunId: "The caller's own run (session, task) the call belongs to.",
  context: "What the agent is doing and why it wants this call.",
} as const;

/** The inputs a runtime may leave out. */
const OPTIONAL_INPUTS: ReadonlySet<keyof typeof APPROVAL_INPUTS> = new Set(["callerRunId", "context"]);

/** The tier pattern: a tier becomes part of a process `name` (§2.1), `tool-approval-<tier>`. */
export const TIER_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** The longest tier: `tool-approval-<tier>` is a process name of at most 64 characters (§2.1). */
export const MAX_TIER_LENGTH = 64 - "tool-approval-".length;

/** The approval process of `tier`: `tool-approval-<tier>`. */
export function approvalProcessName(tier: string): string {
  return `tool-approval-${tier}`;
}

/** Why `tier` cannot name an approval process, or null when it can. */
export function tierProblem(tier: string): string | null {
  if (!TIER_PATTERN.test(tier)) return `tier ${JSON.stringify(tier)}: use lowercase words joined by hyphens`;
  if (tier.length > MAX_TIER_LENGTH) return `tier ${tier}: at most ${MAX_TIER_LENGTH} characters`;
  return null;
}

const ROUTES: Record<Decision, string> = {
  approved: "The call may run exactly as shown",
  denied: "The call must not run",
  skipped: "The agent should go on without this call",
};

/**
 * The PROCESS.md text of `tool-approval-<tier>` (§2): the inputs of {@link APPROVAL_INPUTS}
 * (`riskTier` must be this tier), one person `task` step {@link APPROVAL_STEP} for the role
 * {@link APPROVAL_ROLE}, due `due` after it opens when given (§2.4: `30m`, `4h`, `3d`), whose routes
 * lead to the finishes `approved`, `denied` and `skipped`. The person decides `completed` with `next`
 * (the decision) and a `reason` (§3.2), which the client returns to the runtime.
 *
 * The text is not validated here: `baton approvals enable` validates it with `@baton/process`, the
 * parser `baton validate` uses, before publishing.
 */
export function approvalProcessSource(options: { tier: string; due?: string | undefined }): string {
  const { tier, due } = options;
  const inputs = Object.entries(APPROVAL_INPUTS).flatMap(([name, description]) => [
    `  ${name}:`,
    "    type: string",
    ...(name === "riskTier" ? [`    one_of: [${tier}]`] : []),
    ...(OPTIONAL_INPUTS.has(name as keyof typeof APPROVAL_INPUTS) ? ["    optional: true"] : []),
    `    description: ${description}`,
  ]);
  const routes = Object.entries(ROUTES).map(([to, when]) => `      - { to: ${to}, when: ${when} }`);
  const finishes = Object.keys(ROUTES).flatMap((to) => ["", `  - id: ${to}`, `    finish: ${to}`]);
  return [
    "---",
    `name: ${approvalProcessName(tier)}`,
    `description: Ask a person before an agent runs a ${tier}-risk tool call. They approve it, deny it, or let the agent go on without it.`,
    "inputs:",
    ...inputs,
    "steps:",
    `  - id: ${APPROVAL_STEP}`,
    `    person: ${APPROVAL_ROLE}`,
    "    task: |",
    `      An agent asks to run a ${tier}-risk tool call and waits for you. Read the tool`,
    "      (inputs.toolName), its arguments (inputs.argumentsPreview, with secrets redacted;",
    "      inputs.argumentsDigest identifies the exact call), the agent (inputs.agentId) and what it",
    "      is doing (inputs.context). Then choose approved if the call may run exactly as shown,",
    "      denied if it must not run, or skipped if the agent should go on without it. Say why in",
    "      your reason: the agent's runtime reads it.",
    ...(due ? [`    due: ${due}`] : []),
    "    next:",
    ...routes,
    ...finishes,
    "---",
    "",
    `# Tool approval: ${tier}`,
    "",
    `An agent's runtime starts this run before it makes a tool call it rates ${tier}-risk, and`,
    "holds the call until a person in the bound group decides. Approved: the call runs as shown.",
    "Denied: it does not run. Skipped: the agent goes on without it. If nobody decides before the",
    "runtime's own time-out, the runtime cancels the run and treats the call as denied.",
    "",
    "The run never holds the call's arguments: only their SHA-256 digest and a preview with",
    "secrets redacted. Generated by `baton approvals enable`.",
    "",
  ].join("\n");
}
