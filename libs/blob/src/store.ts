import { createHash } from "node:crypto";

/**
 * One object in a blob store. `modifiedAt` is when the store last wrote it (epoch ms, the store's
 * clock); `etag` is the store's entity tag without quotes, or null where the store has none (local
 * disk).
 */
export interface StoredObject {
  key: string;
  bytes: number;
  modifiedAt: number;
  etag: string | null;
}

/**
 * What a `put` left behind. `etag` is the object's entity tag, but only when it was shown to match
 * the bytes just stored (the store's ETag equals their MD5): then a HEAD comparing ETags proves later
 * that the object is still the one uploaded. Null when the store cannot show that (local disk, S3
 * with SSE-KMS): verification then hashes the bytes. `written` is false when an identical object was
 * already there and no write was needed.
 */
export interface PutResult {
  etag: string | null;
  written: boolean;
}

/** How a presigned download presents the file (§5 `url`): its name and media type, and how long it works. */
export interface PresignOptions {
  fileName: string;
  contentType: string;
  /** Lifetime of the URL, seconds. */
  expiresInSeconds: number;
}

/**
 * Where file bytes live (ARCHITECTURE: "S3 holds file bytes, content-addressed by SHA-256 per
 * organization"; local disk for `baton dev` and single-host deployments). Bytes never cross the bus:
 * the gateway writes them here and the evidence service records and verifies them (§5).
 *
 * Every method throws {@link BlobUnavailable} when the store cannot be reached or answers with a
 * failure; an absent object is never an error (null).
 */
export interface BlobStore {
  /** `local` (a directory) or `s3` (a bucket). */
  readonly kind: "local" | "s3";
  /** Where the bytes are, for log lines and error messages (never a credential). */
  readonly location: string;
  /**
   * Stores `bytes` under `key`. Content-addressed, so an object already there with exactly these
   * bytes is kept; any other object under the key (a damaged one) is replaced, so a fresh upload
   * repairs it.
   */
  put(key: string, bytes: Buffer): Promise<PutResult>;
  /** The bytes under `key`, or null when absent. */
  get(key: string): Promise<Buffer | null>;
  /** The object under `key` without its bytes, or null when absent. */
  head(key: string): Promise<StoredObject | null>;
  /**
   * Objects whose keys start with `prefix`, in key order, at most `limit` (1–1000) per page, from
   * `cursor` (null for the first page). The returned `cursor` is null after the last page.
   */
  list(
    prefix: string,
    cursor: string | null,
    limit: number,
  ): Promise<{ objects: StoredObject[]; cursor: string | null }>;
  /** Removes the object under `key`; nothing happens when it is absent. */
  delete(key: string): Promise<void>;
  /**
   * A short-lived URL that downloads `key` directly from the store under `fileName`, or null when
   * the store cannot presign (local disk: the gateway signs its own `/files` URL instead).
   */
  presign(key: string, options: PresignOptions): Promise<string | null>;
  /** Resolves when the store answers (its bucket exists and the credentials may use it); else throws {@link BlobUnavailable}. */
  check(): Promise<void>;
}

/**
 * The store could not be reached, or refused the request. Callers answer `retry` (§4.3) and record
 * nothing; the message names the store and the cause, never a credential.
 */
export class BlobUnavailable extends Error {
  override name = "BlobUnavailable";
}

/** The content-addressed key of a file: `<org>/<sha256 hex>` (the organization percent-encoded). */
export function blobKey(org: string, sha256: string): string {
  return `${orgPrefix(org)}${sha256}`;
}

/** The key prefix of one organization's objects: `<org>/` (percent-encoded, so it holds no `/`). */
export function orgPrefix(org: string): string {
  return `${encodeURIComponent(org)}/`;
}

/** The SHA-256 a key names, or null when the key is not `<prefix><64 hex>` (an object Baton did not write). */
export function shaOfKey(key: string, prefix: string): string | null {
  if (!key.startsWith(prefix)) return null;
  const rest = key.slice(prefix.length);
  return /^[0-9a-f]{64}$/.test(rest) ? rest : null;
}

/** Lowercase hex SHA-256 of bytes. */
export function sha256Hex(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Lowercase hex MD5 of bytes: what S3 returns as the ETag of an object stored by one plain PUT. */
export function md5Hex(bytes: Buffer): string {
  return createHash("md5").update(bytes).digest("hex");
}

/**
 * A `Content-Disposition` that makes a browser download the file under its name (RFC 6266): an
 * ASCII `filename` fallback (quotes, backslashes and anything outside printable ASCII replaced by
 * `_`) and the exact name as `filename*` in UTF-8 (RFC 8187).
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const exact = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
