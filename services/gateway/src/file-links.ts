import type { FileUrls } from "@baton/auth";
import { type BlobStore, blobKey } from "@baton/blob";
import { type Bus, CONTRACTS, call } from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Logger } from "@baton/kit";
import type { FileMeta, Identity } from "@baton/protocol";

/** What {@link createFileLinks} needs. */
export interface FileLinkDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  fileUrls: FileUrls;
  /** Lifetime of a presigned URL, seconds (`BATON_FILE_URL_SECONDS`). */
  urlSeconds: number;
  /** How long a metadata lookup may wait on the evidence service, ms. */
  callTimeoutMs: number;
  attemptMs: number;
  /** Files whose metadata is kept (they never change once recorded). Default 10 000. */
  cacheSize?: number;
}

/** The short-lived `url`s of file evidence (§5 "Wherever run data is returned, give each file item a short-lived url"). */
export interface FileLinks {
  /** One URL per ref of `who`'s organization, each valid for the configured lifetime. Never throws. */
  urls(who: Identity, refs: readonly string[]): Promise<Map<string, string>>;
}

/**
 * File URLs for run data and journals (§5, issue #10):
 *
 * - S3: a presigned GET straight from the bucket, with `response-content-disposition` so a browser
 *   saves it under the file's name. The name and media type come from the evidence service (`meta`,
 *   one call for every file of a response the gateway has not seen yet) and are cached: a file record
 *   never changes. When the lookup fails, the gateway's signed link stands in (it redirects to a
 *   presigned GET when opened).
 * - Local disk: the gateway's own signed `/files/<id>` link (HMAC over org, id and expiry).
 */
export function createFileLinks(deps: FileLinkDeps): FileLinks {
  const { bus, clock, log, blobs, fileUrls, urlSeconds, callTimeoutMs, attemptMs } = deps;
  const cacheSize = deps.cacheSize ?? 10_000;
  const cache = new Map<string, FileMeta>();
  const cacheKey = (org: string, id: string) => `${org}\n${id}`;
  const remember = (org: string, meta: FileMeta) => {
    const key = cacheKey(org, meta.id);
    cache.delete(key);
    cache.set(key, meta);
    // Oldest first out: a Map iterates in insertion order.
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  async function lookup(who: Identity, ids: string[], deadline: number): Promise<void> {
    const missing = ids.filter((id) => !cache.has(cacheKey(who.org, id)));
    if (missing.length === 0) return;
    const found = await call(
      bus,
      CONTRACTS.evidence,
      { op: "meta", ids: missing },
      { identity: who, deadline, attemptMs },
    );
    for (const meta of Object.values(found)) remember(who.org, meta);
  }

  return {
    async urls(who, refs) {
      const now = clock.now();
      const unique = [...new Set(refs)];
      const out = new Map<string, string>();
      const signed = (ref: string) => fileUrls.sign(who.org, ref, now);
      if (blobs.kind !== "s3" || unique.length === 0) {
        for (const ref of unique) out.set(ref, signed(ref));
        return out;
      }
      try {
        await lookup(who, unique, Date.now() + callTimeoutMs);
      } catch (error) {
        log.warn({ err: String(error) }, "file metadata lookup failed; the gateway's signed links stand in");
      }
      await Promise.all(
        unique.map(async (ref) => {
          const meta = cache.get(cacheKey(who.org, ref));
          let url: string | null = null;
          if (meta) {
            url = await blobs
              .presign(blobKey(who.org, meta.sha256), {
                fileName: meta.fileName,
                contentType: meta.contentType,
                expiresInSeconds: urlSeconds,
              })
              .catch((error: unknown) => {
                log.warn({ err: String(error) }, "presigning a file url failed");
                return null;
              });
          }
          out.set(ref, url ?? signed(ref));
        }),
      );
      return out;
    },
  };
}
