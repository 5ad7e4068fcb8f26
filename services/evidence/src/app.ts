import { randomId } from "@baton/auth";
import { type BlobStore, blobKey, sha256Hex } from "@baton/blob";
import {
  type Bus,
  CONTRACTS,
  type Envelope,
  type EvidenceCall,
  type HandlerReply,
  type Subscription,
  serve,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Db, files, idempotency } from "@baton/db";
import type { Logger } from "@baton/kit";
import {
  type FileCheck,
  type FileMeta,
  fail,
  ok,
  protocolError,
  type ToolResult,
  type UploadResult,
} from "@baton/protocol";
import { and, eq, inArray } from "drizzle-orm";

/** What the evidence service needs. */
export interface EvidenceDeps {
  db: Db;
  bus: Bus;
  blobs: BlobStore;
  clock: Clock;
  log: Logger;
}

/**
 * The evidence service (§5): records uploads whose bytes the gateway stored (idempotent on
 * `requestId`, §4), verifies `file` evidence for the engine, and resolves files for download.
 */
export function createEvidence(deps: EvidenceDeps) {
  const { db, bus, blobs, clock, log } = deps;
  let sub: Subscription | null = null;

  async function register(
    org: string,
    by: string,
    call: Extract<EvidenceCall, { op: "register" }>,
  ): Promise<ToolResult<UploadResult>> {
    const replay = async () => {
      const rows = await db
        .select()
        .from(idempotency)
        .where(and(eq(idempotency.org, org), eq(idempotency.requestId, call.requestId)));
      const row = rows[0];
      if (!row) return null;
      if (row.fingerprint === call.fingerprint) return row.result as ToolResult<UploadResult>;
      return fail<UploadResult>(
        protocolError(
          "conflict",
          `requestId ${call.requestId} was already used for a different call; send a new requestId`,
        ),
      );
    };
    const earlier = await replay();
    if (earlier) return earlier;
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
      });
      return true;
    });
    if (!stored) return (await replay()) ?? fail(protocolError("retry", "try again with the same requestId"));
    return result;
  }

  async function verify(org: string, refs: string[]): Promise<Record<string, FileCheck>> {
    const out: Record<string, FileCheck> = {};
    const unique = [...new Set(refs)];
    const rows = await db
      .select({ id: files.id, sha256: files.sha256 })
      .from(files)
      .where(and(eq(files.org, org), inArray(files.id, unique)));
    const known = new Map(rows.map((r) => [r.id, r.sha256]));
    for (const ref of unique) {
      const sha = known.get(ref);
      if (!sha) {
        out[ref] = { status: "not_found" };
        continue;
      }
      const bytes = await blobs.get(blobKey(org, sha));
      out[ref] = bytes && sha256Hex(bytes) === sha ? { status: "ok", sha256: sha } : { status: "mismatch" };
    }
    return out;
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

  async function handle(env: Envelope<EvidenceCall>): Promise<HandlerReply<typeof CONTRACTS.evidence>> {
    const who = env.identity;
    if (!who) throw new Error("evidence calls carry the caller's identity");
    const call = env.payload;
    switch (call.op) {
      case "register":
        return register(who.org, who.id, call);
      case "verify":
        return verify(who.org, call.refs);
      case "get":
        return get(who.org, call.id);
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
      log.info({}, "evidence started");
    },
    async stop() {
      await sub?.stop();
    },
  };
}
