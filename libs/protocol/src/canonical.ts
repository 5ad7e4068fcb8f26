import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { Identity } from "./identity.ts";

/** RFC 8785 canonical JSON of a JSON value. Throws on a value with no JSON form. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/**
 * The idempotency fingerprint of a write (§4): SHA-256 over the canonical tool name, arguments
 * without `requestId`, and caller. "Same arguments" means the same canonical JSON, so key order and
 * number spelling (`1.0` vs `1`) do not matter; a different caller is a different call, so one
 * identity can never replay another's result (a claim token, say).
 */
export function requestFingerprint(tool: string, args: Record<string, unknown>, caller: Identity): string {
  const { requestId: _requestId, ...rest } = args;
  return createHash("sha256")
    .update(
      canonicalJson({ tool, args: rest, caller: { org: caller.org, kind: caller.kind, id: caller.id } }),
    )
    .digest("hex");
}
