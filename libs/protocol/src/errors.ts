import { z } from "zod";

/** The seven error codes of specification §4.3. */
export const ERROR_CODES = [
  "invalid",
  "not_accepted",
  "stale",
  "conflict",
  "forbidden",
  "not_found",
  "retry",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * A protocol error as a value (tools.md: `{ ok: false, error: { code, message, issues? } }`).
 * Engine and service functions return these; they never throw them.
 */
export interface ProtocolError {
  code: ErrorCode;
  message: string;
  issues?: string[];
}

/**
 * The schema of a {@link ProtocolError} (tools.md `error`; `conformance/schemas/core-2/tool-error.json`),
 * for checking one that arrives over the bus.
 */
export const ProtocolError = z.strictObject({
  code: z.enum(ERROR_CODES),
  message: z.string(),
  issues: z.array(z.string()).exactOptional(),
}) satisfies z.ZodType<ProtocolError>;

/** A tool result exactly as tools.md shapes it. */
export type ToolResult<T> = { ok: true; data: T } | { ok: false; error: ProtocolError };

/** The most issues one error lists before a last issue that counts the rest. */
export const MAX_ERROR_ISSUES = 200;

/**
 * `issues` as an error carries them: all of them up to {@link MAX_ERROR_ISSUES} + 1, else the first
 * {@link MAX_ERROR_ISSUES} and `… and N more issues; fix these first`. Every issue at once (§6 rule 3)
 * is what a client can act on; a list of 50,000 item errors would not fit one bus message (NATS 1 MB)
 * and tells nothing the first 200 do not. `handoff.issues` (§3.3) is kept with the same bound.
 */
export function capIssues(issues: readonly string[]): string[] {
  // Up to one more than the bound is kept as it is, so capping a capped list changes nothing.
  if (issues.length <= MAX_ERROR_ISSUES + 1) return [...issues];
  const rest = issues.length - MAX_ERROR_ISSUES;
  return [
    ...issues.slice(0, MAX_ERROR_ISSUES),
    `… and ${rest.toLocaleString("en-US")} more issues; fix these first`,
  ];
}

/**
 * Builds a {@link ProtocolError}; `issues` is left out when empty so the wire shape stays minimal, and
 * bounded by {@link capIssues}.
 */
export function protocolError(code: ErrorCode, message: string, issues?: readonly string[]): ProtocolError {
  return issues && issues.length > 0 ? { code, message, issues: capIssues(issues) } : { code, message };
}

/** The schema of a {@link ToolResult} whose `data` is checked by `data`. */
export function toolResult<T>(data: z.ZodType<T>): z.ZodType<ToolResult<T>> {
  return z.union([
    z.strictObject({ ok: z.literal(true), data }),
    z.strictObject({ ok: z.literal(false), error: ProtocolError }),
  ]);
}

/** `{ ok: true, data }`. */
export function ok<T>(data: T): ToolResult<T> {
  return { ok: true, data };
}

/** `{ ok: false, error }`. */
export function fail<T = never>(error: ProtocolError): ToolResult<T> {
  return { ok: false, error };
}

/** The `conflict` issue strings tools.md names. */
export const CONFLICT = {
  runEnded: "run_ended",
  alreadyDecided: "already_decided",
  claimedByOther: "claimed_by_other",
  claimedByYou: "claimed_by_you",
  notReady: "not_ready",
} as const;

/** `conflict` with `issues: ["run_ended"]` (§3.5): every write to an ended run other than a replay. */
export function runEnded(runId: string): ProtocolError {
  return protocolError("conflict", `run ${runId} has ended; no further writes are accepted`, [
    CONFLICT.runEnded,
  ]);
}

/** Type guard for a {@link ProtocolError} value. */
export function isProtocolError(value: unknown): value is ProtocolError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    (ERROR_CODES as readonly string[]).includes((value as { code: string }).code) &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
