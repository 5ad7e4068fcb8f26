import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eventsStream, NatsBus } from "@baton/bus";
import { NatsClock } from "@baton/clock/nats";
import { McpSession } from "@baton/conformance/mcp";
import pg from "pg";
import { type PublishOutcome, publishFolder } from "../../services/cli/src/publish.ts";
import { devToken } from "../../services/cli/src/token.ts";
import { stopProcess } from "./processes.ts";
import { type S3Server, startS3 } from "./s3.ts";

/**
 * Baton started for a test the way an operator starts it: `baton dev` as a child process, or every
 * service as its own `baton serve` process over this machine's NATS and PostgreSQL. Tests talk to it
 * only over HTTP (MCP and the admin API).
 */

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
/**
 * What runs from the sources (`baton dev`, the build script, and every service with
 * `BATON_TEST_SOURCE=1`; distributed services otherwise run the compiled build, see `testBuild`)
 * runs as `node --import tsx <script>`: one process, so a signal (SIGKILL included) reaches the
 * service itself. The `tsx` binary would run the service in a child process, which a SIGKILL to the
 * wrapper leaves running.
 */
const NODE = process.execPath;
const TSX_IMPORT = ["--import", "tsx"];
const CLI = join(REPO, "services/cli/src/main.ts");

/**
 * The compiled CLI (`pnpm build`, as the image runs it) that distributed deployments run in a test
 * run, built once per run into `BATON_TEST_TMP` by the first deployment that needs it: a service
 * starts on about half the CPU under Node alone than under `tsx` (a deployment ready in about 6 s
 * instead of 11 on this machine), and the services tested are the ones production runs. Null outside
 * a test run (no `BATON_TEST_TMP`: the bench, scripts) and with `BATON_TEST_SOURCE=1` (the sources
 * under `tsx`, say while editing a service and running one file). Throws with the build's output when
 * it fails (a compiler error: `pnpm typecheck` says the same).
 */
async function testBuild(): Promise<string | null> {
  const root = process.env.BATON_TEST_TMP;
  if (!root || process.env.BATON_TEST_SOURCE === "1") return null;
  const dir = join(root, "build");
  const cli = join(dir, "services/cli/src/main.js");
  const done = join(root, "build.done");
  // Why the build failed: every later deployment of the run fails at once with it, rather than
  // each waiting for a build that will never finish.
  const failed = join(root, "build.failed");
  const lock = join(root, "build.lock");
  const failure = () => new Error(readFileSync(failed, "utf8"));
  if (existsSync(done)) return cli;
  if (existsSync(failed)) throw failure();
  try {
    // Test files may run in several workers: the one that makes the lock builds, the others wait.
    mkdirSync(lock);
  } catch {
    const deadline = Date.now() + 300_000;
    while (!existsSync(done)) {
      if (existsSync(failed)) throw failure();
      if (Date.now() > deadline) throw new Error(`the test build in ${dir} did not finish within 5 minutes`);
      await new Promise((r) => setTimeout(r, 250));
    }
    return cli;
  }
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(
        NODE,
        [...TSX_IMPORT, join(REPO, "scripts/build.ts"), "--out", dir, "--install", "--offline"],
        { cwd: REPO, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`pnpm build for the tests failed:\n${stdout}${stderr}`)) : resolve(),
      ),
    );
  } catch (error) {
    writeFileSync(failed, (error as Error).message);
    throw error;
  }
  writeFileSync(done, "");
  return cli;
}

export const POSTGRES_URL = process.env.BATON_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

/** Who a session acts as. */
export type As =
  | { kind: "agent"; id: string }
  | { kind: "person"; id: string; groups?: string[]; operator?: boolean; org?: string }
  | { kind: "agent"; id: string; org: string };

/** A running Baton. */
export interface Deployment {
  kind: "embedded" | "distributed";
  /** The MCP endpoint. */
  url: string;
  /** Directory with the dev issuer's key (and, embedded, the data). */
  dataDir: string;
  /** Embedded: the web console's address `baton dev` printed under its MCP line (issue #16). */
  consoleUrl?: string;
  token(as: As): Promise<string>;
  session(as: As): Promise<McpSession>;
  /** `baton publish` of a folder over the admin API, as an operator of `org`. */
  publish(folder: string, bindings?: Record<string, string>, org?: string): Promise<PublishOutcome>;
  /** The tail of the server's log, for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

/** Whether `port` on 127.0.0.1 can be listened on now; with 0, the port the system chose instead. */
function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(null));
    srv.listen(port, "127.0.0.1", () => {
      const a = srv.address();
      const chosen = typeof a === "object" && a ? a.port : 0;
      srv.close(() => resolve(chosen));
    });
  });
}

/**
 * Ports each vitest worker hands out from: its own block below the system's ephemeral range (which
 * starts at 32768), so as many workers get a block as fit under it (two: vitest.config.ts runs two).
 */
const WORKER_PORTS = { base: 20_000, size: 5_000, blocks: Math.floor((32_768 - 20_000) / 5_000) };
/** The next port this process tries in its worker's block; starts at a random place in it. */
let nextPort = Math.floor(Math.random() * WORKER_PORTS.size);

/**
 * A TCP port free on 127.0.0.1 now, which a test gives a server to bind later (and to bind again
 * after a restart). In a vitest worker (`VITEST_POOL_ID` 1, 2, …) it comes from that worker's own
 * block of 5,000 ports below 32768, walked in order: integration files run two at a time, and a port
 * one file chose but has not bound yet (a service started minutes later, a private NATS between its
 * stop and its start) is then never handed to the other worker's file, nor to anything that asks the
 * system for a port (s3rver, proxies, `listen(0)`), which gets one from the ephemeral range above.
 * Elsewhere (the bench, scripts, a worker past the last block) the system chooses.
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(worker) || worker < 1 || worker > WORKER_PORTS.blocks) {
    const port = await tryListen(0);
    if (port === null) throw new Error("no free TCP port on 127.0.0.1");
    return port;
  }
  const base = WORKER_PORTS.base + (worker - 1) * WORKER_PORTS.size;
  for (let tries = 0; tries < WORKER_PORTS.size; tries++) {
    const port = base + (nextPort++ % WORKER_PORTS.size);
    if ((await tryListen(port)) !== null) return port;
  }
  throw new Error(`no free TCP port on 127.0.0.1 in ${base}-${base + WORKER_PORTS.size - 1}`);
}

function common(
  kind: Deployment["kind"],
  url: string,
  dataDir: string,
  logFile: string,
  stop: () => Promise<void>,
): Deployment {
  const token = (as: As) => {
    const org = "org" in as && as.org ? as.org : "default";
    return devToken(
      dataDir,
      as.kind === "agent"
        ? { sub: as.id, org, kind: "agent", groups: [], roles: [] }
        : {
            sub: as.id,
            org,
            kind: "person",
            groups: as.groups ?? [],
            roles: as.operator ? ["operator"] : [],
          },
      url,
    );
  };
  return {
    kind,
    url,
    dataDir,
    token,
    async session(as) {
      return McpSession.connect(url, await token(as), `${as.kind}:${as.id}`);
    },
    async publish(folder, bindings = {}, org = "default") {
      const t = await token({ kind: "person", id: "operator@example.com", operator: true, org });
      return publishFolder(folder, bindings, url.replace(/\/mcp$/, ""), t);
    },
    logs() {
      try {
        return readFileSync(logFile, "utf8").split("\n").slice(-60).join("\n");
      } catch {
        return "";
      }
    },
    stop,
  };
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = "";
    const timer = setTimeout(
      () => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${buffer}`)),
      timeoutMs,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      const m = pattern.exec(buffer);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing ${pattern}:\n${buffer}`));
    });
  });
}

/** `baton dev --port 0 --data-dir <tmp>` as a child process, as the README starts it. */
export async function startEmbedded(
  options: {
    clock?: "manual";
    dataDir?: string;
    /** More `baton dev` arguments, e.g. `--smtp <url>`. */
    args?: string[];
    /** More environment, e.g. `BATON_OPERATORS_EMAIL`. */
    env?: Record<string, string>;
  } = {},
): Promise<EmbeddedDeployment> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "baton-dev-"));
  const logFile = join(dataDir, "test.log");
  const log = createWriteStream(logFile, { flags: "a" });
  const args = [
    CLI,
    "dev",
    "--port",
    "0",
    "--data-dir",
    dataDir,
    ...(options.clock ? ["--clock", options.clock] : []),
    ...(options.args ?? []),
  ];
  // BATON_PROFILE_DIR=<dir> writes a CPU profile of `baton dev` on exit, as of every service below.
  const profile = process.env.BATON_PROFILE_DIR
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BATON_PROFILE_DIR}`]
    : [];
  const child = spawn(NODE, [...profile, ...TSX_IMPORT, ...args], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, BATON_LOG_LEVEL: "warn", ...options.env },
  });
  child.stderr?.pipe(log);
  const m = await waitForLine(child, /MCP endpoint: (\S+)\nConsole: (\S+)\n/, 60_000);
  const url = m[1] as string;
  const deployment = common("embedded", url, dataDir, logFile, async () => {
    await stopProcess(child);
    log.end();
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return { ...deployment, kind: "embedded", consoleUrl: m[2] as string, process: child };
}

/** `baton dev` started by {@link startEmbedded}: its one process (its pid for CPU readings, bench/). */
export interface EmbeddedDeployment extends Deployment {
  kind: "embedded";
  process: ChildProcess;
}

/**
 * Deletes what a test deployment left in JetStream: its events stream and its partition and clock KV
 * buckets (each a stream), so test runs do not pile up on this machine's NATS. Best effort.
 */
export async function dropNamespace(namespace: string, natsUrl: string): Promise<void> {
  try {
    const bus = await NatsBus.connect(natsUrl, "baton-test-cleanup", namespace);
    try {
      const jsm = await bus.connection.jetstreamManager();
      const streams = [
        eventsStream(namespace),
        `KV_${namespace}_partitions`,
        `KV_${NatsClock.bucket(namespace)}`,
      ];
      for (const name of streams) await jsm.streams.delete(name).catch(() => false);
    } finally {
      await bus.close();
    }
  } catch {
    // NATS is gone already; nothing to clean.
  }
}

/** Options of {@link startDistributed}. */
export interface DistributedOptions {
  /** Engine replicas (default 1). */
  engines?: number;
  /** Scheduler replicas started with the deployment (default 1; more can be started with `serve`). */
  schedulers?: number;
  /** `manual`: every service shares one manual clock through NATS KV (`BATON_CLOCK=manual`). */
  clock?: "manual" | "real";
  /** Extra environment for every service, e.g. `BATON_LEASE_SECONDS`. */
  env?: Record<string, string>;
  /** The NATS the services use (default {@link NATS_URL}), e.g. a private server or a proxy to one. */
  natsUrl?: string;
  /**
   * Where the services reach PostgreSQL (e.g. a test's TCP proxy), when not where the test does:
   * the deployment's database is still created and inspected through {@link POSTGRES_URL}.
   */
  postgresVia?: { host: string; port: number };
  /** Extra environment for one service's processes, e.g. `{ gateway: { NATS_URL: … } }`. */
  serviceEnv?: Partial<Record<string, Record<string, string>>>;
  /**
   * Where file bytes live (issue #10): `s3` (default), a bucket on an s3rver the deployment starts
   * and stops; `dir`, one directory every service shares (`BATON_BLOB_DIR`, a single host).
   */
  blobs?: "s3" | "dir";
  /**
   * The compiled CLI (`<pnpm build --out DIR>/services/cli/src/main.js`) to run the services with
   * Node alone, as the image does; default: the test run's build (see `testBuild`), or outside a
   * test run the sources under `tsx`.
   */
  compiledCli?: string;
  /** Run the services from the sources under `tsx`, even in a test run (`pnpm bench --source`). */
  sources?: boolean;
  /**
   * A command each named service runs under, e.g. `{ engine: ["valgrind", "--tool=callgrind"] }`
   * (bench/instructions.ts); its process is then the wrapper's, which runs Node in itself.
   */
  wrap?: Partial<Record<string, string[]>>;
  /** How long the deployment may take to become ready, ms (default 90 s). */
  readyMs?: number;
  /**
   * PostgreSQL settings of the deployment's database (`alter database … set`), in force for every
   * connection the services open, e.g. `{ track_functions: "pl" }` (bench/).
   */
  databaseSettings?: Record<string, string>;
}

/** A distributed deployment, with what tests of the services themselves need. */
export interface DistributedDeployment extends Deployment {
  kind: "distributed";
  /** The deployment's own PostgreSQL database (the journal, timers). */
  databaseUrl: string;
  /** Its NATS namespace (`BATON_NAMESPACE`). */
  namespace: string;
  /** Starts one more `baton serve <service>` process, with extra environment. */
  serve(service: string, env?: Record<string, string>): ChildProcess;
  /** The `baton serve <service>` processes of this deployment still running (to stop one in a test). */
  running(service: string): ChildProcess[];
  /** The S3-compatible server holding the file bytes, or null with `blobs: "dir"`. */
  s3: S3Server | null;
  /**
   * The operations server (`/healthz`, `/readyz`, `/metrics`, issue #13) of a service process this
   * deployment started, as `http://127.0.0.1:<port>`.
   */
  opsUrl(child: ChildProcess): string;
}

/**
 * Every service as its own `baton serve` process over this machine's NATS and PostgreSQL: a fresh
 * database and NATS namespace per deployment, so runs never see each other.
 */
export async function startDistributed(options: DistributedOptions = {}): Promise<DistributedDeployment> {
  // First, so a failed build leaves nothing behind (a database, an S3 server).
  const compiledCli = options.compiledCli ?? (options.sources ? null : await testBuild());
  const dataDir = mkdtempSync(join(tmpdir(), "baton-svc-"));
  const logFile = join(dataDir, "test.log");
  const log = createWriteStream(logFile, { flags: "a" });
  // Every service process (and those a test starts later) pipes into this one stream.
  log.setMaxListeners(0);
  const suffix = randomBytes(5).toString("hex");
  const database = `baton_test_${suffix}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create database ${database}`);
  for (const [name, value] of Object.entries(options.databaseSettings ?? {}))
    await admin.query(`alter database ${database} set ${name} = ${pg.escapeLiteral(value)}`);
  await admin.end();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const databaseUrl = POSTGRES_URL.replace(/\/[^/]*$/, `/${database}`);
  const natsUrl = options.natsUrl ?? NATS_URL;
  const s3 = (options.blobs ?? "s3") === "s3" ? await startS3() : null;
  let serviceDatabaseUrl = databaseUrl;
  if (options.postgresVia) {
    const u = new URL(databaseUrl);
    u.hostname = options.postgresVia.host;
    u.port = String(options.postgresVia.port);
    serviceDatabaseUrl = u.toString();
  }
  const env = {
    ...process.env,
    DATABASE_URL: serviceDatabaseUrl,
    NATS_URL: natsUrl,
    BATON_NAMESPACE: `t${suffix}`,
    BATON_SECRET: randomBytes(32).toString("hex"),
    ...(s3 ? s3.env : { BATON_BLOB_DIR: join(dataDir, "files") }),
    BATON_PUBLIC_URL: publicUrl,
    BATON_HOST: "127.0.0.1",
    BATON_PORT: String(port),
    BATON_DEV_ISSUER_FILE: join(dataDir, "dev-issuer.json"),
    BATON_PARTITIONS: "16",
    BATON_LOG_LEVEL: process.env.BATON_TEST_LOG_LEVEL ?? "warn",
    BATON_CLOCK: options.clock ?? "real",
    ...options.env,
  };
  const children: ChildProcess[] = [];
  const services = new Map<ChildProcess, string>();
  const opsPorts = new Map<ChildProcess, number>();
  // Ports for the operations servers, taken before any service starts (one each; more on demand).
  const spare: number[] = [];
  for (let i = 0; i < 12; i++) spare.push(await freePort());
  const serve = (service: string, extra: Record<string, string> = {}) => {
    const opsPort = spare.pop() ?? 0;
    // BATON_PROFILE_DIR=<dir> writes a CPU profile of every service on exit (bench/, profiling).
    const profile = process.env.BATON_PROFILE_DIR
      ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BATON_PROFILE_DIR}`]
      : [];
    const program = compiledCli ? [compiledCli] : [...TSX_IMPORT, CLI];
    const wrapper = options.wrap?.[service] ?? [];
    const command = [...wrapper, NODE, ...profile, ...program, "serve", service];
    const child = spawn(command[0] as string, command.slice(1), {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...env, BATON_OPS_PORT: String(opsPort), ...options.serviceEnv?.[service], ...extra },
    });
    opsPorts.set(
      child,
      Number((extra.BATON_OPS_PORT ?? options.serviceEnv?.[service]?.BATON_OPS_PORT) || opsPort),
    );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    children.push(child);
    services.set(child, service);
    return child;
  };
  // The first service migrates the database; the others wait on the advisory lock.
  serve("registry");
  serve("evidence");
  for (let i = 0; i < (options.engines ?? 1); i++) serve("engine", { BATON_REPLICA_ID: `engine-${i}` });
  for (let i = 0; i < (options.schedulers ?? 1); i++)
    serve("scheduler", { BATON_REPLICA_ID: `scheduler-${i}` });
  serve("gateway");
  const url = `${publicUrl}/mcp`;
  const base = common("distributed", url, dataDir, logFile, async () => {
    await Promise.all(children.map((c) => stopProcess(c)));
    log.end();
    const a = new pg.Client({ connectionString: POSTGRES_URL });
    await a.connect();
    await a.query(`drop database if exists ${database} with (force)`);
    await a.end();
    await dropNamespace(env.BATON_NAMESPACE, natsUrl);
    await s3?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const deployment: DistributedDeployment = {
    ...base,
    kind: "distributed",
    databaseUrl,
    namespace: env.BATON_NAMESPACE,
    serve,
    running: (service) =>
      children.filter((c) => services.get(c) === service && c.exitCode === null && c.signalCode === null),
    s3,
    opsUrl: (child) => {
      const port = opsPorts.get(child);
      if (!port) throw new Error("this process has no known operations port");
      return `http://127.0.0.1:${port}`;
    },
  };
  // Ready when the gateway answers, the engine serves reads (it serves writes first) and, when one
  // was started, a scheduler answers the clock. Five tsx processes start slowly on a busy 2-core box.
  const deadline = Date.now() + (options.readyMs ?? 90_000);
  const operator = await deployment.token({ kind: "person", id: "readiness@example.com", operator: true });
  // What the last attempt saw, so a deployment that never became ready says why.
  let last = "no attempt finished";
  for (;;) {
    try {
      const session = await deployment.session({ kind: "agent", id: "readiness" });
      const work = await session.call("get_work", {});
      const processes = await session.call("list_processes", {});
      await session.close();
      const clock =
        (options.schedulers ?? 1) === 0 ||
        (await fetch(`${publicUrl}/api/clock`, { headers: { authorization: `Bearer ${operator}` } })).ok;
      if (work.ok && processes.ok && clock) break;
      last = `get_work ${JSON.stringify(work).slice(0, 300)}; list_processes ${JSON.stringify(processes).slice(0, 300)}; clock ${clock ? "answered" : "not answered"}`;
    } catch (error) {
      // not up yet
      last = `threw ${error instanceof Error ? error.message : String(error)}`;
    }
    if (Date.now() > deadline) {
      const running = children.map(
        (c) =>
          `${services.get(c)} ${c.exitCode === null && c.signalCode === null ? "running" : `exited ${c.exitCode ?? c.signalCode}`}`,
      );
      await deployment.stop();
      throw new Error(
        `services did not become ready (last attempt: ${last}; processes: ${running.join(", ")}):\n${deployment.logs()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return deployment;
}

/** The deployments every end-to-end suite runs against (issue #2: "the same suite passes twice"). */
export const DEPLOYMENTS = [
  ["embedded (baton dev)", () => startEmbedded()],
  ["distributed (baton serve over NATS and PostgreSQL)", () => startDistributed()],
] as const;
