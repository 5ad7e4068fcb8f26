import { createHash } from "node:crypto";
import { canonicalJson } from "@baton/protocol";
import type { Decision } from "./process.ts";

/**
 * An approval request, as an agent runtime's kernel defines one: the tool call, its risk tier, the
 * agent, the caller's run and some context, under the request's own id.
 */
export interface ApprovalRequest {
  /**
   * The request's own id, 1–128 characters, unique in the organization: the `requestId` of the
   * `start_run` that asks (§4). Asking again with the same id and the same request returns the same
   * run and, once decided, the same decision: a runtime that restarts asks again with it.
   */
  id: string;
  /** The tool the agent wants to call. */
  toolName: string;
  /** The call's arguments. Never sent: only their digest and a redacted preview ({@link approvalInputs}). */
  arguments: unknown;
  /** The risk tier: the request goes to the process `tool-approval-<riskTier>`. */
  riskTier: string;
  /** The agent that wants to make the call. */
  agentId: string;
  /** The caller's own run (session, task) the call belongs to. */
  callerRunId?: string;
  /** What the agent is doing and why; an object is sent as its JSON text. */
  context?: string | Record<string, unknown>;
  /** A preview the caller made itself (already redacted), in place of {@link redactedPreview}'s. */
  preview?: string;
}

/** How long a request may wait, and how a caller stops waiting. */
export interface RequestOptions {
  /**
   * How long to wait for a person, ms from the call. When it passes, the run is cancelled and the
   * answer is `denied` (or the decision a person recorded at that moment).
   */
  timeoutMs: number;
  /**
   * Stops waiting without cancelling anything (the runtime is shutting down): the call rejects with
   * an `AbortError` and the run stays open; ask again with the same id to pick up the decision.
   */
  signal?: AbortSignal;
}

/** What an agent runtime calls before a risky tool call: blocks until a decision (or the time-out's `denied`). */
export interface ApprovalHandler {
  request(req: ApprovalRequest, options: RequestOptions): Promise<Decision>;
}

/** Keys whose values never leave the runtime: matched anywhere in a key, case-insensitively. */
const SECRET_KEY =
  /passw(or)?d|passphrase|^pass$|pwd|secret|token|api[-_]?key|authori[sz]ation|^auth$|credential|cookie|private[-_]?key|signature|session([-_]?(id|key))?$/i;
/** Values that look like credentials whatever their key: bearer tokens and well-known key prefixes. */
const SECRET_VALUE =
  /^(bearer\s|basic\s|sk-|sk_live_|rk_live_|ghp_|gho_|github_pat_|xox[abprs]-|AKIA|ASIA|eyJ[A-Za-z0-9_-]{10,}\.)/i;

/** Bounds of a preview: characters per string, items per list, keys per object, depth, and in all. */
export const PREVIEW_LIMITS = { string: 200, items: 20, keys: 40, depth: 6, total: 2000 } as const;

/**
 * A preview of a tool call's arguments for a person to read: JSON with the value of every key that
 * names a secret (`password`, `token`, `apiKey`, `authorization`, …) and every value that looks like a
 * credential (`Bearer …`, `sk-…`, a JWT, …) replaced by `"[redacted]"`, strings cut at 200 characters,
 * lists at 20 items, objects at 40 keys, nesting at depth 6, and the whole text at 2,000 characters.
 */
export function redactedPreview(args: unknown): string {
  const L = PREVIEW_LIMITS;
  const walk = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") {
      if (SECRET_VALUE.test(value)) return "[redacted]";
      return value.length > L.string ? `${value.slice(0, L.string)}… (${value.length} characters)` : value;
    }
    if (value === null || typeof value !== "object") return typeof value === "bigint" ? String(value) : value;
    if (depth >= L.depth) return Array.isArray(value) ? "[…]" : "{…}";
    if (Array.isArray(value)) {
      const shown = value.slice(0, L.items).map((v) => walk(v, depth + 1));
      if (value.length > L.items) shown.push(`… (${value.length - L.items} more items)`);
      return shown;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    const out: Record<string, unknown> = {};
    for (const [key, v] of entries.slice(0, L.keys))
      out[key] = SECRET_KEY.test(key) ? "[redacted]" : walk(v, depth + 1);
    if (entries.length > L.keys) out["…"] = `${entries.length - L.keys} more keys`;
    return out;
  };
  const text = JSON.stringify(walk(args, 0), null, 2) ?? "null";
  return text.length > L.total ? `${text.slice(0, L.total)}… (${text.length} characters)` : text;
}

/** SHA-256 (hex) of the arguments' RFC 8785 canonical JSON: the same call has the same digest. */
export function argumentsDigest(args: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(args === undefined ? null : args))
    .digest("hex");
}

/**
 * The inputs of the `tool-approval-<tier>` run for `req` (`APPROVAL_INPUTS`): never the arguments
 * themselves, only their digest and a preview. The same request always gives the same inputs, so
 * asking again replays the same `start_run` (§4).
 */
export function approvalInputs(req: ApprovalRequest): Record<string, string> {
  const inputs: Record<string, string> = {
    toolName: req.toolName,
    argumentsDigest: argumentsDigest(req.arguments),
    argumentsPreview: req.preview ?? redactedPreview(req.arguments),
    riskTier: req.riskTier,
    agentId: req.agentId,
  };
  if (req.callerRunId !== undefined) inputs.callerRunId = req.callerRunId;
  if (req.context !== undefined)
    inputs.context = typeof req.context === "string" ? req.context : canonicalJson(req.context);
  return inputs;
}
