import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * The content hash of a published version (specification §6 rule 5): lowercase hex SHA-256 over
 * the RFC 8785 canonical JSON of the parsed frontmatter, one `\n`, then the body exactly as written,
 * all UTF-8. `frontmatter` must be plain JSON values (what {@link parseProcess} stores in
 * `Process.frontmatter`); `body` is everything after the closing delimiter line, byte for byte.
 *
 * Throws only when `frontmatter` is not JSON: NaN or Infinity, a lone surrogate in a string, a
 * cycle, or a value with no JSON form at the top (e.g. `undefined`). The parser refuses all of these
 * before hashing, so a parsed process always hashes.
 */
export function contentHash(frontmatter: unknown, body: string): string {
  const canonical = canonicalize(frontmatter);
  if (canonical === undefined) throw new TypeError("contentHash: frontmatter has no JSON form");
  return createHash("sha256")
    .update(canonical, "utf8")
    .update("\n", "utf8")
    .update(body, "utf8")
    .digest("hex");
}
