import { parseArgs } from "node:util";
import { approvalProcess, enableApprovals, parseTiers } from "./approvals.ts";
import { advanceClock, advanceDuration, clockNow } from "./clock.ts";
import { collectOrphans, formatGcSummary } from "./evidence-gc.ts";
import {
  addWebhook,
  formatDeliveries,
  formatWebhooks,
  listWebhooks,
  redeliver,
  removeWebhook,
  setGroupEmail,
  webhookDeliveries,
} from "./notify.ts";
import { publishFolder } from "./publish.ts";
import { fetchCheckReport, formatCheckReport, sinceInstant } from "./report.ts";
import {
  consoleLink,
  DEFAULT_ORG,
  DEFAULT_PORT,
  devToken,
  mcpUrl,
  requireDevIssuer,
  serverUrl,
} from "./token.ts";
import { formatValidated, validatePaths } from "./validate.ts";

const USAGE = `baton — a server for the Agent Process protocol (core-2)

Usage:
  baton dev [--port N] [--data-dir DIR] [--clock manual] [--smtp URL]
      Every service in one process, PostgreSQL embedded (PGlite) in DIR (default ./.baton).
      Publishes the samples in fixtures/ and prints "MCP endpoint: <url>" and "Console: <url>/ui/".
      Mail goes through the SMTP server at URL (or BATON_SMTP_URL); without one, each mail is
      written to DIR/mail/ as an .eml file. Webhooks may target http:// and private addresses.
      With BATON_AUTH_ISSUER and BATON_AUTH_JWKS_URL set, tokens come from that OIDC issuer instead
      of the dev issuer (claim mapping: BATON_AUTH_*; the console's client: BATON_CONSOLE_CLIENT_ID).
      Rate limits: the gateway's BATON_RATE_* (counted in memory; 0 switches one off).
  baton serve <gateway|registry|engine|evidence|scheduler|notifier>
      One service over NATS and PostgreSQL, configured by environment (see docs/configuration.md).
  baton migrate
      Applies the database migrations (DATABASE_URL) and exits; safe to run twice and from several
      processes at once. The services also apply them on start.
  baton token agent <id> [--data-dir DIR] [--org O] [--url URL]
  baton token person <email> [--groups g1,g2] [--operator] [--console] [--data-dir DIR] [--org O] [--url URL]
      Prints a bearer token signed by the dev issuer in DIR, for the server at URL; with --console,
      a link that signs the person in to the web console instead (<base>/ui/#token=<token>).
      DIR holds the key the server trusts: baton dev's --data-dir, or the folder of the gateway's
      BATON_DEV_ISSUER_FILE (named dev-issuer.json); refused when DIR has no key.
  baton publish <folder> [--bind role=group]… [--url URL] [--token T] [--data-dir DIR] [--org O]
      Imports and publishes a process folder; prints name, version and content hash.
  baton approvals enable --tier <tier>=<group> [--tier <tier>=<group>]… [--due 15m] [--url URL] [--token T] [--data-dir DIR] [--org O]
      Publishes one approval process per risk tier, tool-approval-<tier>: an agent runtime asks a
      person in <group> before it runs a tool call of that tier (docs/approvals.md). One task step
      whose routes finish approved, denied or skipped, due after --due when given. Prints
      "name version contentHash" per tier, as baton publish does.
  baton approvals show <tier> [--due 15m]
      Prints the PROCESS.md that enable publishes for the tier.
  baton clock advance <duration> [--url URL] [--token T] [--data-dir DIR] [--org O]
      Moves a manual clock (baton dev --clock manual) forward by 30m, 4h, 3d…; returns once every
      timer that fell due has been applied, and prints the new time. Retries itself safely (the
      clock moves once); 0m applies what is due now without moving it.
  baton clock now [--url URL] [--token T] [--data-dir DIR] [--org O]
      Prints the server's time, and "manual" when its clock is manual.
  baton evidence gc --older-than <duration> [--delete] [--url URL] [--token T] [--data-dir DIR] [--org O]
      Lists the organization's stored files that no upload cites and no upload in progress needs,
      older than the duration (e.g. 7d; at least 1m); deletes them only with --delete.
  baton report checks <process> [--since DATE] [--json] [--url URL] [--token T] [--data-dir DIR] [--org O]
      How the process's recorded check verdicts agreed with its approvers' decisions (check profile,
      "earn trust first"): per checked step and question the counts, the agreement rate (pass with
      approved, fail with rejected; unsure and error counted apart) and the runs where they
      disagreed. DATE is YYYY-MM-DD or an RFC 3339 time. For operators; see docs/check-report.md.
  baton conformance --url URL (--tokens FILE | --data-dir DIR) [--clock baton] [--only PATTERN] [--json | --junit FILE]
  baton conformance --print-tokens-template
      Runs the Agent Process conformance scenarios over MCP against the server at URL, every response
      checked against the official schemas; prints one line per check with the spec section it
      proves and a summary. FILE names the identities to act as; against Baton, --data-dir DIR mints
      them from its dev issuer. --clock baton moves Baton's manual clock for the timed scenarios
      (skipped otherwise). Exit 0 all passed, 1 a check failed, 2 could not run. Runs from a clone;
      see docs/conformance-runner.md.
  baton validate <PROCESS.md or folder>… [--json]
      Prints every issue as path:line:col: message; exits 1 when any.
  baton webhook add <target-url> [--events t1,t2] [--include-test-runs] [--json] [--url URL] [--token T] [--data-dir DIR] [--org O]
      Subscribes target-url to the organization's events (default: all types; test runs only with
      --include-test-runs). Prints "<id> <secret>" (the secret is shown this once), or with --json
      {"id": …, "secret": …}. Payloads are signed the Standard Webhooks way with that secret.
  baton webhook list | remove <id> | deliveries <id> [--limit N] | redeliver <delivery-id>  [--json] [--url URL] [--token T] [--data-dir DIR] [--org O]
      Lists subscriptions; removes one; shows its deliveries with every attempt (time, status,
      response code, next retry); sends a dead delivery again (same webhook-id).
  baton group email <group> <address> | <group> --remove  [--url URL] [--token T] [--data-dir DIR] [--org O]
      Sets (or removes) the group's mailing address: its work items and overdue notices are mailed there.
`;

function fail(message: string, code = 2): never {
  process.stderr.write(`baton: ${message}\n`);
  process.exit(code);
}

async function dev(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string", default: String(DEFAULT_PORT) },
      "data-dir": { type: "string", default: ".baton" },
      clock: { type: "string", default: "real" },
      "no-samples": { type: "boolean", default: false },
      smtp: { type: "string" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port ${values.port} is not a port number`);
  if (values.clock !== "real" && values.clock !== "manual")
    fail("--clock takes manual (or real, the default)");
  // Loaded here, not at the top: dev.ts pulls in every service and PGlite, which `baton serve`, `token`,
  // `validate` and the rest do not need (about 1.5 s of CPU on each start). OpenTelemetry first, when
  // an OTLP endpoint is set (PGlite has no `pg` spans: the embedded database is not `pg`).
  await import("./otel.ts");
  const { devOidcFromEnv, devRateLimitsFromEnv, startDev } = await import("./dev.ts").catch(
    (error: NodeJS.ErrnoException) => {
      // The compiled build (scripts/build.ts, the image) leaves out the console's Vite build step.
      if (error.code === "ERR_MODULE_NOT_FOUND" && /@baton[\\/]console/.test(error.message))
        fail(
          "baton dev runs from a clone of the repository (pnpm baton dev); this build runs baton serve, migrate and the admin commands",
        );
      throw error;
    },
  );
  let oidc: ReturnType<typeof devOidcFromEnv>;
  let rateLimits: ReturnType<typeof devRateLimitsFromEnv>;
  try {
    oidc = devOidcFromEnv(process.env);
    rateLimits = devRateLimitsFromEnv(process.env);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const server = await startDev({
    port,
    dataDir: values["data-dir"],
    clock: values.clock,
    samples: !values["no-samples"],
    ...(values.smtp ? { smtp: values.smtp } : {}),
    oidc,
    rateLimits,
  });
  process.stdout.write(`MCP endpoint: ${server.url}\nConsole: ${server.info.publicUrl}/ui/\n`);
  if (oidc)
    process.stdout.write(
      `Tokens: from ${oidc.issuer} (BATON_AUTH_ISSUER); baton token's are refused${oidc.env.BATON_CONSOLE_CLIENT_ID ? `; the console signs in there as ${oidc.env.BATON_CONSOLE_CLIENT_ID}` : ""}\n`,
    );
  const stop = async (signal: string) => {
    process.stderr.write(`baton: ${signal}, stopping\n`);
    await server.stop();
    process.exit(0);
  };
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
}

async function token(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "data-dir": { type: "string", default: ".baton" },
      org: { type: "string", default: DEFAULT_ORG },
      url: { type: "string" },
      groups: { type: "string", default: "" },
      operator: { type: "boolean", default: false },
      console: { type: "boolean", default: false },
    },
  });
  const [kind, sub] = positionals;
  if ((kind !== "agent" && kind !== "person") || !sub)
    fail("usage: baton token agent <id> | baton token person <email> [--groups g1,g2] [--operator]");
  if (kind === "person" && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(sub))
    fail(`${sub} is not an email address; a person's id is their email`);
  const groups = values.groups
    ? values.groups
        .split(",")
        .map((g) => g.trim())
        .filter(Boolean)
    : [];
  if (values.console && kind !== "person") fail("--console signs a person in to the web console");
  requireDevIssuer(values["data-dir"]);
  const url = mcpUrl(values.url ?? serverUrl(values["data-dir"]));
  const jwt = await devToken(
    values["data-dir"],
    { sub, org: values.org, kind, groups, roles: values.operator ? ["operator"] : [] },
    url,
  );
  // The token rides in the fragment, which a browser never sends to the server; the console clears it.
  process.stdout.write(values.console ? `${consoleLink(url, jwt)}\n` : `${jwt}\n`);
}

async function publish(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      bind: { type: "string", multiple: true, default: [] },
      url: { type: "string" },
      token: { type: "string" },
      "data-dir": { type: "string", default: ".baton" },
      org: { type: "string", default: DEFAULT_ORG },
    },
  });
  const folder = positionals[0];
  if (!folder) fail("usage: baton publish <folder> [--bind role=group]…");
  const bindings: Record<string, string> = {};
  for (const b of values.bind) {
    const i = b.indexOf("=");
    if (i <= 0 || i === b.length - 1) fail(`--bind ${b}: use role=group`);
    bindings[b.slice(0, i)] = b.slice(i + 1);
  }
  const { baseUrl, bearer } = await adminTarget(values);
  const result = await publishFolder(folder, bindings, baseUrl, bearer);
  process.stdout.write(
    `${result.name} ${result.version} ${result.contentHash}${result.unchanged ? " (unchanged)" : ""}\n`,
  );
}

function validate(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: "boolean", default: false } },
  });
  if (positionals.length === 0) fail("usage: baton validate <PROCESS.md or folder>… [--json]");
  const results = validatePaths(positionals);
  process.stdout.write(
    values.json ? `${JSON.stringify(results, null, 2)}\n` : `${formatValidated(results)}\n`,
  );
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}

async function serve(argv: string[]) {
  const service = argv[0];
  // First, before anything loads `pg`: OpenTelemetry when an OTLP endpoint is set (its `pg`
  // instrumentation patches only a `pg` loaded after it; `node --import <cli>/otel.js` does the
  // same earlier). Nothing is loaded when tracing is off.
  await import("./otel.ts");
  // Loaded here: `baton serve` loads the one service it runs, and nothing of `baton dev`.
  const { SERVICES, serve: serveOne } = await import("./serve.ts");
  const name = SERVICES.find((s) => s === service);
  if (!name)
    fail(
      `baton serve ${service ?? ""}: name a service: gateway, registry, engine, evidence, scheduler or notifier`,
    );
  return serveOne(name);
}

/** `baton migrate`: the migrations of `DATABASE_URL`, applied under the services' advisory lock. */
async function migrateCommand(argv: string[]) {
  if (argv.length > 0) fail("usage: baton migrate (DATABASE_URL in the environment)");
  const { formatMigrated, migrate } = await import("./migrate.ts");
  process.stdout.write(`baton migrate: ${formatMigrated(await migrate())}\n`);
}

/** The base URL and operator token of `--url`/`--token`, else the server and dev issuer in `--data-dir`. */
async function adminTarget(values: { url?: string; token?: string; "data-dir": string; org: string }) {
  const url = mcpUrl(values.url ?? serverUrl(values["data-dir"]));
  const given = values.token ?? process.env.BATON_TOKEN;
  if (given === undefined) requireDevIssuer(values["data-dir"]);
  const bearer =
    given ??
    (await devToken(
      values["data-dir"],
      { sub: "operator@baton.local", org: values.org, kind: "person", groups: [], roles: ["operator"] },
      url,
    ));
  return { baseUrl: url.replace(/\/mcp$/, ""), bearer };
}

/** `baton approvals enable|show` (issue #17). */
async function approvals(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tier: { type: "string", multiple: true, default: [] },
      due: { type: "string" },
      url: { type: "string" },
      token: { type: "string" },
      "data-dir": { type: "string", default: ".baton" },
      org: { type: "string", default: DEFAULT_ORG },
    },
  });
  const [sub, arg, ...extra] = positionals;
  if (sub === "show" && arg && extra.length === 0 && values.tier.length === 0) {
    process.stdout.write(approvalProcess(arg, values.due).source);
    return;
  }
  if (sub !== "enable" || arg !== undefined)
    fail(
      "usage: baton approvals enable --tier <tier>=<group> [--tier <tier>=<group>]… [--due 15m] | baton approvals show <tier> [--due 15m]",
    );
  const parsed = parseTiers(values.tier);
  if ("problems" in parsed) fail(parsed.problems.join("\n"));
  // Generated and validated before anything is sent: a bad --due publishes nothing.
  for (const t of parsed.tiers) approvalProcess(t.tier, values.due);
  const { baseUrl, bearer } = await adminTarget(values);
  for (const r of await enableApprovals(parsed.tiers, values.due, baseUrl, bearer))
    process.stdout.write(`${r.name} ${r.version} ${r.contentHash}${r.unchanged ? " (unchanged)" : ""}\n`);
}

/** `baton conformance` (issue #18): exits with the runner's code. */
async function conformance(argv: string[]) {
  // Loaded here: it needs vitest and the scenarios, which only a clone has (the build leaves them out).
  const { conformanceCommand } = await import("./conformance.ts").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ERR_MODULE_NOT_FOUND")
      fail("baton conformance runs from a clone of the repository (pnpm baton conformance …)");
    throw error;
  });
  process.exit(await conformanceCommand(argv));
}

async function evidence(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      "older-than": { type: "string" },
      delete: { type: "boolean", default: false },
      url: { type: "string" },
      token: { type: "string" },
      "data-dir": { type: "string", default: ".baton" },
      org: { type: "string", default: DEFAULT_ORG },
    },
  });
  if (positionals[0] !== "gc" || positionals.length !== 1 || values["older-than"] === undefined)
    fail("usage: baton evidence gc --older-than <duration, e.g. 7d> [--delete]");
  const olderThanMs = advanceDuration(values["older-than"]);
  if (olderThanMs === null) fail(`--older-than ${values["older-than"]}: use a duration like 30m, 12h or 7d`);
  const { baseUrl, bearer } = await adminTarget(values);
  const dryRun = !values.delete;
  const summary = await collectOrphans(baseUrl, bearer, { olderThanMs, dryRun }, (page) => {
    for (const d of page.deleted)
      process.stdout.write(
        `${dryRun ? "would delete" : "deleted"} ${d.key} ${d.bytes} bytes, stored ${d.modifiedAt}\n`,
      );
  });
  process.stdout.write(`${formatGcSummary(summary)}\n`);
}

async function clock(argv: string[]) {
  // parseArgs would read "-1h" as an unknown option and suggest "--"; say what is wrong instead.
  const negative = argv.find((a) => /^-\d/.test(a));
  if (negative) fail(`${negative}: the clock only moves forward; use a duration like 30m, 4h or 3d`);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: "string" },
      token: { type: "string" },
      "data-dir": { type: "string", default: ".baton" },
      org: { type: "string", default: DEFAULT_ORG },
    },
  });
  const [sub, duration] = positionals;
  if (sub === "now" && positionals.length === 1) {
    const { baseUrl, bearer } = await adminTarget(values);
    const state = await clockNow(baseUrl, bearer);
    process.stdout.write(`${state.now}${state.manual ? " manual" : ""}\n`);
    return;
  }
  if (sub !== "advance" || duration === undefined || positionals.length !== 2)
    fail("usage: baton clock advance <duration> (e.g. 30m, 4h, 3d) | baton clock now");
  const ms = advanceDuration(duration);
  if (ms === null) fail(`${duration} is not a duration; use an integer followed by m, h or d (30m, 4h, 3d)`);
  const { baseUrl, bearer } = await adminTarget(values);
  const advanced = await advanceClock(baseUrl, bearer, ms);
  process.stdout.write(`${advanced.now}\n`);
}

const TARGET_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
  "data-dir": { type: "string", default: ".baton" },
  org: { type: "string", default: DEFAULT_ORG },
  json: { type: "boolean", default: false },
} as const;

const print = (json: boolean, value: unknown, text: string) =>
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${text}\n`);

/** `baton webhook add|list|remove|deliveries|redeliver` (issue #11). */
async function webhook(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...TARGET_OPTIONS,
      events: { type: "string" },
      "include-test-runs": { type: "boolean", default: false },
      limit: { type: "string" },
    },
  });
  const [sub, arg, ...extra] = positionals;
  const usage =
    "usage: baton webhook add <target-url> [--events t1,t2] [--include-test-runs] | list | remove <id> | deliveries <id> | redeliver <delivery-id>";
  if (extra.length > 0) fail(usage);
  switch (sub) {
    case "add": {
      if (!arg) fail("usage: baton webhook add <target-url> [--events t1,t2] [--include-test-runs] [--json]");
      const events =
        values.events === undefined
          ? null
          : values.events
              .split(",")
              .map((e) => e.trim())
              .filter(Boolean);
      const made = await addWebhook(await adminTarget(values), arg, events, values["include-test-runs"]);
      return print(values.json, { id: made.id, secret: made.secret }, `${made.id} ${made.secret}`);
    }
    case "list": {
      if (arg) fail(usage);
      const list = await listWebhooks(await adminTarget(values));
      return print(values.json, list, formatWebhooks(list));
    }
    case "remove": {
      if (!arg) fail("usage: baton webhook remove <id>");
      const removed = await removeWebhook(await adminTarget(values), arg);
      return print(values.json, removed, `${arg} removed`);
    }
    case "deliveries": {
      if (!arg) fail("usage: baton webhook deliveries <id> [--limit N]");
      const limit = values.limit === undefined ? undefined : Number(values.limit);
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 500))
        fail("--limit takes a whole number from 1 to 500");
      const list = await webhookDeliveries(await adminTarget(values), arg, limit);
      return print(values.json, list, formatDeliveries(list));
    }
    case "redeliver": {
      if (!arg || !/^\d+$/.test(arg))
        fail("usage: baton webhook redeliver <delivery-id> (a number from baton webhook deliveries)");
      const again = await redeliver(await adminTarget(values), arg);
      return print(values.json, again, `${again.id} ${again.state}`);
    }
    default:
      fail(usage);
  }
}

/** `baton report checks <process>` (issue #14): the check agreement report. */
async function report(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...TARGET_OPTIONS, since: { type: "string" } },
  });
  const [sub, name, ...extra] = positionals;
  if (sub !== "checks" || !name || extra.length > 0)
    fail("usage: baton report checks <process> [--since DATE] [--json]");
  const since = values.since === undefined ? null : sinceInstant(values.since);
  if (values.since !== undefined && since === null)
    fail(`--since ${values.since}: use a date (2026-10-01) or an RFC 3339 time (2026-10-01T09:00:00Z)`);
  const found = await fetchCheckReport(await adminTarget(values), name, since);
  return print(values.json, found, formatCheckReport(found));
}

/** `baton group email <group> <address>` (issue #11). */
async function group(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { ...TARGET_OPTIONS, remove: { type: "boolean", default: false } },
  });
  const [sub, name, address, ...extra] = positionals;
  const usage = "usage: baton group email <group> <address> | baton group email <group> --remove";
  if (sub !== "email" || !name || extra.length > 0 || (address === undefined) !== values.remove) fail(usage);
  const set = await setGroupEmail(await adminTarget(values), name, address ?? null);
  return print(values.json, set, `${set.group} ${set.address ?? "(no mailing address)"}`);
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case "dev":
      return dev(rest);
    case "serve":
      await serve(rest);
      process.exit(0);
      return;
    case "migrate":
      return migrateCommand(rest);
    case "token":
      return token(rest);
    case "publish":
      return publish(rest);
    case "approvals":
      return approvals(rest);
    case "validate":
      return validate(rest);
    case "clock":
      return clock(rest);
    case "webhook":
      return webhook(rest);
    case "group":
      return group(rest);
    case "evidence":
      return evidence(rest);
    case "conformance":
      return conformance(rest);
    case "report":
      return report(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return;
    default:
      fail(`unknown command ${command}\n\n${USAGE}`);
  }
}

main().catch((error: unknown) => {
  fail(error instanceof Error ? error.message : String(error), 1);
});
