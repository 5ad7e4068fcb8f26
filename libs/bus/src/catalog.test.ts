import type { Logger } from "@baton/kit";
import type { Identity } from "@baton/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { MalformedMessage, runHandler } from "./bus.ts";
import { CONTRACTS, SUBJECTS } from "./catalog.ts";
import { call, serve, setCallChecks } from "./contract.ts";
import { InProcessBus } from "./in-process.ts";
import { envelope, requestWithRetry } from "./retry.ts";
import { childTraceparent, newTraceparent, TRACEPARENT } from "./trace.ts";

/**
 * Issue #9: one contract per bus message. A typed `serve` checks every message before its handler
 * sees it and answers one that breaks the schema with a structured error naming the subject and the
 * issues (logged once); a typed `call` is checked by the compiler, and by the contract when its
 * checks are on (tests); the envelope carries W3C trace context.
 */

const WHO: Identity = { org: "default", kind: "agent", id: "a_1", groups: [], operator: false };
const soon = () => Date.now() + 5_000;

/** A logger that keeps its warnings. */
function recording(): Logger & { warnings: unknown[] } {
  const warnings: unknown[] = [];
  return { warnings, info() {}, error() {}, debug() {}, warn: (obj) => void warnings.push(obj) };
}

afterEach(() => {
  setCallChecks(true);
});

describe("serve: a message that breaks its subject's schema never reaches the handler (issue #9)", () => {
  it("answers a malformed payload with MalformedMessage naming the subject and every issue, logged once", async () => {
    const bus = new InProcessBus();
    const log = recording();
    let handled = 0;
    serve(
      bus,
      CONTRACTS.engineRead,
      async () => {
        handled++;
        return { ok: true, data: { items: [], nextCursor: null } };
      },
      { log },
    );
    const bad = envelope("engine.get_run", WHO, { tool: "get_run", args: { runId: 7, extra: true } }, soon());
    const refused = await requestWithRetry(bus, SUBJECTS.engineRead, bad).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MalformedMessage);
    expect(refused).toMatchObject({
      code: "invalid",
      subject: "engine.read",
      retryable: false,
      issues: [
        "payload.args.runId: expected string, got number",
        "payload.args.extra: not an argument of this tool",
      ],
    });
    expect(handled).toBe(0);
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toMatchObject({
      subject: "engine.read",
      issues: (refused as MalformedMessage).issues,
    });
    // The service keeps serving.
    const fine = envelope("engine.get_run", WHO, { tool: "get_run", args: { runId: "r_1" } }, soon());
    expect(await requestWithRetry(bus, SUBJECTS.engineRead, fine)).toEqual({
      ok: true,
      data: { items: [], nextCursor: null },
    });
    expect(handled).toBe(1);
    await bus.close();
  });

  it("a subject that serves callers refuses an envelope without an identity; tick may come from the server", async () => {
    const bus = new InProcessBus();
    const log = recording();
    serve(bus, CONTRACTS.registry, async () => ({ ok: true, data: { items: [], nextCursor: null } }), {
      log,
    });
    serve(bus, CONTRACTS.engineWrite, async () => ({ committed: false, rev: null }), { log, partition: 3 });
    const anonymous = envelope("registry.list_processes", null, { op: "list_processes", args: {} }, soon());
    await expect(requestWithRetry(bus, SUBJECTS.registry, anonymous)).rejects.toMatchObject({
      name: "MalformedMessage",
      subject: "registry",
      issues: ["identity: required: this subject serves callers"],
    });
    const tick = envelope("engine.tick", null, { tool: "tick", runId: "r_1" }, soon());
    expect(await requestWithRetry(bus, SUBJECTS.engineWrite(3), tick)).toEqual({
      committed: false,
      rev: null,
    });
    await bus.close();
  });

  it("a token tool's write must carry the claim id its token verified to", async () => {
    const bus = new InProcessBus();
    serve(bus, CONTRACTS.engineWrite, async () => ({ committed: false, rev: null }), {
      log: recording(),
      partition: 0,
    });
    const args = { token: "t", note: "help", requestId: "q_1" };
    const noClaim = envelope("engine.escalate", WHO, { tool: "escalate", args, runId: "r_1" }, soon());
    await expect(requestWithRetry(bus, SUBJECTS.engineWrite(0), noClaim)).rejects.toMatchObject({
      issues: ["payload.claimId: required"],
    });
    await bus.close();
  });

  it("hands the handler the parsed request and the envelope with its trace", async () => {
    const bus = new InProcessBus();
    const seen: unknown[] = [];
    serve(
      bus,
      CONTRACTS.evidence,
      async (request, env) => {
        seen.push(request, env.identity.org, env.trace);
        return null;
      },
      { log: recording() },
    );
    const trace = newTraceparent();
    const reply = await call(
      bus,
      CONTRACTS.evidence,
      { op: "get", id: "f_1" },
      { identity: WHO, deadline: soon(), trace },
    );
    expect(reply).toBeNull();
    expect(seen[0]).toEqual({ op: "get", id: "f_1" });
    expect(seen[1]).toBe("default");
    const child = TRACEPARENT.exec(String(seen[2]));
    expect(child?.[1]).toBe(TRACEPARENT.exec(trace)?.[1]);
    expect(seen[2]).not.toBe(trace);
    await bus.close();
  });
});

describe("call: checked by the contract when its checks are on (tests)", () => {
  it("refuses to send a payload that breaks the schema, and a reply that breaks it is MalformedMessage", async () => {
    const bus = new InProcessBus();
    let sent = 0;
    bus.serve(SUBJECTS.evidence, async () => {
      sent++;
      return { f_1: { status: "gone" } };
    });
    setCallChecks(true);
    const bad = { op: "verify", refs: [1] } as unknown as { op: "verify"; refs: string[] };
    await expect(
      call(bus, CONTRACTS.evidence, bad, { identity: WHO, deadline: soon() }),
    ).rejects.toMatchObject({
      name: "MalformedMessage",
      issues: ["payload.refs[0]: expected string, got number"],
    });
    expect(sent).toBe(0);
    await expect(
      call(bus, CONTRACTS.evidence, { op: "verify", refs: ["f_1"] }, { identity: WHO, deadline: soon() }),
    ).rejects.toMatchObject({ name: "MalformedMessage", subject: "evidence" });
    expect(sent).toBe(1);
    // Checks off (a service): the reply is returned as it came, parsed once where it arrived.
    setCallChecks(false);
    expect(
      await call(
        bus,
        CONTRACTS.evidence,
        { op: "verify", refs: ["f_1"] },
        { identity: WHO, deadline: soon() },
      ),
    ).toEqual({ f_1: { status: "gone" } });
    await bus.close();
  });

  it("every call carries a W3C traceparent: a new trace, or a child span of the one it was made for", async () => {
    const bus = new InProcessBus();
    const traces: (string | undefined)[] = [];
    bus.serve(SUBJECTS.scheduler, async (env) => {
      traces.push(env.trace);
      return { ok: true, data: { now: new Date(0).toISOString(), manual: false } };
    });
    await call(bus, CONTRACTS.scheduler, { op: "now" }, { identity: null, deadline: soon() });
    await call(bus, CONTRACTS.scheduler, { op: "now" }, { identity: null, deadline: soon() });
    expect(traces.every((t) => t !== undefined && TRACEPARENT.test(t))).toBe(true);
    expect(TRACEPARENT.exec(String(traces[0]))?.[1]).not.toBe(TRACEPARENT.exec(String(traces[1]))?.[1]);
    await bus.close();
  });
});

describe("the envelope's frame and the trace context", () => {
  it("an envelope whose frame is malformed is answered with the structured error, never handled", async () => {
    let handled = 0;
    const reply = await runHandler(
      "registry",
      async () => {
        handled++;
        return null;
      },
      { type: "registry", id: "x", deadline: "soon", payload: {} },
    );
    expect(reply).toMatchObject({
      ok: false,
      code: "invalid",
      subject: "registry",
      retryable: false,
      issues: ["identity: required", "deadline: expected number, got string"],
    });
    expect(handled).toBe(0);
  });

  it("a child keeps the trace id and flags with a new span id; an unreadable parent starts a new trace", () => {
    const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const child = childTraceparent(parent);
    expect(child).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(child).not.toBe(parent);
    for (const unreadable of [
      undefined,
      "nonsense",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
    ])
      expect(childTraceparent(unreadable)).toMatch(TRACEPARENT);
    expect(childTraceparent("nonsense").split("-")[1]).not.toBe("00000000000000000000000000000000");
  });
});
