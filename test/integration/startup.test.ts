import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropNamespace, freePort, NATS_URL, POSTGRES_URL, REPO } from "../support/deploy.ts";
import { stopProcess, until } from "../support/processes.ts";
import { TcpProxy } from "../support/tcp-proxy.ts";

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");

/** The environment of a test's `baton serve`, without the test process's own `BATON_*` and `AWS_*`. */
function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("BATON_") && !k.startsWith("AWS_")),
  );
}

/** Runs `baton serve <service>` with `env` until it ends by itself; its exit code, stdout (logs) and stderr. */
async function serveUntilExit(service: string, env: Record<string, string>) {
  try {
    await run(process.execPath, ["--import", "tsx", CLI, "serve", service], {
      cwd: REPO,
      timeout: 60_000,
      env: { ...baseEnv(), BATON_OPS_PORT: "off", ...env },
    });
    return { code: 0, stdout: "", stderr: "" };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/**
 * Issue #13, "what an SRE trial found": with PostgreSQL or NATS unreachable, a service names the
 * variable and the address, retries with back-off for `BATON_STARTUP_TIMEOUT_SECONDS`, then exits 1
 * saying so; a dependency that comes back within that time is used; every configuration problem
 * is listed at once (the gateway's auth variables among them).
 */
describe("start-up with dependencies unreachable, and configuration problems (issue #13)", () => {
  const secret = randomBytes(24).toString("hex");
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "baton-startup-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("PostgreSQL on a closed port: warnings name DATABASE_URL and the address while retrying, then exit 1 saying so", async () => {
    const port = await freePort();
    const ended = await serveUntilExit("registry", {
      DATABASE_URL: `postgres://baton:pw-never-logged@127.0.0.1:${port}/baton`,
      NATS_URL,
      BATON_STARTUP_TIMEOUT_SECONDS: "2",
      BATON_LOG_LEVEL: "warn",
    });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain(
      `baton serve registry: PostgreSQL at 127.0.0.1:${port} (DATABASE_URL) did not answer`,
    );
    expect(ended.stderr).toContain("BATON_STARTUP_TIMEOUT_SECONDS");
    const retries = ended.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg?.includes("retrying"));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(retries[0]).toMatchObject({
      level: "warn",
      variable: "DATABASE_URL",
      address: `127.0.0.1:${port}`,
    });
    expect(`${ended.stdout}${ended.stderr}`).not.toContain("pw-never-logged");
  });

  it("NATS on a closed port: the gateway names NATS_URL and the address, then exits 1", async () => {
    const port = await freePort();
    const ended = await serveUntilExit("gateway", {
      NATS_URL: `nats://127.0.0.1:${port}`,
      BATON_SECRET: secret,
      BATON_PUBLIC_URL: "http://127.0.0.1:1",
      BATON_DEV_ISSUER_FILE: join(dir, "dev-issuer.json"),
      BATON_BLOB_DIR: join(dir, "files"),
      BATON_STARTUP_TIMEOUT_SECONDS: "1",
      BATON_LOG_LEVEL: "error",
    });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain(
      `baton serve gateway: NATS at 127.0.0.1:${port} (NATS_URL) did not answer`,
    );
  });

  it("every configuration problem is listed at once: missing variables and the gateway's auth and file store choices", async () => {
    const ended = await serveUntilExit("gateway", {
      BATON_PUBLIC_URL: "not a url",
      BATON_AUTH_ORG: "a",
      BATON_AUTH_ORG_PREFIX: "b",
    });
    expect(ended.code).toBe(2);
    for (const line of [
      "NATS_URL: required",
      "BATON_SECRET: required",
      "BATON_PUBLIC_URL:",
      "BATON_AUTH_JWKS_URL: set BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL, or BATON_DEV_ISSUER_FILE",
      "BATON_S3_BUCKET: set BATON_S3_BUCKET",
      "BATON_AUTH_ORG_PREFIX: set BATON_AUTH_ORG (one organization) or BATON_AUTH_ORG_PREFIX, not both",
    ])
      expect(ended.stderr).toContain(line);
  });

  describe("a database that comes back within BATON_STARTUP_TIMEOUT_SECONDS", () => {
    let proxy: TcpProxy;
    let database: string;
    let child: ChildProcess | null = null;
    const namespace = `t${randomBytes(5).toString("hex")}`;

    beforeAll(async () => {
      const u = new URL(POSTGRES_URL);
      proxy = await TcpProxy.start({ host: u.hostname, port: Number(u.port || 5432) });
      database = `baton_test_startup_${randomBytes(4).toString("hex")}`;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
    });
    afterAll(async () => {
      if (child) await stopProcess(child);
      await dropNamespace(namespace, NATS_URL);
      await proxy?.close();
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
    });

    it("is used: the service serves, its operations server said not ready until then", async () => {
      proxy.cut();
      const opsPort = await freePort();
      const u = new URL(POSTGRES_URL);
      u.hostname = "127.0.0.1";
      u.port = String(proxy.port);
      u.pathname = `/${database}`;
      child = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "registry"], {
        cwd: REPO,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...baseEnv(),
          DATABASE_URL: u.toString(),
          NATS_URL,
          BATON_NAMESPACE: namespace,
          BATON_OPS_PORT: String(opsPort),
          BATON_OPS_HOST: "127.0.0.1",
          BATON_STARTUP_TIMEOUT_SECONDS: "60",
          BATON_LOG_LEVEL: "warn",
        },
      });
      let logs = "";
      child.stdout?.on("data", (c: Buffer) => {
        logs += c.toString();
      });
      const readyz = async () => {
        try {
          const r = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
          return { status: r.status, body: (await r.json()) as { checks: Record<string, string> } };
        } catch {
          return null;
        }
      };
      // Alive and unready while it waits for the database.
      await until(async () => (await readyz())?.status === 503, "503 while PostgreSQL is away", 30_000);
      expect((await readyz())?.body.checks.service).toMatch(/starting/);
      await until(() => logs.includes('"variable":"DATABASE_URL"'), "a warning naming DATABASE_URL", 30_000);
      proxy.restore();
      await until(async () => (await readyz())?.status === 200, "ready once PostgreSQL is back", 60_000);
      expect(child.exitCode).toBeNull();
    });
  });
});
