import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import {
  AUTH_ENV,
  authEnvProblems,
  bearerOptionsFromEnv,
  DEV_ISSUER,
  loadOrCreateDevIssuer,
} from "@baton/auth";
import { LocalBlobStore } from "@baton/blob";
import { type Bus, CONTRACTS, call, InProcessBus } from "@baton/bus";
import { CheckConfigSchema, checkSettings } from "@baton/check";
import { type Clock, type ClockMover, systemClock } from "@baton/clock";
import { ensureConsoleBuilt } from "@baton/console";
import { openEmbedded, pingDatabase } from "@baton/db";
import { startEngine } from "@baton/engine-service";
import { startEvidence } from "@baton/evidence";
import {
  CONSOLE_ENV,
  consoleEnvProblems,
  consoleSignInFromEnv,
  type GatewaySettings,
  RATE_LIMIT_ENV,
  type RateLimits,
  rateLimitsFromEnv,
  startGateway,
} from "@baton/gateway";
import { createLogger, Health, type Logger, parseEnv } from "@baton/kit";
import { devMailDir, devNotifierSettings, startNotifier } from "@baton/notifier";
import { iso } from "@baton/process";
import { DEFAULTS, type Identity } from "@baton/protocol";
import { startRegistry } from "@baton/registry";
import { loadManualTime, openManualClock, SCHEDULER_DEFAULTS, startScheduler } from "@baton/scheduler";
import { z } from "zod";
import { FIXTURES_DIR } from "./paths.ts";
import { DEFAULT_ORG, type ServerInfo } from "./token.ts";

/**
 * `baton dev` trusting an OIDC issuer instead of its dev issuer, to try the console's sign-in (issue
 * #16) or a provider's claim mapping (issue #12) on one machine: the gateway's own variables,
 * `BATON_AUTH_ISSUER` and `BATON_AUTH_JWKS_URL` (both or neither), the claim mapping
 * (`BATON_AUTH_*`, `BATON_PERSON_CLIENTS`) and the console's client (`BATON_CONSOLE_*`).
 */
export const DevOidcEnvSchema = z
  .object({
    BATON_AUTH_ISSUER: z.string().min(1).optional(),
    BATON_AUTH_JWKS_URL: z.url().optional(),
    ...AUTH_ENV,
    ...CONSOLE_ENV,
  })
  .superRefine((c, ctx) => {
    if ((c.BATON_AUTH_ISSUER === undefined) !== (c.BATON_AUTH_JWKS_URL === undefined))
      ctx.addIssue({
        code: "custom",
        path: ["BATON_AUTH_JWKS_URL"],
        message: "set BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL together (or neither, for the dev issuer)",
      });
    const oidc = c.BATON_AUTH_ISSUER !== undefined;
    const problems = [
      ...(oidc ? authEnvProblems(c) : []),
      ...consoleEnvProblems({ ...c, ...(oidc ? {} : { BATON_DEV_ISSUER_FILE: "dev" }) }),
    ];
    for (const p of problems) ctx.addIssue({ code: "custom", path: [p.path], message: p.message });
  });

/**
 * The gateway's rate limits from `BATON_RATE_*` in `env` (docs/configuration.md), counted in memory
 * by `baton dev` (`REDIS_URL` is not read): the defaults when none is set; `0` switches a limit off,
 * as `pnpm bench` does. Throws an Error naming each unusable variable (never its value).
 */
export function devRateLimitsFromEnv(env: NodeJS.ProcessEnv): RateLimits {
  const { REDIS_URL: _redis, ...limits } = RATE_LIMIT_ENV;
  return rateLimitsFromEnv(parseEnv(z.object(limits), env, "dev", "baton dev"));
}

/** An OIDC issuer `baton dev` trusts instead of its dev issuer (see {@link DevOidcEnvSchema}). */
export interface DevOidc {
  issuer: string;
  jwksUrl: string;
  env: z.infer<typeof DevOidcEnvSchema>;
}

/**
 * The OIDC issuer `env` names for `baton dev`, or null when it names none (the dev issuer). Throws
 * an Error listing every problem (never a value: an environment may hold secrets).
 */
export function devOidcFromEnv(env: NodeJS.ProcessEnv): DevOidc | null {
  const parsed = DevOidcEnvSchema.safeParse(env);
  if (!parsed.success)
    throw new Error(
      `the environment is not usable:\n${parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message.replace(/, received .*/, "")}`).join("\n")}`,
    );
  const { BATON_AUTH_ISSUER: issuer, BATON_AUTH_JWKS_URL: jwksUrl } = parsed.data;
  return issuer !== undefined && jwksUrl !== undefined ? { issuer, jwksUrl, env: parsed.data } : null;
}

/** Options of `baton dev`. */
export interface DevOptions {
  port: number;
  dataDir: string;
  clock: "real" | "manual";
  /** Publish the samples in `fixtures/` (on by default). */
  samples: boolean;
  /** The SMTP server mail goes through (`--smtp`); default `BATON_SMTP_URL`, else `.eml` files in `<data-dir>/mail`. */
  smtp?: string;
  log?: Logger;
  /** The gateway's rate limits, counted in memory (default: the gateway's defaults; issue #12). */
  rateLimits?: RateLimits;
  /** Trust this OIDC issuer instead of the dev issuer (`baton token`'s tokens are then refused). */
  oidc?: DevOidc | null;
}

/** A running embedded server. */
export interface DevServer {
  url: string;
  info: ServerInfo;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolveFn, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolveFn(port));
    });
  });
}

/** Fails fast, before touching the data directory, when `port` is taken. */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolveFn, reject) => {
    const srv = createServer();
    srv.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(
              `port ${port} is already in use (another baton dev?); pass --port N, or --port 0 for a free one`,
            )
          : error,
      ),
    );
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolveFn()));
  });
}

function secretIn(dir: string): string {
  const file = join(dir, "secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("hex");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

function lock(dir: string): void {
  const file = join(dir, "baton.pid");
  if (existsSync(file)) {
    const pid = Number(readFileSync(file, "utf8"));
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = pid !== process.pid;
    } catch {
      alive = false;
    }
    if (alive) throw new Error(`another baton dev (pid ${pid}) is using ${dir}; stop it or pass --data-dir`);
  }
  writeFileSync(file, String(process.pid));
}

/**
 * `baton dev` (ARCHITECTURE rule 4): every service in one process over the in-process bus, PGlite in
 * `<data-dir>/pgdata` (on a worker thread of its own, so its statements never hold the event loop),
 * files in `<data-dir>/files`, the dev issuer's key in `<data-dir>/dev-issuer.json`. Publishes the
 * samples in `fixtures/` with each role bound to a group of the same name. Restarted on the same
 * directory it keeps every process and run.
 */
export async function startDev(options: DevOptions): Promise<DevServer> {
  const dir = resolve(options.dataDir);
  if (options.port !== 0) await assertPortFree(options.port);
  mkdirSync(dir, { recursive: true });
  lock(dir);
  const log = options.log ?? createLogger("baton", process.env.BATON_LOG_LEVEL ?? "warn");
  // A fresh clone's install built the console; build it here when its sources changed since (issue #16).
  await ensureConsoleBuilt((note) => log.warn({}, note)).catch((error: unknown) =>
    log.error({ err: String(error) }, "the web console did not build; /ui/ answers 503 until it does"),
  );
  const secret = secretIn(dir);
  const issuer = await loadOrCreateDevIssuer(join(dir, "dev-issuer.json"));
  const port = options.port === 0 ? await freePort() : options.port;
  const publicUrl = `http://127.0.0.1:${port}`;
  const database = await openEmbedded(join(dir, "pgdata"), (reason) =>
    log.error(
      { err: reason.message },
      "the embedded database stopped: every call fails from now on; stop baton dev and start it again on the same --data-dir",
    ),
  );
  const bus = new InProcessBus();
  const blobs = new LocalBlobStore(join(dir, "files"));
  let clock: Clock = systemClock;
  let mover: ClockMover | null = null;
  if (options.clock === "manual") {
    // Continues from the time this data directory had reached (its stored manual time, or the newest
    // run's if a real-time session ran since): a manual clock never goes backwards.
    const manual = await openManualClock(database.db);
    ({ clock, mover } = manual);
    if (manual.caughtUp !== null)
      log.warn(
        { stored: iso(manual.caughtUp), now: iso(clock.now()) },
        "the manual clock resumes at the newest run's time, later than it was left (a real-time session ran on this data directory)",
      );
  } else {
    const manual = await loadManualTime(database.db);
    if (manual !== null && manual > Date.now()) {
      log.warn(
        { manualClock: iso(manual) },
        "this data directory ran on a manual clock that is ahead of real time; its timers fire when real time gets there (start with --clock manual to keep moving it)",
      );
    }
  }

  // The services, each started as `baton serve` starts it, on this process's infrastructure.
  const db = database.db;
  // `/readyz` and `/metrics` on this server's own port (issue #13): the embedded database, and what
  // the services add (the file store, the engine's partitions).
  const health = new Health();
  health.add("pglite", () => pingDatabase(db));
  // The check profile's evaluator, from the same BATON_CHECK_* the services read (check.md §5).
  const check = checkSettings(parseEnv(CheckConfigSchema, process.env, "dev"));
  const registry = await startRegistry({ evaluator: check.evaluator !== null }, { db, bus, clock, log });
  const evidence = await startEvidence({}, { db, bus, blobs, clock, log, health });
  const engine = await startEngine(
    {
      replicaId: "dev",
      partitions: DEFAULTS.partitions,
      leaseMs: DEFAULTS.leaseSeconds * 1000,
      runDataBytes: DEFAULTS.runDataBytes,
      operatorGroup: DEFAULTS.operatorGroup,
      secret,
      callTimeoutMs: 10_000,
      check: check.limits,
      evaluator: check.evaluator,
    },
    { db, bus, clock, log, health },
  );
  const scheduler = await startScheduler(
    { ...SCHEDULER_DEFAULTS, replicaId: "dev", partitions: DEFAULTS.partitions, clockOrg: DEFAULT_ORG },
    { db, bus, clock, mover, log },
  );
  // Reads the outbox table itself, so a crash loses no notification (issue #11).
  const notifier = await startNotifier(
    devNotifierSettings(process.env, { publicUrl, ...(options.smtp ? { smtpUrl: options.smtp } : {}) }),
    {
      db,
      bus,
      clock,
      log,
      mailDir: devMailDir(dir),
      ...(mover ? { watchClock: (listener: (now: number) => void) => mover.onChange(listener) } : {}),
    },
  );
  const oidc = options.oidc ?? null;
  const auth: GatewaySettings["auth"] = oidc
    ? bearerOptionsFromEnv(oidc.env, oidc.issuer, oidc.jwksUrl, `${publicUrl}/mcp`)
    : { issuer: DEV_ISSUER, keys: { jwks: [issuer.publicJwk] } };
  const consoleSignIn = oidc ? consoleSignInFromEnv(oidc.env) : undefined;
  const gateway = await startGateway(
    {
      host: "127.0.0.1",
      port,
      auth,
      ...(consoleSignIn ? { consoleSignIn } : {}),
      secret,
      publicUrl,
      partitions: DEFAULTS.partitions,
      leaseSeconds: DEFAULTS.leaseSeconds,
      runDataBytes: DEFAULTS.runDataBytes,
      maxUploadBytes: DEFAULTS.maxUploadBytes,
      callTimeoutMs: 15_000,
      version: "0.1.0",
      ...(options.rateLimits ? { rateLimits: options.rateLimits } : {}),
      ops: health,
      check,
    },
    { bus, clock, log, blobs, health },
  );

  if (options.samples) {
    const operator: Identity = {
      org: DEFAULT_ORG,
      kind: "person",
      id: "baton-dev@localhost",
      groups: [],
      operator: true,
    };
    for (const name of readdirSync(FIXTURES_DIR).sort()) {
      const file = join(FIXTURES_DIR, name, "PROCESS.md");
      if (!existsSync(file)) continue;
      await publishSample(bus, operator, { folder: name, source: readFileSync(file, "utf8") }, log);
    }
  }

  health.serving();
  const info: ServerInfo = { url: `${publicUrl}/mcp`, publicUrl, pid: process.pid, clock: options.clock };
  writeFileSync(join(dir, "server.json"), `${JSON.stringify(info, null, 2)}\n`);
  let stopped = false;
  return {
    url: info.url,
    info,
    async stop() {
      if (stopped) return;
      stopped = true;
      // Requests in flight get their answer before the services behind them stop.
      await gateway.stop();
      await notifier.stop();
      await scheduler.stop();
      await engine.stop();
      await evidence.stop();
      await registry.stop();
      await bus.close();
      await database.close();
      rmSync(join(dir, "baton.pid"), { force: true });
    },
  };
}

/**
 * Imports, binds (each role to the group of its name) and publishes one sample through the registry,
 * over the bus as the admin API would, as `operator`. A sample that does not import or publish is
 * logged, not fatal.
 */
async function publishSample(
  bus: Bus,
  operator: Identity,
  sample: { folder: string; source: string },
  log: Logger,
): Promise<void> {
  const as = () => ({ identity: operator, deadline: Date.now() + 10_000 });
  const registry = CONTRACTS.registry;
  const imported = await call(
    bus,
    registry,
    { op: "import", folderName: sample.folder, source: sample.source },
    as(),
  );
  if (!imported.ok) {
    log.error({ folder: sample.folder, error: imported.error }, "sample does not import");
    return;
  }
  const { draftId, roles } = imported.data;
  const bindings = Object.fromEntries(roles.map((r) => [r, r]));
  await call(bus, registry, { op: "bind", draftId, bindings }, as());
  const published = await call(bus, registry, { op: "publish", draftId }, as());
  if (!published.ok) log.error({ folder: sample.folder, error: published.error }, "sample does not publish");
}
