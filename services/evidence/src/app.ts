import { randomId } from "@baton/auth";
import { type BlobStore, blobKey, orgPrefix, shaOfKey, verifyBlob } from "@baton/blob";
import {
  type Bus,
  CONTRACTS,
  type Envelope,
  type EvidenceCall,
  GC_MIN_AGE_MS,
  type GcPage,
  type HandlerReply,
  type Subscription,
  serve,
  type UploadIntent,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Db, files, idempotency, uploadIntents } from "@baton/db";
import type { Logger } from "@baton/kit";
import { iso } from "@baton/process";
import {
  type FileCheck,
  type FileMeta,
  fail,
  type Identity,
  ok,
  protocolError,
  type ToolResult,
  type UploadResult,
} from "@baton/protocol";
import { and, eq, gt, inArray, lte, sql } from "drizzle-orm";

/** What the evidence service needs. */
export interface EvidenceDeps {
  db: Db;
  bus: Bus;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
}

/**
 * The advisory lock of one stored object `<org>/<sha256>`, taken (for the transaction) by whoever
 * writes an upload intent for it and by orphan collection around its check and delete: an intent is
 * then either seen by the collector, or written after the object was deleted (and the upload PUTs it
 * again).
 */
export function objectLock(org: string, sha256: string) {
  return sql`select pg_advisory_xact_lock(hashtextextended(${objectLockKey(org, sha256)}, 0))`;
}

/** The text whose 64-bit hash is the advisory lock of `<org>/<sha256>` ({@link objectLock}). */
export function objectLockKey(org: string, sha256: string): string {
  return `baton-blob ${org}/${sha256}`;
}

/**
 * The evidence service (§5): records uploads whose bytes the gateway stored (idempotent on
 * `requestId`, §4) with the intent written before their PUT, verifies `file` evidence for the
 * engine, and resolves files for download.
 */
export function createEvidence(deps: EvidenceDeps) {
  const { db, bus, blobs, clock, log } = deps;
  let sub: Subscription | null = null;

  /** The answer recorded for `requestId`: the same call's result, `conflict` for another call, or null. */
  async function replay(
    org: string,
    requestId: string,
    fingerprint: string,
  ): Promise<ToolResult<UploadResult> | null> {
    const rows = await db
      .select()
      .from(idempotency)
      .where(and(eq(idempotency.org, org), eq(idempotency.requestId, requestId)));
    const row = rows[0];
    if (!row) return null;
    if (row.fingerprint === fingerprint) return row.result as ToolResult<UploadResult>;
    return fail<UploadResult>(
      protocolError(
        "conflict",
        `requestId ${requestId} was already used for a different call; send a new requestId`,
      ),
    );
  }

  /**
   * Before the gateway stores an upload's bytes: the earlier answer when the `requestId` was used
   * (nothing is stored then), else an intent for `<org>/<sha256>`, written under the object's lock.
   */
  async function intend(
    org: string,
    call: Extract<EvidenceCall, { op: "intent" }>,
  ): Promise<ToolResult<UploadIntent>> {
    const earlier = await replay(org, call.requestId, call.fingerprint);
    if (earlier) return ok({ kind: "replay", result: earlier });
    const intentId = randomId("ui_");
    await db.transaction(async (tx) => {
      await tx.execute(objectLock(org, call.sha256));
      await tx.insert(uploadIntents).values({
        id: intentId,
        org,
        sha256: call.sha256,
        bytes: call.bytes,
        createdAt: new Date(clock.now()),
      });
    });
    return ok({ kind: "intent", intentId });
  }

  async function abandon(org: string, intentId: string): Promise<null> {
    await db.delete(uploadIntents).where(and(eq(uploadIntents.org, org), eq(uploadIntents.id, intentId)));
    return null;
  }

  async function register(
    org: string,
    by: string,
    call: Extract<EvidenceCall, { op: "register" }>,
  ): Promise<ToolResult<UploadResult>> {
    const earlier = await replay(org, call.requestId, call.fingerprint);
    if (earlier) {
      await abandon(org, call.intentId);
      return earlier;
    }
    const id = randomId("f_");
    const result = ok<UploadResult>({ id, sha256: call.sha256, bytes: call.bytes });
    const now = new Date(clock.now());
    const stored = await db.transaction(async (tx) => {
      const inserted = await tx
        .insert(idempotency)
        .values({
          org,
          requestId: call.requestId,
          tool: "upload",
          fingerprint: call.fingerprint,
          result,
          createdAt: now,
        })
        .onConflictDoNothing()
        .returning({ requestId: idempotency.requestId });
      if (inserted.length === 0) return false;
      await tx.insert(files).values({
        org,
        id,
        sha256: call.sha256,
        bytes: call.bytes,
        contentType: call.contentType,
        fileName: call.fileName,
        createdBy: by,
        createdAt: now,
        etag: call.etag,
      });
      // The file now names the object: its intent has done its work.
      await tx
        .delete(uploadIntents)
        .where(and(eq(uploadIntents.org, org), eq(uploadIntents.id, call.intentId)));
      return true;
    });
    if (!stored) {
      await abandon(org, call.intentId);
      return (
        (await replay(org, call.requestId, call.fingerprint)) ??
        fail(protocolError("retry", "try again with the same requestId"))
      );
    }
    return result;
  }

  /**
   * §5 at acceptance: each ref is a file of this organization whose stored object is still the one
   * uploaded. With the ETag recorded at upload, one HEAD per file (no download); without one, the
   * bytes are read and hashed (`verifyBlob`). A store that does not answer throws: the engine
   * answers `retry` and accepts nothing.
   */
  async function verify(org: string, refs: string[]): Promise<Record<string, FileCheck>> {
    const unique = [...new Set(refs)];
    const rows = await db
      .select({ id: files.id, sha256: files.sha256, etag: files.etag })
      .from(files)
      .where(and(eq(files.org, org), inArray(files.id, unique)));
    const known = new Map(rows.map((r) => [r.id, r]));
    const checks = await Promise.all(
      unique.map(async (ref): Promise<[string, FileCheck]> => {
        const row = known.get(ref);
        if (!row) return [ref, { status: "not_found" }];
        const found = await verifyBlob(blobs, blobKey(org, row.sha256), row);
        if (found === "ok") return [ref, { status: "ok", sha256: row.sha256 }];
        log.warn({ org, file: ref, sha256: row.sha256, found }, "file evidence no longer matches its upload");
        return [ref, { status: found }];
      }),
    );
    return Object.fromEntries(checks);
  }

  async function get(org: string, id: string): Promise<FileMeta | null> {
    const rows = await db
      .select()
      .from(files)
      .where(and(eq(files.org, org), eq(files.id, id)));
    const row = rows[0];
    return row
      ? {
          id: row.id,
          sha256: row.sha256,
          bytes: row.bytes,
          contentType: row.contentType,
          fileName: row.fileName,
        }
      : null;
  }

  /** The metadata of the files of `org` among `ids` (for presigned URLs); unknown ids are left out. */
  async function meta(org: string, ids: string[]): Promise<Record<string, FileMeta>> {
    if (ids.length === 0) return {};
    const rows = await db
      .select()
      .from(files)
      .where(and(eq(files.org, org), inArray(files.id, [...new Set(ids)])));
    return Object.fromEntries(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          sha256: row.sha256,
          bytes: row.bytes,
          contentType: row.contentType,
          fileName: row.fileName,
        },
      ]),
    );
  }

  /**
   * One page of orphan collection (issue #10, `baton evidence gc`) in the caller's organization:
   * each object older than the age is deleted when no file record names it and no upload intent for
   * it is younger than the age. The check and the delete happen under the object's advisory lock,
   * the one an upload's intent is written under ({@link objectLock}), so a concurrent upload of the
   * same bytes either shows up in the check or PUTs them again after the delete. In a dry run
   * nothing is deleted. After the last page, intents older than the age (uploads that died between
   * intent and record) are dropped. Operators only.
   */
  async function gc(who: Identity, call: Extract<EvidenceCall, { op: "gc" }>): Promise<ToolResult<GcPage>> {
    if (!who.operator)
      return fail(protocolError("forbidden", "collecting unreferenced files needs the operator role"));
    // The values came as the operator sent them (bus catalog `EvidenceCall`): checked here.
    const { olderThanMs, dryRun, cursor, limit } = call;
    const issues: string[] = [];
    const age = typeof olderThanMs === "number" && Number.isSafeInteger(olderThanMs) ? olderThanMs : null;
    if (age === null || age < GC_MIN_AGE_MS)
      issues.push(
        `olderThanMs: a whole number of ms, at least ${GC_MIN_AGE_MS} (an upload in flight is younger)`,
      );
    if (typeof dryRun !== "boolean") issues.push("dryRun: true or false");
    if (cursor !== null && typeof cursor !== "string") issues.push("cursor: a key or null");
    const size =
      typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= 1000 ? limit : null;
    if (size === null) issues.push("limit: 1 to 1000");
    if (
      issues.length > 0 ||
      age === null ||
      typeof dryRun !== "boolean" ||
      (cursor !== null && typeof cursor !== "string") ||
      size === null
    )
      return fail(protocolError("invalid", "the collection cannot run; fix every issue listed", issues));
    const org = who.org;
    const cutoff = clock.now() - age;
    const prefix = orgPrefix(org);
    const page = await blobs.list(prefix, cursor, size);
    const out: GcPage = {
      examined: 0,
      deleted: [],
      keptYoung: 0,
      keptReferenced: 0,
      intentsDropped: 0,
      cursor: page.cursor,
    };
    for (const object of page.objects) {
      const sha256 = shaOfKey(object.key, prefix);
      // Only objects Baton wrote (`<org>/<sha256>`) are examined; anything else in the bucket is left alone.
      if (!sha256) continue;
      out.examined++;
      if (object.modifiedAt > cutoff) {
        out.keptYoung++;
        continue;
      }
      const verdict = await db.transaction(async (tx) => {
        await tx.execute(objectLock(org, sha256));
        const named = await tx
          .select({ id: files.id })
          .from(files)
          .where(and(eq(files.org, org), eq(files.sha256, sha256)))
          .limit(1);
        if (named.length > 0) return "referenced" as const;
        const intents = await tx
          .select({ id: uploadIntents.id })
          .from(uploadIntents)
          .where(
            and(
              eq(uploadIntents.org, org),
              eq(uploadIntents.sha256, sha256),
              gt(uploadIntents.createdAt, new Date(cutoff)),
            ),
          )
          .limit(1);
        if (intents.length > 0) return "young" as const;
        // Deleted while the lock is held: an intent for these bytes waits for the commit.
        if (!dryRun) await blobs.delete(object.key);
        return "deleted" as const;
      });
      if (verdict === "referenced") out.keptReferenced++;
      else if (verdict === "young") out.keptYoung++;
      else
        out.deleted.push({
          key: object.key,
          bytes: object.bytes,
          modifiedAt: iso(object.modifiedAt),
        });
    }
    if (!dryRun && page.cursor === null) {
      const dropped = await db
        .delete(uploadIntents)
        .where(and(eq(uploadIntents.org, org), lte(uploadIntents.createdAt, new Date(cutoff))))
        .returning({ id: uploadIntents.id });
      out.intentsDropped = dropped.length;
    }
    if (!dryRun && out.deleted.length > 0)
      log.info({ org, deleted: out.deleted.length, by: who.id }, "unreferenced files deleted");
    return ok(out);
  }

  async function handle(env: Envelope<EvidenceCall>): Promise<HandlerReply<typeof CONTRACTS.evidence>> {
    const who = env.identity;
    if (!who) throw new Error("evidence calls carry the caller's identity");
    const call = env.payload;
    switch (call.op) {
      case "intent":
        return intend(who.org, call);
      case "abandon":
        return abandon(who.org, call.intentId);
      case "register":
        return register(who.org, who.id, call);
      case "verify":
        return verify(who.org, call.refs);
      case "get":
        return get(who.org, call.id);
      case "meta":
        return meta(who.org, call.ids);
      case "gc":
        return gc(who, call);
      default: {
        const unreachable: never = call;
        throw new Error(`unknown evidence call ${JSON.stringify(unreachable)}`);
      }
    }
  }

  return {
    handle,
    async start() {
      sub = serve(bus, CONTRACTS.evidence, (_call, env) => handle(env), { log });
      log.info({ store: blobs.location }, "evidence started");
    },
    async stop() {
      await sub?.stop();
    },
  };
}
