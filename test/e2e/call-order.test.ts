import { randomUUID } from "node:crypto";
import { type McpSession, refused } from "@baton/conformance/mcp";
import { claimStep } from "@baton/conformance/walk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, startEmbedded } from "../support/deploy.ts";

/**
 * The order in which the gateway and the engine handle a tool call (ARCHITECTURE.md "The order of a
 * call", issue #17 deliver 4), against `baton dev` over MCP. Each stage's refusal is pinned with a call
 * that every later stage would refuse too, so the answer can only come from the stage under test:
 *
 *   the tool exists (-32602) → the arguments fit the tool's schema (`invalid`, §6 rule 3) → the claim
 *   token verifies (`invalid`, tools.md claim) → the run is the caller's organization's (`not_found`,
 *   §4.3) → the requestId replays or conflicts (§4) → the tool's own checks in tools.md's order,
 *   `run_ended` first (§3.5).
 *
 * What is pinned elsewhere is not repeated: decide's own order (run_ended → already_decided →
 * not_found → stale → forbidden → invalid → not_accepted) is the conformance test `decide.order`
 * (libs/conformance/src/scenarios/people.ts), run_ended first on the token tools is `#42`
 * (scenarios/agent-loop.ts), and arguments that are not an object are gateway-robustness.test.ts.
 */
describe("the order of a call (ARCHITECTURE.md, issue #17)", () => {
  let baton: Deployment;
  let agent: McpSession;
  let employee: McpSession;
  let ops: McpSession;
  let outsider: McpSession;
  let ended: string;
  let claimToken: string;
  /** The requestId of the cancel that ended `ended`. */
  const cancelId = `order-cancel-${randomUUID()}`;
  const expense = {
    process: "expense-approval",
    inputs: { employee: "sam@example.com", amount: 12, receiptUrl: "https://example.com/r/1" },
  };

  beforeAll(async () => {
    baton = await startEmbedded();
    agent = await baton.session({ kind: "agent", id: "a_order" });
    employee = await baton.session({ kind: "person", id: "sam@example.com" });
    ops = await baton.session({ kind: "person", id: "ops@example.com", operator: true });
    outsider = await baton.session({ kind: "agent", id: "a_elsewhere", org: "elsewhere" });
    // A run with a live claim, then cancelled: every write to it is now refused somewhere.
    ended = (await employee.ok("start_run", expense)).run.id;
    claimToken = (await claimStep(agent, ended, "check_claim")).token;
    await ops.ok("cancel", { runId: ended, reason: "Ended for the order test.", requestId: cancelId });
  }, 240_000);

  afterAll(async () => {
    await Promise.all([agent?.close(), employee?.close(), ops?.close(), outsider?.close()]);
    await baton?.stop();
  });

  /** One raw MCP `tools/call` over HTTP, as any client sends it; the JSON-RPC answer. */
  const rawCall = async (name: string, args: unknown) => {
    const response = await fetch(baton.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await baton.token({ kind: "agent", id: "a_order" })}`,
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name, arguments: args },
      }),
    });
    return (await response.json()) as { error?: { code: number; message: string }; result?: unknown };
  };

  it("1. a tool that does not exist is a JSON-RPC error -32602, whatever its arguments (MCP tools/call)", async () => {
    for (const args of [{ runId: ended }, 7, { requestId: cancelId }])
      expect(await rawCall("cancel_all", args)).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32602, message: "MCP error -32602: Unknown tool: cancel_all" },
      });
  });

  it("2. arguments that break the tool's schema are invalid, before the token, the run, the requestId and the tool's checks (§6 rule 3)", async () => {
    // decide from an agent (forbidden), on a cancelled run (run_ended), under a used requestId (conflict).
    const decide = await agent.call("decide", {
      runId: ended,
      workItemId: "w_1",
      snapshot: 5,
      decision: "approved",
      requestId: cancelId,
    });
    refused(decide, "invalid", ["snapshot: expected string, got number"]);
    // A token that does not verify, with an argument the tool does not take: only the schema speaks.
    refused(
      await agent.call("submit", {
        token: "forged",
        output: {},
        summary: "x",
        bogus: 1,
        requestId: randomUUID(),
      }),
      "invalid",
      ["bogus: not an argument of this tool"],
    );
    // A run that does not exist: invalid, not not_found; a cancel without its reason from an agent: not forbidden.
    refused(await agent.call("get_run", { runId: 7 }), "invalid", ["runId: expected string, got number"]);
    refused(await agent.call("cancel", { runId: "r_missing", requestId: randomUUID() }), "invalid", [
      "reason: required",
    ]);
  });

  it("3. a claim token that does not verify is invalid before the run it names is read: not run_ended (tools.md claim)", async () => {
    const tampered = claimToken.replace(/.$/, (c) => (c === "A" ? "B" : "A"));
    const submit = (token: string) =>
      agent.call("submit", { token, output: {}, summary: "x", requestId: randomUUID() });
    const error = refused(await submit(tampered), "invalid");
    expect(error.issues).toEqual([
      "token: not a token this server issued; use the token from your latest claim or renew",
    ]);
    // The intact token reaches the run, which has ended: the next stage answers.
    refused(await submit(claimToken), "conflict", ["run_ended"]);
  });

  it("4. a run that is not the caller's organization's is not_found, before the requestId and the tool's checks (§4.3)", async () => {
    // From an agent (cancel: forbidden), under a used requestId (conflict).
    refused(
      await agent.call("cancel", { runId: "r_missing", reason: "x", requestId: cancelId }),
      "not_found",
    );
    refused(await outsider.call("get_run", { runId: ended }), "not_found");
    refused(
      await outsider.call("send_event", { runId: ended, name: "x", requestId: randomUUID() }),
      "not_found",
    );
  });

  it("5. the requestId: the same call replays its result after the run ended; another call under it is conflict, before the tool's checks (§4)", async () => {
    const replay = await ops.call("cancel", {
      runId: ended,
      reason: "Ended for the order test.",
      requestId: cancelId,
    });
    expect(replay.ok).toBe(true);
    expect(replay.ok && replay.data.run).toMatchObject({ state: "cancelled" });
    // Other arguments, another tool, another caller: conflict on the requestId, not run_ended or forbidden.
    for (const [who, tool, args] of [
      [ops, "cancel", { runId: ended, reason: "Another reason." }],
      [ops, "send_event", { runId: ended, name: "nudge" }],
      [agent, "cancel", { runId: ended, reason: "Ended for the order test." }],
    ] as const) {
      const error = refused(await who.call(tool, { ...args, requestId: cancelId }), "conflict");
      expect(error.issues ?? [], `${tool}: conflict on the requestId, not run_ended`).toEqual([]);
      expect(error.message).toMatch(/requestId/);
    }
  });

  it("6. then the tool's own checks in tools.md's order: run_ended first on every write (§3.5), then each tool's order", async () => {
    // On the ended run: run_ended before forbidden (an agent cancelling, a person claiming or sending an event).
    const fresh = () => ({ requestId: randomUUID() });
    refused(await agent.call("cancel", { runId: ended, reason: "x", ...fresh() }), "conflict", ["run_ended"]);
    refused(await employee.call("claim", { runId: ended, stepId: "check_claim", ...fresh() }), "conflict", [
      "run_ended",
    ]);
    refused(await employee.call("send_event", { runId: ended, name: "x", ...fresh() }), "conflict", [
      "run_ended",
    ]);
    // On a live run, claim: forbidden for a person → not_found for a step that does not exist →
    // forbidden for a step that is not an agent's → conflict for one that is not ready.
    const live = (await employee.ok("start_run", expense)).run.id;
    refused(await employee.call("claim", { runId: live, stepId: "nope", ...fresh() }), "forbidden");
    refused(await agent.call("claim", { runId: live, stepId: "nope", ...fresh() }), "not_found");
    refused(await agent.call("claim", { runId: live, stepId: "approve", ...fresh() }), "forbidden");
    await claimStep(agent, live, "check_claim");
    refused(await agent.call("claim", { runId: live, stepId: "check_claim", ...fresh() }), "conflict", [
      "claimed_by_you",
    ]);
    // cancel: forbidden for anyone but an operator, then the reason.
    refused(await agent.call("cancel", { runId: live, reason: " ", ...fresh() }), "forbidden");
    refused(await ops.call("cancel", { runId: live, reason: " ", ...fresh() }), "invalid", [
      "reason: required",
    ]);
    // send_event: forbidden for a person who is not an operator, then the name.
    refused(await employee.call("send_event", { runId: live, name: "Bad Name", ...fresh() }), "forbidden");
    refused(await agent.call("send_event", { runId: live, name: "Bad Name", ...fresh() }), "invalid");
  });
});
