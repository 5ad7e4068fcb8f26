import type { ClaimTokens } from "@baton/auth";
import { type BlobStore, blobKey, type PutResult, sha256Hex } from "@baton/blob";
import {
  type Bus,
  BusRemoteError,
  BusUnavailable,
  type Clock,
  type EngineRead,
  type EngineWrite,
  type EvidenceCall,
  envelope,
  type Logger,
  type RegistryCall,
  requestWithRetry,
  SUBJECTS,
  type UploadIntent,
} from "@baton/bus";
import {
  type DescribeResult,
  fail,
  formatArgIssues,
  type Identity,
  ok,
  partitionOf,
  protocolError,
  type RunData,
  requestFingerprint,
  TOOL_ARGS,
  TOOL_DESCRIPTIONS,
  type ToolArgs,
  type ToolName,
  type ToolResult,
  type UploadResult,
} from "@baton/protocol";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { FileLinks } from "./file-links.ts";
import { callLimitProblems } from "./limits.ts";
import type { CallContext, ToolHandler } from "./mcp.ts";
import { checkUpload } from "./upload.ts";

/** Gateway settings the tools need. */
export interface ToolSettings {
  partitions: number;
  leaseSeconds: number;
  runDataBytes: number;
  maxUploadBytes: number;
  /** The tools this server offers (`describe.tools`, the MCP tool list). */
  tools: readonly ToolName[];
  profiles: readonly string[];
  /** How long a tool call may wait on the services, ms (wall clock). */
  callTimeoutMs: number;
  /**
   * How long one attempt of a call waits before it is sent again, ms. Every call routed here is
   * safe to send again: writes are idempotent on their `requestId` (uploads included) and fenced
   * by the run's `rev`; the rest are reads.
   */
  attemptMs: number;
  /** Derives the deterministic run id of a `start_run` (auth `runIdFor`). */
  runIdFor: (org: string, requestId: string) => string;
}

/** What the tool router needs. */
export interface ToolDeps {
  bus: Bus;
  clock: Clock;
  log: Logger;
  blobs: BlobStore;
  tokens: ClaimTokens;
  fileLinks: FileLinks;
  settings: ToolSettings;
}

/**
 * Routes each tool call (tools.md) to the service that answers it, after the checks every call gets
 * first (ARCHITECTURE "Check order on writes"): the tool's argument schema (every issue at once, as
 * `invalid`), numbers JSON cannot hold exactly, and claim tokens that do not verify. Results get
 * short-lived file `url`s wherever run data is returned (§5).
 */
export function createToolRouter(deps: ToolDeps): ToolHandler {
  const { bus, log, blobs, tokens, fileLinks, settings } = deps;
  const offered = new Set<string>(settings.tools);
  const tools: Tool[] = settings.tools.map((name) => {
    const schema = z.toJSONSchema(TOOL_ARGS[name], { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    const { $schema: _s, ...inputSchema } = schema;
    return { name, description: TOOL_DESCRIPTIONS[name], inputSchema: inputSchema as Tool["inputSchema"] };
  });
  const describe: DescribeResult = {
    protocol: "agentprocess",
    version: "core-2",
    profiles: [...settings.profiles],
    leaseSeconds: settings.leaseSeconds,
    person: { format: "email" },
    tools: [...settings.tools],
    maxUploadBytes: settings.maxUploadBytes,
    limits: {
      runDataBytes: settings.runDataBytes,
      checkPass: 0.9,
      checkFail: null,
      checkConfidence: 0.8,
      checkStateBytes: 65_536,
    },
  };

  async function call<T>(
    subject: string,
    type: string,
    who: Identity,
    payload: unknown,
  ): Promise<ToolResult<T>> {
    const deadline = Date.now() + settings.callTimeoutMs;
    try {
      return (await requestWithRetry(bus, subject, envelope(type, who, payload, deadline), deadline, {
        attemptMs: settings.attemptMs,
      })) as ToolResult<T>;
    } catch (error) {
      if (error instanceof BusUnavailable || error instanceof BusRemoteError) {
        log.warn({ subject, type, err: error.message }, "service call failed");
        return fail(
          protocolError(
            "retry",
            "the server could not complete this call now; retry with the same requestId",
          ),
        );
      }
      throw error;
    }
  }

  const writeTo = (runId: string) => SUBJECTS.engineWrite(partitionOf(runId, settings.partitions));

  function badToken(): ToolResult<never> {
    return fail(
      protocolError("invalid", "the token does not verify", [
        "token: not a token this server issued; use the token from your latest claim or renew",
      ]),
    );
  }

  /** Run data with a short-lived `url` on every file evidence item, current and in history (§5). */
  async function withUrls(data: RunData, who: Identity): Promise<RunData> {
    type Completion = { evidence?: { kind: string; ref: string; sha256?: string; url?: string }[] };
    const completions: Completion[] = Object.values(data.steps).flatMap((step) => [step, ...step.history]);
    const refs = completions.flatMap((c) =>
      (c.evidence ?? []).filter((e) => e.kind === "file").map((e) => e.ref),
    );
    if (refs.length === 0) return data;
    const urls = await fileLinks.urls(who, refs);
    const add = <E extends Completion>(c: E): E =>
      c.evidence
        ? {
            ...c,
            evidence: c.evidence.map((e) =>
              e.kind === "file" ? { ...e, url: urls.get(e.ref) as string } : e,
            ),
          }
        : c;
    const steps: RunData["steps"] = {};
    for (const [id, step] of Object.entries(data.steps))
      steps[id] = { ...add(step), history: step.history.map(add) };
    return { inputs: data.inputs, steps };
  }

  async function decorate(
    name: ToolName,
    result: ToolResult<unknown>,
    who: Identity,
  ): Promise<ToolResult<unknown>> {
    if (!result.ok || result.data === null || typeof result.data !== "object") return result;
    const data = result.data as { data?: RunData };
    if (!data.data || !("steps" in data.data)) return result;
    if (name === "claim" || "run" in data)
      return { ok: true, data: { ...data, data: await withUrls(data.data, who) } };
    return result;
  }

  /**
   * `upload` (tools.md upload, §5) without a shared disk: the gateway checks the arguments, asks the
   * evidence service for an intent (written to PostgreSQL before the PUT, or the earlier answer of
   * this `requestId`), writes the bytes to the blob store itself, then has the evidence service
   * record the file. Bytes never cross the bus. A store that is down is `retry` with nothing
   * recorded: the intent is dropped again.
   */
  async function upload(args: ToolArgs["upload"], who: Identity): Promise<ToolResult<UploadResult>> {
    const checked = checkUpload(args, settings.maxUploadBytes);
    if (!checked.ok) {
      return fail(
        protocolError("invalid", "the upload cannot be stored; fix every issue listed", checked.issues),
      );
    }
    const bytes = checked.bytes;
    const sha256 = sha256Hex(bytes);
    // The bytes are fingerprinted by their hash, so a replay is compared without keeping them.
    const fingerprint = requestFingerprint(
      "upload",
      { fileName: args.fileName, contentType: args.contentType, sha256 },
      who,
    );
    const intent = await call<UploadIntent>(SUBJECTS.evidence, "evidence.intent", who, {
      op: "intent",
      requestId: args.requestId,
      fingerprint,
      sha256,
      bytes: bytes.length,
    } satisfies EvidenceCall);
    if (!intent.ok) return intent;
    if (intent.data.kind === "replay") return intent.data.result as ToolResult<UploadResult>;
    const intentId = intent.data.intentId;
    let put: PutResult;
    try {
      put = await blobs.put(blobKey(who.org, sha256), bytes);
    } catch (error) {
      log.warn({ err: String(error), store: blobs.location }, "upload: the file store failed");
      await call(SUBJECTS.evidence, "evidence.abandon", who, {
        op: "abandon",
        intentId,
      } satisfies EvidenceCall);
      return fail(
        protocolError(
          "retry",
          "the file store cannot be reached now; nothing was stored; retry with the same requestId",
        ),
      );
    }
    const payload: EvidenceCall = {
      op: "register",
      requestId: args.requestId,
      fingerprint,
      fileName: args.fileName,
      contentType: args.contentType,
      sha256,
      bytes: bytes.length,
      intentId,
      etag: put.etag,
    };
    return call<UploadResult>(SUBJECTS.evidence, "evidence.register", who, payload);
  }

  async function route(name: ToolName, args: unknown, who: Identity): Promise<ToolResult<unknown>> {
    switch (name) {
      case "describe":
        return ok(describe);
      case "list_processes": {
        const payload: RegistryCall = { op: "list_processes", args: args as ToolArgs["list_processes"] };
        return call(SUBJECTS.registry, "registry.list_processes", who, payload);
      }
      case "get_run":
      case "get_work":
      case "list_runs":
        return call(SUBJECTS.engineRead, `engine.${name}`, who, { tool: name, args } as EngineRead);
      case "start_run": {
        const a = args as ToolArgs["start_run"];
        const runId = settings.runIdFor(who.org, a.requestId);
        const payload: EngineWrite = { tool: "start_run", args: a, runId };
        return call(writeTo(runId), "engine.start_run", who, payload);
      }
      case "claim":
      case "decide":
      case "cancel":
      case "send_event": {
        const a = args as { runId: string };
        const payload = { tool: name, args, runId: a.runId } as EngineWrite;
        return call(writeTo(a.runId), `engine.${name}`, who, payload);
      }
      case "renew":
      case "submit":
      case "escalate": {
        const a = args as { token: string };
        const claim = tokens.read(a.token);
        if (!claim) return badToken();
        const payload = { tool: name, args, runId: claim.runId, claimId: claim.claimId } as EngineWrite;
        return call(writeTo(claim.runId), `engine.${name}`, who, payload);
      }
      case "upload":
        return upload(args as ToolArgs["upload"], who);
      default: {
        const unreachable: never = name;
        throw new Error(`unknown tool ${String(unreachable)}`);
      }
    }
  }

  return {
    tools,
    has: (name) => offered.has(name),
    async call(name, raw, who, context: CallContext) {
      const tool = name as ToolName;
      const parsed = TOOL_ARGS[tool].safeParse(raw, { reportInput: true });
      const issues = parsed.success ? [] : formatArgIssues(parsed.error.issues);
      for (const n of context.problems) issues.push(`${n.path}: ${n.problem}`);
      if (raw !== null && typeof raw === "object")
        issues.push(
          ...callLimitProblems(
            tool,
            raw as Record<string, unknown>,
            context.bodyBytes ?? 0,
            settings.runDataBytes,
          ),
        );
      if (issues.length > 0 || !parsed.success) {
        return fail(
          protocolError("invalid", `arguments do not match ${name}; fix every issue listed`, issues),
        );
      }
      const result = await route(tool, parsed.data, who);
      return decorate(tool, result, who);
    },
  };
}
