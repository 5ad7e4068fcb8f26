/**
 * Identifiers and partitioning (ARCHITECTURE rule 5).
 *
 * Run ids are `r_` + 26 lowercase base32 characters; file ids `f_` + 26. Work item ids and claim ids are
 * per run (`w_<n>`, `c<n>`) and always travel with their run id.
 */

/** `^r_[a-z2-7]{26}$` — the run id form Baton issues. */
export const RUN_ID_PATTERN = /^r_[a-z2-7]{26}$/;

/** `^f_[a-z2-7]{26}$` — the file id form Baton issues. */
export const FILE_ID_PATTERN = /^f_[a-z2-7]{26}$/;

/** 32-bit FNV-1a over the UTF-16 code units of `text` (all ids are ASCII). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The partition of a run: `fnv1a32(runId) mod partitions` (ARCHITECTURE rule 5). */
export function partitionOf(runId: string, partitions: number): number {
  return fnv1a32(runId) % partitions;
}
