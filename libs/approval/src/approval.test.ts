import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { AutoApprove } from "./auto.ts";
import { ApprovalError, BatonApprovals, cancelRequestId, decisionOf } from "./client.ts";
import { type ApprovalRequest, approvalInputs, argumentsDigest, redactedPreview } from "./request.ts";
import { RunEndedReceiver } from "./webhooks.ts";

/** The approval client's pure parts (issue #17 deliver 2): what a request sends, how a run reads as a decision, the receiver. */

const request: ApprovalRequest = {
  id: "req-1",
  toolName: "payments.transfer",
  arguments: { to: "DE89 3704", amount: 12_000, apiKey: "sk-live-abc", note: "rent" },
  riskTier: "critical",
  agentId: "a_treasurer",
  callerRunId: "session-7",
  context: { task: "pay the landlord" },
};

describe("approval requests", () => {
  it("send the digest and a redacted preview of the arguments, never the arguments (issue #17)", () => {
    const inputs = approvalInputs(request);
    expect(Object.keys(inputs)).toEqual([
      "toolName",
      "argumentsDigest",
      "argumentsPreview",
      "riskTier",
      "agentId",
      "callerRunId",
      "context",
    ]);
    expect(inputs.argumentsDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(inputs.argumentsPreview).not.toContain("sk-live-abc");
    expect(JSON.parse(inputs.argumentsPreview as string)).toEqual({
      to: "DE89 3704",
      amount: 12_000,
      apiKey: "[redacted]",
      note: "rent",
    });
    expect(inputs.context).toBe('{"task":"pay the landlord"}');
    // The same request gives the same inputs, so asking again replays start_run (§4).
    expect(approvalInputs({ ...request })).toEqual(inputs);
    const { callerRunId: _r, context: _c, ...bare } = request;
    expect(Object.keys(approvalInputs(bare))).not.toContain("callerRunId");
  });

  it("digest the canonical JSON (RFC 8785): key order and number spelling do not change it", () => {
    expect(argumentsDigest({ b: 1, a: [1.0, "x"] })).toBe(argumentsDigest({ a: [1, "x"], b: 1 }));
    expect(argumentsDigest({ a: 1 })).not.toBe(argumentsDigest({ a: 2 }));
    expect(argumentsDigest(undefined)).toBe(argumentsDigest(null));
  });

  it("redact secret keys and credential-looking values, and bound the preview", () => {
    const preview = JSON.parse(
      redactedPreview({
        password: "hunter2",
        headers: { Authorization: "Bearer abc", "x-session-id": "s1" },
        db: { privateKey: "-----BEGIN", passenger: "Ann", compass: "N" },
        token: "t",
        github: "ghp_0123456789",
        long: "y".repeat(500),
        list: Array.from({ length: 30 }, (_, i) => i),
      }),
    );
    expect(preview.password).toBe("[redacted]");
    expect(preview.headers).toEqual({ Authorization: "[redacted]", "x-session-id": "[redacted]" });
    expect(preview.db).toEqual({ privateKey: "[redacted]", passenger: "Ann", compass: "N" });
    expect(preview.token).toBe("[redacted]");
    expect(preview.github).toBe("[redacted]");
    expect(preview.long).toBe(`${"y".repeat(200)}… (500 characters)`);
    expect(preview.list).toHaveLength(21);
    const huge = redactedPreview(
      Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, "v".repeat(150)])),
    );
    expect(huge).toMatch(/… \(\d+ characters\)$/);
  });
});

describe("decisions", () => {
  const run = (state: string, outcome: string | null) =>
    ({ state, outcome }) as Parameters<typeof decisionOf>[0];

  it("a run's finish is the decision; cancelled, failed and rejected runs are denied; an open run has none (§3.5)", () => {
    expect(decisionOf(run("ended", "approved"))).toBe("approved");
    expect(decisionOf(run("ended", "denied"))).toBe("denied");
    expect(decisionOf(run("ended", "skipped"))).toBe("skipped");
    expect(decisionOf(run("ended", "failed"))).toBe("denied");
    expect(decisionOf(run("ended", "rejected"))).toBe("denied");
    expect(decisionOf(run("cancelled", null))).toBe("denied");
    expect(decisionOf(run("waiting", null))).toBeNull();
    expect(decisionOf(run("active", null))).toBeNull();
  });

  it("the time-out's cancel has a requestId of its own per run, within the protocol's 128 characters (§4)", () => {
    expect(cancelRequestId("r_1")).toBe(cancelRequestId("r_1"));
    expect(cancelRequestId("r_1")).not.toBe(cancelRequestId("r_2"));
    expect(cancelRequestId("r_1".repeat(100)).length).toBeLessThanOrEqual(128);
  });

  it("a request without a usable id or time-out is refused before anything is sent", async () => {
    // Nothing listens at this URL: a refusal that reached for the network would fail differently.
    const client = new BatonApprovals({ url: "http://127.0.0.1:9/mcp", agentToken: "a", operatorToken: "o" });
    await expect(client.ask({ ...request, id: "" }, { timeoutMs: 10 })).rejects.toMatchObject({
      code: "invalid",
      issues: ["id: 1–128 characters, got 0"],
    });
    await expect(client.ask({ ...request, id: "x".repeat(129) }, { timeoutMs: 10 })).rejects.toThrow(
      ApprovalError,
    );
    await expect(client.ask(request, { timeoutMs: Number.NaN })).rejects.toMatchObject({ code: "invalid" });
    await expect(client.ask(request, { timeoutMs: -1 })).rejects.toMatchObject({ code: "invalid" });
  });

  it("AutoApprove answers at once and keeps what it was asked", async () => {
    const auto = new AutoApprove();
    expect(await auto.request(request, { timeoutMs: 10 })).toBe("approved");
    expect(await new AutoApprove("denied").request(request, { timeoutMs: 10 })).toBe("denied");
    expect(auto.requests).toEqual([request]);
  });
});

describe("the run.ended receiver", () => {
  const secret = `whsec_${Buffer.from("approval-receiver-test-secret-32b").toString("base64")}`;
  const signed = (body: string, id = "msg_1", key = secret) => {
    const at = new Date();
    return {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(key).sign(id, at, body),
    };
  };
  // A fixed event time: the same arguments give the same body, so a body built twice (once to send,
  // once to sign) still verifies even when the millisecond turns between the two.
  const ended = (runId: string, outcome: string | null = "approved") =>
    JSON.stringify({
      type: "run.ended",
      timestamp: "2026-12-01T10:00:00.000Z",
      data: { org: "default", runId, process: "tool-approval-high", state: "ended", outcome },
    });

  it("wakes the request waiting on a run when its verified run.ended arrives, and one that waits later at once", async () => {
    const receiver = new RunEndedReceiver(secret);
    const watch = receiver.whenEnded("r_1");
    let woke = false;
    void watch.ended.then(() => {
      woke = true;
    });
    expect(receiver.receive(ended("r_2"), signed(ended("r_2")))).toBe(204);
    await Promise.resolve();
    expect(woke).toBe(false);
    const body = ended("r_1");
    expect(receiver.receive(body, signed(body))).toBe(204);
    await watch.ended;
    expect(receiver.endedRun("r_1")).toEqual({
      runId: "r_1",
      process: "tool-approval-high",
      state: "ended",
      outcome: "approved",
    });
    await receiver.whenEnded("r_1").ended;
  });

  it("refuses what does not verify (401) and a verified body that is not an event (400); ignores other types", () => {
    const receiver = new RunEndedReceiver(secret);
    const body = ended("r_3");
    const other = `whsec_${Buffer.from("another-secret-of-thirty-two-byte").toString("base64")}`;
    expect(receiver.receive(body, signed(body, "msg_2", other))).toBe(401);
    expect(receiver.receive(body, { ...signed(body), "webhook-timestamp": "1000" })).toBe(401);
    expect(receiver.receive(`${body} `, signed(body))).toBe(401);
    expect(receiver.endedRun("r_3")).toBeUndefined();
    expect(receiver.receive("[1]", signed("[1]"))).toBe(400);
    const opened = JSON.stringify({ type: "work_item.opened", timestamp: "", data: { runId: "r_3" } });
    expect(receiver.receive(opened, signed(opened))).toBe(204);
    expect(receiver.endedRun("r_3")).toBeUndefined();
  });

  it("remembers only the most recent runs", () => {
    const receiver = new RunEndedReceiver(secret, { remember: 2 });
    for (const id of ["a", "b", "c"]) receiver.receive(ended(id), signed(ended(id), `m_${id}`));
    expect(receiver.endedRun("a")).toBeUndefined();
    expect(receiver.endedRun("c")?.outcome).toBe("approved");
  });
});
