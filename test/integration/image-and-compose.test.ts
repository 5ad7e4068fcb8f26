import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { McpSession } from "@baton/conformance/mcp";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropNamespace, freePort, NATS_URL, POSTGRES_URL, REPO } from "../support/deploy.ts";
import { type ComposeService, composeServices, dockerfileRuntime } from "../support/deploy-files.ts";
import { exited, until } from "../support/processes.ts";
import { S3RVER_CREDENTIALS, type S3Server, startS3 } from "../support/s3.ts";

const run = promisify(execFile);

/**
 * Issue #13 items 1, 2 and 7 ("what can be proven here"): no image is built on these machines (no
 * Docker engine), so this test proves what the image holds and how compose runs it. It runs the build
 * the Dockerfile runs (`pnpm build --out /app --install --offline`, into a temporary directory), checks
 * that the result holds JavaScript and production dependencies only (neither `tsx` nor `typescript`),
 * and starts docker-compose.yml's Baton services from it as separate processes, through the Dockerfile's
 * entry point, with exactly the environment compose gives each one, only the addresses mapped to this
 * machine (below). A real MCP client walks a run through the gateway; then each service gets SIGTERM
 * and must exit cleanly by itself, as a container's main process does.
 */

/** The Dockerfile's build step, whose flags the test's build uses too. */
const IMAGE_BUILD = "pnpm build --out /app --install --offline";

describe("the image's contents and docker-compose.yml (issue #13)", () => {
  const runtime = dockerfileRuntime();
  let work: string;
  let app: string;

  beforeAll(async () => {
    work = mkdtempSync(join(process.env.BATON_TEST_TMP ?? tmpdir(), "baton-image-"));
    app = join(work, "app");
    await run(
      process.execPath,
      ["--import", "tsx", "scripts/build.ts", "--out", app, "--install", "--offline"],
      { cwd: REPO, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
    );
  }, 300_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The environment of a process in the image: the Dockerfile's ENV, a PATH, nothing of this test's. */
  const imageEnv = (extra: Record<string, string>) => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    ...runtime.env,
    ...extra,
  });

  /** The image's entry point with `args`, on this machine: `node` is this Node, `/app` the build. */
  const entry = (args: string[]): [string, string[]] => {
    const [node, ...rest] = runtime.entrypoint;
    expect(node).toBe("node");
    return [process.execPath, [...rest.map((a) => a.replace(/^\/app(?=\/)/, app)), ...args]];
  };

  it("the Dockerfile runs that build, as a non-root user, with the compiled CLI under node as its entry point", () => {
    expect(runtime.text).toContain(IMAGE_BUILD);
    expect(runtime.entrypoint).toEqual(["node", "/app/services/cli/src/main.js"]);
    expect(runtime.cmd).toEqual(["serve", "gateway"]);
    expect(runtime.workdir).toBe("/app");
    expect(runtime.user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
    expect(runtime.env.NODE_ENV).toBe("production");
  });

  it("the build holds JavaScript and production dependencies only: neither tsx nor typescript, no .ts file", async () => {
    const store = readdirSync(join(app, "node_modules/.pnpm"));
    expect(store.length).toBeGreaterThan(50);
    for (const devOnly of ["tsx@", "typescript@", "vite@", "vitest@", "@biomejs+biome@", "esbuild@"])
      expect(
        store.filter((p) => p.startsWith(devOnly)),
        devOnly,
      ).toEqual([]);
    for (const pkg of ["services/cli", "services/gateway", "services/engine", "libs/db"]) {
      const require = createRequire(join(app, pkg, "package.json"));
      expect(() => require.resolve("tsx"), `tsx from ${pkg}`).toThrow();
      expect(() => require.resolve("typescript"), `typescript from ${pkg}`).toThrow();
    }
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.name === "node_modules") continue;
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith(".ts")) sources.push(join(dir, e.name));
      }
    };
    walk(app);
    expect(sources).toEqual([]);
    expect(existsSync(join(app, "libs/db/drizzle/meta/_journal.json"))).toBe(true);
    expect(existsSync(join(app, "services/console/dist/index.html"))).toBe(true);

    const [node, args] = entry(["--help"]);
    const help = await run(node, args, { cwd: app, env: imageEnv({}) });
    expect(help.stdout).toContain("baton serve <gateway|registry|engine|evidence|scheduler|notifier>");
    // `baton dev` builds the console and runs from a clone; the build says so instead of failing obscurely.
    const [, devArgs] = entry(["dev", "--port", "0", "--data-dir", join(work, "dev")]);
    const dev = await run(node, devArgs, { cwd: app, env: imageEnv({}) }).catch((e) => e);
    expect(dev.code).toBe(2);
    expect(dev.stderr).toContain("baton dev runs from a clone of the repository (pnpm baton dev)");
    // `baton token` with a --data-dir that holds no dev issuer key refuses, saying what it must point at,
    // and makes no key of its own (a new key would sign tokens no server trusts).
    const empty = join(work, "no-issuer");
    const [, tokenArgs] = entry([
      "token",
      "agent",
      "a1",
      "--data-dir",
      empty,
      "--url",
      "http://127.0.0.1:1/mcp",
    ]);
    const refused = await run(node, tokenArgs, { cwd: app, env: imageEnv({}) }).catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${join(empty, "dev-issuer.json")} does not exist`);
    expect(refused.stderr).toContain("baton dev's --data-dir");
    expect(refused.stderr).toContain("BATON_DEV_ISSUER_FILE, a file named dev-issuer.json");
    expect(existsSync(empty)).toBe(false);
  });

  describe("docker-compose.yml's services, run from the build", () => {
    const suffix = randomBytes(5).toString("hex");
    const database = `baton_test_compose_${suffix}`;
    const databaseUrl = POSTGRES_URL.replace(/\/[^/]*$/, `/${database}`);
    const namespace = `t${suffix}`;
    const children = new Map<string, ChildProcess>();
    let s3: S3Server;
    let dataDir: string;
    let publicUrl: string;
    let logFile: string;
    const logs = () =>
      existsSync(logFile) ? readFileSync(logFile, "utf8").split("\n").slice(-80).join("\n") : "";

    beforeAll(async () => {
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`create database ${database}`);
      await admin.end();
      const bucket = composeServices().find((s) => s.name === "gateway")?.environment.BATON_S3_BUCKET;
      s3 = await startS3(bucket);
      dataDir = join(work, "var-lib-baton");
      logFile = join(work, "services.log");
      publicUrl = `http://127.0.0.1:${await freePort()}`;
    });

    afterAll(async () => {
      for (const child of children.values()) if (child.exitCode === null) child.kill("SIGKILL");
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
      await dropNamespace(namespace, NATS_URL);
      await s3?.stop();
    });

    /**
     * A compose service's environment with the addresses mapped to this machine: the `postgres`,
     * `nats`, `redis` and `minio` hosts to this machine's servers (a fresh database, a fresh NATS
     * namespace, s3rver in place of MinIO with s3rver's fixed credentials), the published ports to free
     * ports, and the `issuer` volume (/var/lib/baton) to a directory. Everything else is as compose
     * gives it; a compose host left unmapped fails the test.
     */
    async function mapped(service: ComposeService): Promise<Record<string, string>> {
      const env: Record<string, string> = {};
      const gatewayPort = new URL(publicUrl).port;
      for (const [name, value] of Object.entries(service.environment)) {
        let v = value;
        if (name === "DATABASE_URL") {
          expect(new URL(v).host).toBe("postgres:5432");
          v = databaseUrl;
        } else if (name === "BATON_NAMESPACE") v = namespace;
        else if (name === "AWS_ACCESS_KEY_ID") v = S3RVER_CREDENTIALS.accessKeyId;
        else if (name === "AWS_SECRET_ACCESS_KEY") v = S3RVER_CREDENTIALS.secretAccessKey;
        else if (name === "BATON_PORT") v = gatewayPort;
        else
          v = v
            .replace("nats://nats:4222", NATS_URL)
            .replace("redis://redis:6379", "redis://127.0.0.1:6379")
            .replace("http://minio:9000", s3.endpoint)
            .replace("http://localhost:9000", s3.endpoint)
            .replace("http://localhost:7800", publicUrl)
            .replace(/^\/var\/lib\/baton(?=\/)/, dataDir);
        expect(v, `${service.name} ${name}: a compose address left unmapped`).not.toMatch(
          /\/\/(postgres|nats|redis|minio|localhost)[:/]|^\/var\/lib\/baton/,
        );
        env[name] = v;
      }
      // Each container has its own operations port 9464; processes on one host need one each.
      env.BATON_OPS_PORT = String(await freePort());
      return env;
    }

    /** Starts a compose service's command through the image's entry point. */
    async function start(service: ComposeService): Promise<ChildProcess> {
      const log = createWriteStream(logFile, { flags: "a" });
      const [node, args] = entry(service.args);
      const child = spawn(node, args, {
        cwd: app,
        env: imageEnv(await mapped(service)),
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout?.pipe(log, { end: false });
      child.stderr?.pipe(log, { end: false });
      children.set(service.name, child);
      return child;
    }

    /** `baton <args>` as `docker compose exec gateway baton …` runs it: in the image, with no environment of Baton's. */
    async function cli(args: string[]): Promise<string> {
      const [node, full] = entry(args);
      return (await run(node, full, { cwd: app, env: imageEnv({}) })).stdout.trim();
    }

    it("migrate first, then every service: a run walks start_run → claim → submit through the gateway, and SIGTERM stops each service cleanly", async () => {
      const services = composeServices();
      const migrate = services.find((s) => s.command === "migrate") as ComposeService;
      const baton = services.filter((s) => s.command !== null && s.command !== "migrate");
      // Every Baton service waits for the migration to have completed, as compose orders them.
      for (const s of baton)
        expect(s.dependsOn.migrate, s.name).toEqual({ condition: "service_completed_successfully" });

      const [node, args] = entry(migrate.args);
      const migration = await run(node, args, {
        cwd: app,
        env: imageEnv(await mapped(migrate)),
        timeout: 60_000,
      });
      expect(migration.stdout).toMatch(/^baton migrate: applied \d+ migrations; the database has \d+\n$/);

      for (const s of baton) await start(s);
      expect(baton.filter((s) => s.command === "engine")).toHaveLength(2);

      // The README's compose commands: tokens from the dev issuer in the gateway's volume, a sample published.
      const url = `${publicUrl}/mcp`;
      const token = (...args: string[]) => cli(["token", ...args, "--data-dir", dataDir, "--url", url]);
      await until(
        () => existsSync(join(dataDir, "dev-issuer.json")),
        `the gateway's dev issuer\n${logs()}`,
        60_000,
      );
      const [agentToken, managerToken, employeeToken] = await Promise.all([
        token("agent", "a_checker"),
        token("person", "mia@example.com", "--groups", "managers"),
        token("person", "sam@example.com"),
      ]);
      let published = "";
      await until(
        async () => {
          published = await cli([
            "publish",
            "fixtures/expense-approval",
            "--bind",
            "manager=managers",
            "--data-dir",
            dataDir,
            "--url",
            publicUrl,
          ]).catch(() => "");
          return published.startsWith("expense-approval ");
        },
        `baton publish through the gateway\n${logs()}`,
        90_000,
        500,
      );

      const agent = await McpSession.connect(url, agentToken, "agent");
      const employee = await McpSession.connect(url, employeeToken, "employee");
      const manager = await McpSession.connect(url, managerToken, "manager");
      try {
        const started = await employee.ok("start_run", {
          process: "expense-approval",
          inputs: {
            employee: "sam@example.com",
            amount: 84.5,
            receiptUrl: "https://receipts.example.com/r/1",
          },
          requestId: randomUUID(),
          mode: "test",
        });
        const runId = started.run.id;
        expect(started.steps[0]).toEqual({ id: "check_claim", kind: "agent", state: "ready" });
        const work = await agent.ok("get_work", { process: "expense-approval" });
        const item = work.items.find((i: { runId: string }) => i.runId === runId);
        expect(item, "get_work lists the step").toBeDefined();
        const claim = await agent.ok("claim", { ...item.claim.arguments, requestId: randomUUID() });
        const submitted = await agent.ok("submit", {
          token: claim.token,
          output: { matches: true, category: "travel" },
          evidence: [{ kind: "link", ref: "https://receipts.example.com/r/1" }],
          summary: "Receipt matches.",
          next: "approve",
          reason: "The receipt matches and the policy allows it.",
        });
        expect(submitted.run.state).toBe("waiting");
        expect(submitted.workItems[0]).toMatchObject({ stepId: "approve", kind: "approve" });
        const inbox = await manager.ok("get_work", {});
        expect(inbox.items.map((i: { runId: string }) => i.runId)).toContain(runId);
      } finally {
        await Promise.all([agent.close(), employee.close(), manager.close()]);
      }

      // SIGTERM reaches the service itself (node runs it, no launcher in between): each one drains and exits 0.
      const ended = await Promise.all(
        baton.map(async (s) => {
          const child = children.get(s.name) as ChildProcess;
          child.kill("SIGTERM");
          return [s.name, await exited(child, 30_000)] as const;
        }),
      );
      expect(Object.fromEntries(ended), logs()).toEqual(Object.fromEntries(baton.map((s) => [s.name, 0])));
    });
  });
});
