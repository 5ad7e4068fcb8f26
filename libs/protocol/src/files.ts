// What the evidence service tells the engine about a `file` evidence ref (§5).
import { z } from "zod";

/**
 * A `file` evidence ref's check (§5): the file exists in the caller's organization and its stored
 * bytes still match the hash recorded at upload (`ok`, with that SHA-256); no such file in the
 * organization (`not_found`); its object now holds other bytes (`mismatch`) or was removed
 * (`missing`), behind the server's back.
 */
export const FileCheck = z.discriminatedUnion("status", [
  z.strictObject({ status: z.literal("ok"), sha256: z.string() }),
  z.strictObject({ status: z.literal("not_found") }),
  z.strictObject({ status: z.literal("mismatch") }),
  z.strictObject({ status: z.literal("missing") }),
]);
export type FileCheck = z.infer<typeof FileCheck>;

/** A stored file's metadata, for a download (§5 `url`). */
export const FileMeta = z.strictObject({
  id: z.string(),
  sha256: z.string(),
  bytes: z.number(),
  contentType: z.string(),
  fileName: z.string(),
});
export type FileMeta = z.infer<typeof FileMeta>;
