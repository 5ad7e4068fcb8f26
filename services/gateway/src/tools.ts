import type { ClaimTokens } from "@baton/auth";
import { type BlobStore, blobKey, type PutResult, sha256Hex } from "@baton/blob";
import { type Bus, BusRemoteError, BusUnavailable, CONTRACTS, call, type EngineWrite } from "@baton/bus";
import type { CheckLimitSettings } from "@baton/check";
import type { Clock } from "@baton/clock";
import type { Logger } from "@baton/kit";
import {
  type ClaimResult,
  type DescribeResult,
  fail,
  formatArgIssues,
  type Identity,
  ok,
  partitionOf,
  protocolError,
  type RunData,
  type RunView,
  requestFingerprint,
  TOOL_ANNOTATIONS,
  TOOL_ARGS,
  TOOL_DESCRIPTIONS,
  TOOL_TITLES,
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
  /** The profiles this server offers (`describe.profiles`, §8). */
  profiles: readonly string[];
  /** The check profile's limits (check.md §5), published in `describe.limits`. */
  checkLimits: CheckLimitSettings;
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

/** Each tool's argument schema, typed by the tool, so a call's parsed arguments keep their tool's type. */
const ARGS: { [T in ToolName]: z.ZodType<ToolArgs[T]> } = TOOL_ARGS;

/** What answers one tool, given its parsed arguments and the caller. */
type Route<T extends ToolName> = (
  args: ToolArgs[T],
  who: Identity,
  trace: string | undefined,
) => Promise<ToolResult<unknown>>;

/**
 * Routes each tool call (tools.md) to the service that answers it, after the checks every call gets
 * first (ARCHITECTURE "Check order on writes"): the tool's argument schema (every issue at once, as
 * `invalid`), numbers JSON cannot hold exactly, and claim tokens that do not verify. Results get
 * short-lived file `url`s wherever run data is returned (§5).
 */
export function createToolRouter(deps: ToolDeps): ToolHandler {
  const { bus, log, blobs, tokens, fileLinks, settings } = deps;
  const offered = new Set<string>(settings.tools);
  const isOffered = (name: string): name is ToolName => offered.has(name);
  const tools: Tool[] = settings.tools.map((name) => {
    const schema = z.toJSONSchema(TOOL_ARGS[name], { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    const { $schema: _s, ...inputSchema } = schema;
    return {
      name,
      title: TOOL_TITLES[name],
      description: TOOL_DESCRIPTIONS[name],
      inputSchema: inputSchema as Tool["inputSchema"],
      annotations: { ...TOOL_ANNOTATIONS[name] },
    };
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
      checkPass: settings.checkLimits.pass,
      checkFail: settings.checkLimits.fail,
      checkConfidence: settings.checkLimits.confidence,
      checkStateBytes: settings.checkLimits.stateBytes,
    },
  };

  /**
   * How a tool's service call is sent: as the caller, within the call's time, resent when an attempt
   * gets no answer, on behalf of the tool call's `trace` (its `traceparent`, when spans are off).
   */
  const sent = (who: Identity, trace: string | undefined) => ({
    identity: who,
    deadline: Date.now() + settings.callTimeoutMs,
    attemptMs: settings.attemptMs,
    trace,
  });

  /**
   * Waits for one service call of a tool; a call the services could not complete in time (nobody
   * serving, a failure a retry may help) answers `retry`. Every call is safe to send again: writes
   * are idempotent on their `requestId` (uploads included) and fenced by the run's `rev`.
   */
  async function ask<T>(sending: Promise<T>): Promise<T | ToolResult<never>> {
    try {
      return await sending;
    } catch (error) {
      if (error instanceof BusUnavailable || error instanceof BusRemoteError) {
        log.warn({ subject: error.subject, err: error.message }, "service call failed");
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

  /** A write to one run, sent to the owner of the run's partition. */
  const write = <const W extends EngineWrite>(payload: W, who: Identity, trace: string | undefined) =>
    ask(
      call(bus, CONTRACTS.engineWrite, payload, {
        ...sent(who, trace),
        partition: partitionOf(payload.runId, settings.partitions),
      }),
    );

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
            evidence: c.evidence.map((e) => {
              const url = e.kind === "file" ? urls.get(e.ref) : undefined;
              return url === undefined ? e : { ...e, url };
            }),
          }
        : c;
    const steps: RunData["steps"] = {};
    for (const [id, step] of Object.entries(data.steps))
      steps[id] = { ...add(step), history: step.history.map(add) };
    return { inputs: data.inputs, steps };
  }

  /** A run view with a short-lived `url` on each file evidence item of its run data (§5). */
  async function viewWithUrls(result: ToolResult<RunView>, who: Identity): Promise<ToolResult<RunView>> {
    if (!result.ok || !result.data?.data || !("steps" in result.data.data)) return result;
    return ok({ ...result.data, data: await withUrls(result.data.data, who) });
  }

  /** A claim with a short-lived `url` on each file evidence item of its run data (§5). */
  async function claimWithUrls(
    result: ToolResult<ClaimResult>,
    who: Identity,
  ): Promise<ToolResult<ClaimResult>> {
    if (!result.ok || !result.data?.data || !("steps" in result.data.data)) return result;
    return ok({ ...result.data, data: await withUrls(result.data.data, who) });
  }

  /**
   * `upload` (tools.md upload, §5) without a shared disk: the gateway checks the arguments, asks the
   * evidence service for an intent (written to PostgreSQL before the PUT, or the earlier answer of
   * this `requestId`), writes the bytes to the blob store itself, then has the evidence service
   * record the file. Bytes never cross the bus. A store that is down is `retry` with nothing
   * recorded: the intent is dropped again.
   */
  async function upload(
    args: ToolArgs["upload"],
    who: Identity,
    trace: string | undefined,
  ): Promise<ToolResult<UploadResult>> {
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
    const intent = await ask(
      call(
        bus,
        CONTRACTS.evidence,
        { op: "intent", requestId: args.requestId, fingerprint, sha256, bytes: bytes.length },
        sent(who, trace),
      ),
    );
    if (!intent.ok) return intent;
    if (intent.data.kind === "replay") return intent.data.result;
    const intentId = intent.data.intentId;
    let put: PutResult;
    try {
      put = await blobs.put(blobKey(who.org, sha256), bytes);
    } catch (error) {
      log.warn({ err: String(error), store: blobs.location }, "upload: the file store failed");
      await ask(call(bus, CONTRACTS.evidence, { op: "abandon", intentId }, sent(who, trace)));
      return fail(
        protocolError(
          "retry",
          "the file store cannot be reached now; nothing was stored; retry with the same requestId",
        ),
      );
    }
    const register = {
      op: "register",
      requestId: args.requestId,
      fingerprint,
      fileName: args.fileName,
      contentType: args.contentType,
      sha256,
      bytes: bytes.length,
      intentId,
      etag: put.etag,
    } as const;
    return ask(call(bus, CONTRACTS.evidence, register, sent(who, trace)));
  }

  /** The claim a token carries, or `invalid` when the token does not verify (ARCHITECTURE "Check order on writes"). */
  function withToken(
    token: string,
    send: (claim: { runId: string; claimId: string }) => Promise<ToolResult<unknown>>,
  ): Promise<ToolResult<unknown>> {
    const claim = tokens.read(token);
    return claim ? send(claim) : Promise.resolve(badToken());
  }

  const routes: { [T in ToolName]: Route<T> } = {
    describe: async () => ok(describe),
    list_processes: (args, who, trace) =>
      ask(call(bus, CONTRACTS.registry, { op: "list_processes", args }, sent(who, trace))),
    get_run: async (args, who, trace) =>
      viewWithUrls(
        await ask(call(bus, CONTRACTS.engineRead, { tool: "get_run", args }, sent(who, trace))),
        who,
      ),
    get_work: (args, who, trace) =>
      ask(call(bus, CONTRACTS.engineRead, { tool: "get_work", args }, sent(who, trace))),
    list_runs: (args, who, trace) =>
      ask(call(bus, CONTRACTS.engineRead, { tool: "list_runs", args }, sent(who, trace))),
    start_run: async (args, who, trace) => {
      const runId = settings.runIdFor(who.org, args.requestId);
      return viewWithUrls(await write({ tool: "start_run", args, runId }, who, trace), who);
    },
    claim: async (args, who, trace) =>
      claimWithUrls(await write({ tool: "claim", args, runId: args.runId }, who, trace), who),
    decide: async (args, who, trace) =>
      viewWithUrls(await write({ tool: "decide", args, runId: args.runId }, who, trace), who),
    cancel: async (args, who, trace) =>
      viewWithUrls(await write({ tool: "cancel", args, runId: args.runId }, who, trace), who),
    send_event: (args, who, trace) => write({ tool: "send_event", args, runId: args.runId }, who, trace),
    renew: (args, who, trace) =>
      withToken(args.token, (claim) => write({ tool: "renew", args, ...claim }, who, trace)),
    submit: (args, who, trace) =>
      withToken(args.token, async (claim) =>
        viewWithUrls(await write({ tool: "submit", args, ...claim }, who, trace), who),
      ),
    escalate: (args, who, trace) =>
      withToken(args.token, async (claim) =>
        viewWithUrls(await write({ tool: "escalate", args, ...claim }, who, trace), who),
      ),
    upload: (args, who, trace) => upload(args, who, trace),
  };

  /** Checks a call's arguments against its tool's schema (every issue at once), then routes it. */
  async function callTool<T extends ToolName>(
    tool: T,
    raw: unknown,
    who: Identity,
    context: CallContext,
  ): Promise<ToolResult<unknown>> {
    const parsed = ARGS[tool].safeParse(raw, { reportInput: true });
    const issues = parsed.success ? [] : formatArgIssues(parsed.error.issues);
    for (const n of context.problems) issues.push(`${n.path}: ${n.problem}`);
    // Bounds on what a caller sends (issue #12), listed with the schema's issues.
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
      return fail(protocolError("invalid", `arguments do not match ${tool}; fix every issue listed`, issues));
    }
    return routes[tool](parsed.data, who, context.trace);
  }

  return {
    tools,
    has: (name) => offered.has(name),
    async call(name, raw, who, context: CallContext) {
      // The MCP layer calls only tools this router lists (`has`).
      if (!isOffered(name)) throw new Error(`${name} is not a tool this server offers`);
      return callTool(name, raw, who, context);
    },
  };
}
