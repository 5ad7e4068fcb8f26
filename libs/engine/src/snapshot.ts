import { createHash } from "node:crypto";
import { canonicalJson, type RunData } from "@baton/protocol";

/**
 * The snapshot (§3.4; ARCHITECTURE "Snapshot"): lowercase hex SHA-256 of the canonical run data
 * without the short-lived file `url`s. Run data inside the engine never holds urls (the shell adds them
 * to responses), so this hashes the data as stored.
 */
export function snapshotOf(data: RunData): string {
  return createHash("sha256").update(canonicalJson(data)).digest("hex");
}

/** UTF-8 size in bytes of a JSON value's canonical form: the measure of `limits.runDataBytes`. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(canonicalJson(value), "utf8");
}
