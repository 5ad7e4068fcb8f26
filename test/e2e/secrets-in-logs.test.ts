import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { McpSession, type Result } from "@baton/conformance/mcp";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDev } from "../../services/cli/src/dev.ts";
import { devToken } from "../../services/cli/src/token.ts";

/**
 * Issue #12 "Secrets stay secret": bearer tokens, claim tokens, file URLs (their signatures) and the
 * server secret never appear in a log line or an error message (CONVENTIONS: "Secrets never reach a
 * log line"). `baton dev` runs in this process with every service logging at `debug` into the test;
 * a run is walked to its end with a file, and the calls that fail on purpose (a tampered claim token,
 * a refused bearer token, a forged file link) are made too. Then every log line and every error
 * answer is searched for every secret the walk handled. (Webhooks do not exist yet; their secrets
 * join the list when they do.)
 */

describe("secrets never reach a log line or an error message (issue #12)", () => {
  let dir: string;
  let dev: DevServer;
  const lines: string[] = [];
  const errors: string[] = [];
  const secrets = new Map<string, string>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "baton-secrets-"));
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...chunk.toString().split("\n").filter(Boolean));
        done();
      },
    });
    dev = await startDev({
      port: 0,
      dataDir: dir,
      clock: "real",
      samples: true,
      log: pino({ name: "baton", level: "debug" }, sink),
    });
  });
  afterAll(async () => {
    await dev?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Keeps a secret and its parts that would identify it alone (a JWT's signature, a MAC). */
  function keep(name: string, value: string): void {
    secrets.set(name, value);
    const parts = value.split(".");
    if (parts.length === 3 && (parts[2] as string).length >= 16)
      secrets.set(`${name} (signature)`, parts[2] as string);
  }

  function noted(result: Result): Result {
    if (!result.ok) errors.push(JSON.stringify(result.error));
    return result;
  }

  it("walks a run with a file and failures on purpose, then finds no secret anywhere", async () => {
    const agentToken = await devToken(
      dir,
      { sub: "a_checker", org: "default", kind: "agent", groups: [], roles: [] },
      dev.url,
    );
    const managerToken = await devToken(
      dir,
      { sub: "mia@example.com", org: "default", kind: "person", groups: ["manager"], roles: [] },
      dev.url,
    );
    keep("agent bearer token", agentToken);
    keep("manager bearer token", managerToken);
    keep("server secret", readFileSync(join(dir, "secret"), "utf8").trim());
    keep(
      "dev issuer private key",
      (JSON.parse(readFileSync(join(dir, "dev-issuer.json"), "utf8")) as { privateJwk: { d: string } })
        .privateJwk.d,
    );

    const agent = await McpSession.connect(dev.url, agentToken, "agent");
    const manager = await McpSession.connect(dev.url, managerToken, "manager");
    const started = noted(
      await manager.call("start_run", {
        process: "expense-approval",
        requestId: randomUUID(),
        inputs: { employee: "sam@example.com", amount: 84.5, receiptUrl: "https://example.com/r/1" },
      }),
    );
    if (!started.ok) throw new Error(JSON.stringify(started.error));
    const runId = started.data.run.id as string;
    const claimed = noted(
      await agent.call("claim", { runId, stepId: "check_claim", requestId: randomUUID() }),
    );
    if (!claimed.ok) throw new Error(JSON.stringify(claimed.error));
    const claimToken = claimed.data.token as string;
    keep("claim token", claimToken);

    const uploaded = noted(
      await agent.call("upload", {
        fileName: "receipt.txt",
        contentType: "text/plain",
        contentBase64: Buffer.from("Receipt: 84.50 USD").toString("base64"),
        requestId: randomUUID(),
      }),
    );
    if (!uploaded.ok) throw new Error(JSON.stringify(uploaded.error));

    // Failures on purpose: a tampered claim token, one for a renewal, a bearer token refused.
    noted(
      await agent.call("submit", {
        token: `${claimToken}x`,
        output: {},
        summary: "s",
        requestId: randomUUID(),
      }),
    );
    const altered = claimToken.slice(0, -1) + (claimToken.endsWith("A") ? "B" : "A");
    noted(await agent.call("renew", { token: altered, requestId: randomUUID() }));
    const refused = await fetch(dev.url, {
      method: "POST",
      headers: { authorization: `Bearer ${agentToken.slice(0, -4)}AAAA`, "content-type": "application/json" },
      body: "{}",
    });
    expect(refused.status).toBe(401);
    errors.push(await refused.text(), String(refused.headers.get("www-authenticate")));

    const submitted = noted(
      await agent.call("submit", {
        token: claimToken,
        output: { matches: true, category: "travel" },
        evidence: [
          { kind: "link", ref: "https://example.com/r/1" },
          { kind: "file", ref: uploaded.data.id },
        ],
        summary: "Receipt matches.",
        next: "approve",
        reason: "Matches the policy.",
        requestId: randomUUID(),
      }),
    );
    expect(submitted.ok, JSON.stringify(submitted)).toBe(true);

    // The file's short-lived link: download it, then a forged one.
    const view = noted(await manager.call("get_run", { runId }));
    if (!view.ok) throw new Error(JSON.stringify(view.error));
    const file = (view.data.data.steps.check_claim.evidence as { kind: string; url?: string }[]).find(
      (e) => e.kind === "file",
    );
    const url = new URL(file?.url as string);
    keep("file URL", url.toString());
    keep("file URL signature", url.searchParams.get("sig") as string);
    expect((await fetch(url)).status).toBe(200);
    const forged = new URL(url);
    forged.searchParams.set("sig", `${url.searchParams.get("sig")?.slice(0, -2)}AA`);
    const forgedAnswer = await fetch(forged);
    expect(forgedAnswer.status).toBe(403);
    errors.push(await forgedAnswer.text());

    const work = noted(await manager.call("get_work", {}));
    if (!work.ok) throw new Error(JSON.stringify(work.error));
    const item = (work.data.items as { workItem: { decide: { arguments: Record<string, unknown> } } }[])[0];
    const decided = noted(
      await manager.call("decide", {
        ...item?.workItem.decide.arguments,
        decision: "approved",
        requestId: randomUUID(),
      }),
    );
    expect(decided.ok && decided.data.run.state).toBe("ended");
    // A person's decision sent again with an agent's credential: refused, without echoing anything.
    noted(
      await agent.call("decide", {
        ...item?.workItem.decide.arguments,
        decision: "approved",
        requestId: randomUUID(),
      }),
    );
    await agent.close();
    await manager.close();

    // Something was logged and something failed, or the search below would prove nothing.
    expect(lines.length).toBeGreaterThan(0);
    expect(errors.length).toBeGreaterThanOrEqual(5);
    for (const [name, value] of secrets) {
      const inLog = lines.find((line) => line.includes(value));
      expect(inLog, `${name} in a log line`).toBeUndefined();
      const inError = errors.find((text) => text.includes(value));
      expect(inError, `${name} in an error answer`).toBeUndefined();
    }
  });
});
