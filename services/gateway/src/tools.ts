import type { ClaimTokens, FileUrls } from "@baton/auth";
import { type BlobStore, blobKey, sha256Hex } from "@baton/blob";
import {
  type Bus,
  BusRemoteError,
  BusUnavailable,
  type EngineRead,
  type EngineWrite,
  type EvidenceCall,
  envelope,
  type RegistryCall,
  requestWithRetry,
  SUBJECTS,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import type { Logger } from "@baton/kit";
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
import type { CallContext, ToolHandler } from "./mcp.ts";

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
  fileUrls: FileUrls;
  settings: ToolSettings;
}

/**
 * Routes each tool call (tools.md) to the service that answers it, after the checks every call gets
 * first (ARCHITECTURE "Check order on writes"): the tool's argument schema (every issue at once, as
 * `invalid`), numbers JSON cannot hold exactly, and claim tokens that do not verify. Results get
 * short-lived file `url`s wherever run data is returned (§5).
 */
export function createToolRouter(deps: ToolDeps): ToolHandler {
  const { bus, clock, log, blobs, tokens, fileUrls, settings } = deps;
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

  function withUrls(data: RunData, org: string): RunData {
    const now = clock.now();
    const steps: RunData["steps"] = {};
    const add = <E extends { evidence?: { kind: string; ref: string; sha256?: string; url?: string }[] }>(
      c: E,
    ): E =>
      c.evidence
        ? {
            ...c,
            evidence: c.evidence.map((e) =>
              e.kind === "file" ? { ...e, url: fileUrls.sign(org, e.ref, now) } : e,
            ),
          }
        : c;
    for (const [id, step] of Object.entries(data.steps))
      steps[id] = { ...add(step), history: step.history.map(add) };
    return { inputs: data.inputs, steps };
  }

  function decorate(name: ToolName, result: ToolResult<unknown>, org: string): ToolResult<unknown> {
    if (!result.ok || result.data === null || typeof result.data !== "object") return result;
    const data = result.data as { data?: RunData };
    if (!data.data || !("steps" in data.data)) return result;
    if (name === "claim" || "run" in data)
      return { ok: true, data: { ...data, data: withUrls(data.data, org) } };
    return result;
  }

  async function upload(args: ToolArgs["upload"], who: Identity): Promise<ToolResult<UploadResult>> {
    const text = args.contentBase64.replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
      return fail(
        protocolError("invalid", "contentBase64 is not base64", ["contentBase64: not valid base64"]),
      );
    }
    const bytes = Buffer.from(text, "base64");
    if (bytes.length > settings.maxUploadBytes) {
      return fail(
        protocolError("invalid", "the file is larger than this server accepts", [
          `contentBase64: ${bytes.length} bytes, over describe.maxUploadBytes (${settings.maxUploadBytes})`,
        ]),
      );
    }
    const sha256 = sha256Hex(bytes);
    await blobs.put(blobKey(who.org, sha256), bytes);
    // The bytes are fingerprinted by their hash, so a replay is compared without keeping them.
    const fingerprint = requestFingerprint(
      "upload",
      { fileName: args.fileName, contentType: args.contentType, sha256 },
      who,
    );
    const payload: EvidenceCall = {
      op: "register",
      requestId: args.requestId,
      fingerprint,
      fileName: args.fileName,
      contentType: args.contentType,
      sha256,
      bytes: bytes.length,
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
      if (issues.length > 0 || !parsed.success) {
        return fail(
          protocolError("invalid", `arguments do not match ${name}; fix every issue listed`, issues),
        );
      }
      const result = await route(tool, parsed.data, who);
      return decorate(tool, result, who.org);
    },
  };
}
