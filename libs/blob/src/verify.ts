import { type BlobStore, sha256Hex } from "./store.ts";

/**
 * What a file's stored object looks like at acceptance (§5 "the stored bytes still match the hash
 * recorded at upload"): `ok`, `mismatch` (other bytes under its key), or `missing` (removed).
 */
export type BlobCheck = "ok" | "mismatch" | "missing";

/**
 * Checks that the object under `key` still holds the bytes uploaded as `sha256` (§5).
 *
 * - With a recorded `etag` (recorded only after it was shown to equal the bytes' MD5): one HEAD; the
 *   same ETag proves the object unchanged without downloading it. A different ETag is not yet a
 *   mismatch (the same bytes written again another way, a multipart copy, carry another ETag):
 *   the bytes are then read and hashed.
 * - Without one (local disk, a store whose ETags are not MD5s): the bytes are read and hashed.
 *
 * Never trusts a checksum the store computes: s3rver and some stores return none. Throws
 * `BlobUnavailable` when the store does not answer.
 */
export async function verifyBlob(
  store: BlobStore,
  key: string,
  recorded: { sha256: string; etag: string | null },
): Promise<BlobCheck> {
  if (recorded.etag !== null) {
    const head = await store.head(key);
    if (!head) return "missing";
    if (head.etag === recorded.etag) return "ok";
  }
  const bytes = await store.get(key);
  if (!bytes) return "missing";
  return sha256Hex(bytes) === recorded.sha256 ? "ok" : "mismatch";
}
