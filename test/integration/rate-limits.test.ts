import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevIssuer, loadOrCreateDevIssuer, mintDevToken } from "@baton/auth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, NATS_URL, REPO } from "../support/deploy.ts";
import { PrivateRedis } from "../support/redis-server.ts";

/**
 * Issue #12 rate limits in a real deployment: `baton serve gateway` processes count in Redis, so two
 * replicas share one limit (this machine's Redis, under a namespace of the test's own); and when
 * Redis stops (a private `redis-server` the test starts and stops, never the shared one) the gateway
 * goes on serving without limits and says so in a warning: Redis never decides an outcome
 * (ARCHITECTURE "Redis holds rate-limit counters and caches only"). A limit reached is the
 * protocol's `retry` (§4.3) with the wait in its message and in `Retry-After`.
 *
 * The calls are answered by the gateway alone (`describe`, and a `start_run` whose arguments break
 * the schema, `invalid`), so no other service is needed and the only thing that changes an answer
 * is the limit.
 */

const CLI = join(REPO, "services/cli/src/main.ts");
const dir = mkdtempSync(join(tmpdir(), "baton-rl-"));
const children: ChildProcess[] = [];
const logs = new Map<ChildProcess, string>();
let issuer: DevIssuer;

beforeAll(async () => {
  issuer = await loadOrCreateDevIssuer(join(dir, "dev-issuer.json"));
});
afterAll(async () => {
  await Promise.all(children.map((c) => stop(c)));
  rmSync(dir, { recursive: true, force: true });
});

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** Starts `baton serve gateway` on `port` with `env`; resolves once it serves. */
async function gateway(port: number, publicUrl: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "gateway"], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      NATS_URL,
      BATON_SECRET: randomBytes(24).toString("hex"),
      BATON_PUBLIC_URL: publicUrl,
      BATON_HOST: "127.0.0.1",
      BATON_PORT: String(port),
      BATON_BLOB_DIR: join(dir, "files"),
      BATON_DEV_ISSUER_FILE: join(dir, "dev-issuer.json"),
      BATON_LOG_LEVEL: "info",
      ...env,
    },
  });
  children.push(child);
  logs.set(child, "");
  const collect = (chunk: Buffer) => logs.set(child, (logs.get(child) ?? "") + chunk.toString());
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const deadline = Date.now() + 60_000;
  while (!(logs.get(child) ?? "").includes("gateway serving")) {
    if (child.exitCode !== null) throw new Error(`gateway exited:\n${logs.get(child)}`);
    if (Date.now() > deadline) throw new Error(`gateway did not start:\n${logs.get(child)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

const token = (publicUrl: string, id: string, org = "acme") =>
  mintDevToken(issuer, { sub: id, org, kind: "agent", groups: [], roles: [] }, `${publicUrl}/mcp`, 3600);

interface Answer {
  status: number;
  retryAfter: string | null;
  result: { ok: boolean; error?: { code: string; message: string } };
}

/** One tool call over plain HTTP, so the status and `Retry-After` are seen as a client sees them. */
async function call(
  port: number,
  bearer: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = (await response.json()) as { result: { structuredContent: Answer["result"] } };
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    result: body.result.structuredContent,
  };
}

/** A write the gateway answers itself: `start_run` without its arguments is `invalid`. */
const write = (port: number, bearer: string) => call(port, bearer, "start_run", {});
const read = (port: number, bearer: string) => call(port, bearer, "describe", {});

describe("rate limits across gateway replicas, in this machine's Redis (issue #12)", () => {
  it("two gateway processes share one caller's write limit and one organization's read limit", async () => {
    const [a, b] = [await freePort(), await freePort()];
    // Both replicas serve one public URL (behind a load balancer), so one token fits both.
    const publicUrl = `http://127.0.0.1:${a}`;
    const env = {
      REDIS_URL: "redis://127.0.0.1:6379",
      BATON_NAMESPACE: `rl${randomBytes(4).toString("hex")}`,
      BATON_RATE_WINDOW_SECONDS: "600",
      BATON_RATE_PRINCIPAL_WRITES: "4",
      BATON_RATE_PRINCIPAL_READS: "1000",
      BATON_RATE_ORG_READS: "6",
    };
    await Promise.all([gateway(a, publicUrl, env), gateway(b, publicUrl, env)]);
    const one = await token(publicUrl, "a_loop");

    // Four writes, alternating replicas, are answered; the fifth, on either, is `retry`.
    for (const port of [a, b, a, b]) expect((await write(port, one)).result.error?.code).toBe("invalid");
    for (const port of [a, b]) {
      const limited = await write(port, one);
      expect(limited.status).toBe(200);
      expect(limited.result.ok).toBe(false);
      expect(limited.result.error?.code).toBe("retry");
      expect(limited.result.error?.message).toMatch(
        /^this caller's limit of write calls is reached; retry in \d+ s \(rate limit\)$/,
      );
      const seconds = Number(limited.retryAfter);
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(600);
      expect(limited.result.error?.message).toContain(`retry in ${seconds} s`);
    }
    // Reads are counted apart from writes.
    expect((await read(a, one)).result.ok).toBe(true);

    // The organization's reads: 6 in all, whoever makes them on whichever replica (1 made above).
    const others = await Promise.all(["a_x", "a_y", "a_z"].map((id) => token(publicUrl, id)));
    const ports = [b, a, b, a, b];
    for (let i = 0; i < 5; i++) {
      expect((await read(ports[i] as number, others[i % 3] as string)).result.ok, `read ${i}`).toBe(true);
    }
    const limited = await read(a, others[0] as string);
    expect(limited.result.error?.message).toMatch(/^this organization's limit of read calls is reached/);
    // Another organization is not held back by this one.
    expect((await read(b, await token(publicUrl, "a_x", "globex"))).result.ok).toBe(true);
  });
});

describe("Redis stopped: the gateway serves without limits (issue #12)", () => {
  let redis: PrivateRedis;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });
  afterAll(async () => {
    await redis?.down();
  });

  it("limits while Redis answers, serves every call while it is down with a warning, limits again once it is back", async () => {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const child = await gateway(port, publicUrl, {
      REDIS_URL: redis.url,
      BATON_NAMESPACE: `rl${randomBytes(4).toString("hex")}`,
      BATON_RATE_WINDOW_SECONDS: "600",
      BATON_RATE_PRINCIPAL_WRITES: "3",
    });
    const bearer = await token(publicUrl, "a_loop");
    for (let i = 0; i < 3; i++) expect((await write(port, bearer)).result.error?.code).toBe("invalid");
    expect((await write(port, bearer)).result.error?.code).toBe("retry");

    await redis.down();
    for (let i = 0; i < 10; i++) {
      const answer = await write(port, bearer);
      expect(answer.status).toBe(200);
      expect(answer.result.error?.code, "served, not limited, while Redis is down").toBe("invalid");
    }
    expect((await read(port, bearer)).result.ok).toBe(true);
    expect(logs.get(child)).toMatch(/rate limits are not applied until Redis answers again/);
    // Never the connection URL in a log line (it may hold a password).
    expect(logs.get(child)).not.toContain(redis.url);

    // Redis is back (empty: it kept nothing): counting starts again once the gateway reconnects.
    await redis.up();
    const deadline = Date.now() + 60_000;
    let limited = false;
    while (!limited && Date.now() < deadline) {
      limited = (await write(port, bearer)).result.error?.code === "retry";
      if (!limited) await new Promise((r) => setTimeout(r, 100));
    }
    expect(limited, "limited again after Redis came back").toBe(true);
  });
});
