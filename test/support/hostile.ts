import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type DevIssuer, mintDevToken, type TokenClaims } from "@baton/auth";
import { schemaProblems } from "@baton/conformance/schemas";
import { silentLogger } from "@baton/kit";
import { TOOL_NAMES, type ToolName, type ToolResult } from "@baton/protocol";
import fc from "fast-check";
import { generateKeyPair, importJWK, SignJWT } from "jose";
import { type DevServer, startDev } from "../../services/cli/src/dev.ts";
import { publishFolder } from "../../services/cli/src/publish.ts";

/**
 * The hostile-input campaign (issue #12): fast-check drives the real gateway of `baton dev` over HTTP
 * with generated tool calls — valid calls mutated, wrong types, huge and deep values, unicode edge
 * cases, forged and swapped bearer and claim tokens, other organizations' ids, replays with changed
 * arguments, malformed frames, foreign origins — and checks after every call:
 *
 * 1. the answer is a valid `{ ok, … }` tool result (validated against the official schemas), a
 *    JSON-RPC error for a malformed frame, or the refusal of the HTTP layer (401 for a bad bearer
 *    token, 403 for a foreign origin); never a 5xx and never a dropped connection; a forged bearer
 *    token is never served;
 * 2. the server still answers `describe`;
 * 3. nothing of the other organization — its ids, names, data — appears in the answer unless a
 *    call of the home organization carried it before (a claim token carries its run id, so its
 *    decoded content counts as carried; an id cited in a refused submission comes back in that
 *    run's `handoff.issues`). A second organization is seeded first, with runs, a file and a
 *    process whose ids and distinctive names (a canary no home call ever sends) the check looks for.
 *
 * `test/e2e/hostile-input.test.ts` runs a CI-sized campaign; `pnpm fuzz --calls 100000` the long one.
 */

/** What a campaign does. */
export interface CampaignOptions {
  /** Generated calls (each followed by a `describe`). */
  calls: number;
  /** fast-check seed: the same seed generates the same plans. */
  seed: number;
  /** Progress lines, e.g. to stdout. */
  progress?: (line: string) => void;
  /** Stop at this many failures (default 20). */
  maxFailures?: number;
}

/** What a campaign found. */
export interface CampaignResult {
  calls: number;
  seed: number;
  durationMs: number;
  /** Answers by kind: `200 ok`, `200 invalid`, `401`, `-32600`, … */
  outcomes: Record<string, number>;
  /** Each failed check: which call, what was sent (cut), what came back (cut), why. */
  failures: string[];
  /** What the other organization was seeded with, and what the callers learned to use, by kind. */
  known: { foreign: Record<string, number>; home: Record<string, number> };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const FOREIGN_ORG = "globex";
const HOME_ORG = "default";

/** A bearer variant: only `valid` may be served. */
const BEARERS = [
  "valid",
  "forged-key",
  "swapped-payload",
  "alg-none",
  "expired",
  "other-audience",
  "garbage",
  "missing",
] as const;
type Bearer = (typeof BEARERS)[number];

const FRAMES = [
  "normal",
  "malformed-json",
  "batch",
  "no-method",
  "params-not-object",
  "unknown-method",
  "notification",
  "odd-id",
  "tools-list",
  "unknown-tool",
] as const;
type Frame = (typeof FRAMES)[number];

type Mutation =
  | { kind: "drop"; at: number }
  | { kind: "extra"; key: string; value: Json }
  | { kind: "retype"; at: number; value: Json }
  | { kind: "huge"; at: number; size: number }
  | { kind: "deep"; at: number; depth: number }
  | { kind: "wide"; at: number; fields: number }
  | { kind: "unicode"; at: number; text: string }
  | { kind: "foreign"; at: number; pick: number }
  | { kind: "replay"; pick: number }
  | { kind: "token"; how: "foreign" | "forged" | "stale" | "truncated"; pick: number };

/** One generated call, resolved against what the campaign knows when it runs. */
interface Plan {
  who: number;
  bearer: Bearer;
  frame: Frame;
  origin: "none" | "same" | "evil";
  tool: ToolName;
  picks: number[];
  mutations: Mutation[];
}

const UNICODE = [
  "\ud800",
  "a\udfffb",
  "\u0000",
  "nul\u0000in",
  "\u202eevil",
  "zero\u200bwidth",
  "\ufeffbom",
  "🧨💥",
  "e\u0301",
  "line\u2028sep",
  "ＦＵＬＬ",
  "\uffff",
  "𝕏𝕐",
  "__proto__",
  "constructor",
  "../../etc/passwd",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "%00%ff",
  "",
  " ",
];

/**
 * A value sent as this JSON text exactly, which JavaScript could not hold or write itself (a number
 * beyond 2^53, a value nested thousands of levels): a marker string the frame's text replaces.
 */
const raw = (text: string): string => `@@raw-${Buffer.from(text).toString("base64url")}@@`;
const unmark = (body: string): string =>
  body.replace(/"@@raw-([A-Za-z0-9_-]*)@@"/g, (_m, b64: string) =>
    Buffer.from(b64, "base64url").toString("utf8"),
  );

const weird = (): fc.Arbitrary<Json> =>
  fc.oneof(
    fc.constantFrom<Json>(
      null,
      true,
      false,
      0,
      -0,
      -1,
      1.5,
      1e308,
      -1e308,
      raw("9007199254740993"),
      raw("0.1000000000000000000001"),
      raw("1e400"),
      raw("-0.0"),
      2 ** 31,
      "",
      [],
      {},
      [null],
      { a: null },
      "NaN",
      "Infinity",
    ),
    fc.constantFrom(...UNICODE),
    fc.string({ unit: "binary", maxLength: 20 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("extra" as const),
      key: fc.oneof(fc.constantFrom("__proto__", "constructor", "org", "identity", "runId"), fc.string()),
      value: weird(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("retype" as const), at: fc.nat(), value: weird() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("huge" as const),
      at: fc.nat(),
      size: fc.constantFrom(1_025, 5_000, 70_000, 300_000, 600_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deep" as const),
      at: fc.nat(),
      depth: fc.constantFrom(63, 65, 200, 600, 5_000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("wide" as const),
      at: fc.nat(),
      fields: fc.constantFrom(4_999, 5_001, 20_000),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("unicode" as const),
      at: fc.nat(),
      text: fc.constantFrom(...UNICODE),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("foreign" as const), at: fc.nat(), pick: fc.nat() }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("replay" as const), pick: fc.nat() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("token" as const),
      how: fc.constantFrom("foreign" as const, "forged" as const, "stale" as const, "truncated" as const),
      pick: fc.nat(),
    }),
  },
);

/** The generated plans: mostly well-authenticated tool calls, valid or mutated a little. */
export const planArbitrary: fc.Arbitrary<Plan> = fc.record({
  who: fc.nat({ max: 5 }),
  bearer: fc.oneof(
    { weight: 24, arbitrary: fc.constant("valid" as const) },
    { weight: 1, arbitrary: fc.constantFrom(...BEARERS) },
  ),
  frame: fc.oneof(
    { weight: 24, arbitrary: fc.constant("normal" as const) },
    { weight: 1, arbitrary: fc.constantFrom(...FRAMES) },
  ),
  origin: fc.oneof(
    { weight: 30, arbitrary: fc.constant("none" as const) },
    { weight: 2, arbitrary: fc.constant("same" as const) },
    { weight: 1, arbitrary: fc.constant("evil" as const) },
  ),
  tool: fc.constantFrom(...TOOL_NAMES),
  picks: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
  mutations: fc.oneof(
    { weight: 2, arbitrary: fc.constant<Mutation[]>([]) },
    { weight: 3, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
  ),
});

/** What the campaign learned of one organization (ids to use in calls, or to look for in answers). */
interface Known {
  runs: string[];
  steps: string[];
  tokens: string[];
  staleTokens: string[];
  workItems: { runId: string; workItemId: string; snapshot: string }[];
  files: string[];
  processes: string[];
  events: string[];
}

const empty = (): Known => ({
  runs: [],
  steps: [],
  tokens: [],
  staleTokens: [],
  workItems: [],
  files: [],
  processes: [],
  events: [],
});

const at = <T>(list: readonly T[], i: number, fallback: T): T =>
  list.length === 0 ? fallback : (list[i % list.length] as T);

/** The foreign organization's process: every name in it is distinctive, so an answer showing it is a leak. */
function foreignProcess(canary: string): string {
  return `---
name: globex-ledger-zq7
description: Globex quarterly ledger reconciliation zq7, confidential to Globex.
inputs:
  ledgerNote: string
steps:
  - id: reconcile_zq7
    agent: Reconcile the Globex ledger zq7 and attach the export ${canary}.
    output:
      balanced: boolean
    evidence: [file]
    next: signoff_zq7
  - id: signoff_zq7
    person: controller_zq7
    approve: Sign off the Globex ledger zq7.
    next: closed_zq7
  - id: closed_zq7
    finish: closed_zq7
---

# Globex ledger zq7

Confidential to Globex: ${canary}.
`;
}

/** Calls a tool once as `token` over plain HTTP; the structured result, or throws. */
async function tool(url: string, token: string, name: ToolName, args: Record<string, unknown>) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const body = (await response.json()) as { result?: { structuredContent?: ToolResult<unknown> } };
  const result = body.result?.structuredContent;
  if (!result) throw new Error(`${name}: ${response.status} ${JSON.stringify(body)}`);
  return result;
}

// biome-ignore lint/suspicious/noExplicitAny: the campaign reads result shapes dynamically
function data(result: ToolResult<unknown>, what: string): any {
  if (!result.ok) throw new Error(`${what}: ${JSON.stringify(result.error)}`);
  return result.data;
}

/** Runs a campaign against a fresh `baton dev` in this process; returns what it found. */
export async function runCampaign(options: CampaignOptions): Promise<CampaignResult> {
  const began = Date.now();
  const dir = mkdtempSync(join(tmpdir(), "baton-hostile-"));
  const progress = options.progress ?? (() => {});
  let dev: DevServer | null = null;
  try {
    dev = await startDev({
      port: 0,
      dataDir: dir,
      clock: "real",
      samples: true,
      log: silentLogger,
      // The limiter runs, but a campaign of one machine's speed never meets it.
      rateLimits: {
        windowSeconds: 60,
        principalWrites: 10_000_000,
        principalReads: 10_000_000,
        organizationWrites: 10_000_000,
        organizationReads: 10_000_000,
      },
    });
    const url = dev.url;
    const base = url.replace(/\/mcp$/, "");
    const issuer = JSON.parse(readFileSync(join(dir, "dev-issuer.json"), "utf8")) as DevIssuer;
    const mint = (claims: TokenClaims, audience = url) => mintDevToken(issuer, claims, audience, 24 * 3600);
    const agent = (sub: string, org = HOME_ORG): TokenClaims => ({
      sub,
      org,
      kind: "agent",
      groups: [],
      roles: [],
    });
    const person = (sub: string, groups: string[], operator = false, org = HOME_ORG): TokenClaims => ({
      sub,
      org,
      kind: "person",
      groups,
      roles: operator ? ["operator"] : [],
    });

    // The foreign organization, seeded first: a process, runs in several states, a file, a claim.
    const canary = `GLOBEX-CANARY-${randomBytes(6).toString("hex")}`;
    const foreign = empty();
    const secrets = new Set<string>([
      FOREIGN_ORG,
      "globex-ledger-zq7",
      "Globex",
      "reconcile_zq7",
      "signoff_zq7",
      "closed_zq7",
      "controller_zq7",
      "globex-controllers",
      "controller@globex.example",
      "a_globex_bot",
      canary,
    ]);
    const folder = join(dir, "foreign", "globex-ledger-zq7");
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "PROCESS.md"), foreignProcess(canary));
    const foreignOps = await mint(person("ops@globex.example", [], true, FOREIGN_ORG));
    await publishFolder(folder, { controller_zq7: "globex-controllers" }, base, foreignOps);
    const bot = await mint(agent("a_globex_bot", FOREIGN_ORG));
    const controller = await mint(
      person("controller@globex.example", ["globex-controllers"], false, FOREIGN_ORG),
    );
    const fileName = `globex-export-${canary}.csv`;
    secrets.add(fileName);
    const file = data(
      await tool(url, bot, "upload", {
        fileName,
        contentType: "text/csv",
        contentBase64: Buffer.from(`ledger,${canary}\n`).toString("base64"),
        requestId: `seed-upload-${canary}`,
      }),
      "seed upload",
    );
    foreign.files.push(file.id);
    secrets.add(file.id);
    for (let i = 0; i < 3; i++) {
      const run = data(
        await tool(url, controller, "start_run", {
          process: "globex-ledger-zq7",
          inputs: { ledgerNote: `${canary} run ${i}` },
          requestId: `seed-run-${i}-${canary}`,
        }),
        "seed start_run",
      );
      const runId = run.run.id as string;
      foreign.runs.push(runId);
      secrets.add(runId);
      if (i === 2) continue; // left ready to claim
      const claim = data(
        await tool(url, bot, "claim", {
          runId,
          stepId: "reconcile_zq7",
          requestId: `seed-claim-${i}-${canary}`,
        }),
        "seed claim",
      );
      foreign.tokens.push(claim.token);
      if (i === 1) continue; // left claimed
      data(
        await tool(url, bot, "submit", {
          token: claim.token,
          output: { balanced: true },
          evidence: [{ kind: "file", ref: file.id }],
          summary: `Balanced ${canary}`,
          requestId: `seed-submit-${i}-${canary}`,
        }),
        "seed submit",
      );
    }
    const inbox = data(await tool(url, controller, "get_work", {}), "seed get_work");
    // Work-item ids count within a run (`w_1`, `w_2`, …): used in calls, not looked for in answers.
    for (const item of inbox.items as { workItem: { decide?: { arguments: Record<string, string> } } }[]) {
      const a = item.workItem.decide?.arguments;
      if (a)
        foreign.workItems.push({
          runId: a.runId ?? "",
          workItemId: a.workItemId ?? "",
          snapshot: a.snapshot ?? "",
        });
    }
    foreign.processes.push("globex-ledger-zq7");
    foreign.steps.push("reconcile_zq7", "signoff_zq7");

    // The home organization: the callers, and what they learn as they go.
    const home = empty();
    home.processes.push("expense-approval", "supplier-onboarding");
    home.steps.push("check_claim", "approve", "return_to_employee", "check_vendor", "decline");
    home.events.push("proof_received", "ready");
    const callers = await Promise.all([
      mint(agent("a_fuzz_one")),
      mint(agent("a_fuzz_two")),
      mint(person("mia@example.com", ["manager"])),
      mint(person("fin@example.com", ["finance-approver"])),
      mint(person("ops@example.com", [], true)),
      mint(person("sam@example.com", [])),
    ]);
    const describer = callers[0] as string;
    const stranger = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const devKey = await importJWK(issuer.privateJwk, "EdDSA");
    const forgedBearer = await new SignJWT({
      org: FOREIGN_ORG,
      kind: "person",
      groups: ["globex-controllers"],
      roles: ["operator"],
    })
      .setProtectedHeader({ alg: "EdDSA", kid: issuer.kid })
      .setSubject("controller@globex.example")
      .setIssuer(issuer.issuer)
      .setAudience(url)
      .setExpirationTime("1h")
      .sign(stranger.privateKey);
    const expired = await new SignJWT({ org: HOME_ORG, kind: "agent" })
      .setProtectedHeader({ alg: "EdDSA", kid: issuer.kid })
      .setSubject("a_fuzz_one")
      .setIssuer(issuer.issuer)
      .setAudience(url)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(devKey);
    const otherAudience = await mint(agent("a_fuzz_one"), "http://127.0.0.1:1/mcp");
    const [fh, fp] = controller.split(".");
    const swapped = `${fh}.${fp}.${describer.split(".")[2] as string}`;
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
    const algNone = `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "x", org: FOREIGN_ORG, kind: "person", aud: url, iss: issuer.issuer, exp: 9e9 })}.`;

    // Seed some home runs so valid calls have something to act on.
    const seedHome = async (i: number) => {
      const run = await tool(url, callers[2] as string, "start_run", {
        process: i % 2 === 0 ? "expense-approval" : "supplier-onboarding",
        inputs:
          i % 2 === 0
            ? { employee: "sam@example.com", amount: 10 + i, receiptUrl: `https://example.com/r/${i}` }
            : { vendorName: `Vendor ${i}`, amount: 1000 + i },
        requestId: `home-seed-${i}`,
      });
      if (run.ok) home.runs.push((run.data as { run: { id: string } }).run.id);
    };
    for (let i = 0; i < 6; i++) await seedHome(i);

    const outcomes: Record<string, number> = {};
    const failures: string[] = [];
    const maxFailures = options.maxFailures ?? 20;
    const previous: { tool: ToolName; args: Record<string, unknown> }[] = [];
    /** The other organization's names and ids some home call has carried (so known to the home organization). */
    const told = new Set<string>();
    let n = 0;
    let requestSeq = 0;
    const fresh = () => `fz-${options.seed}-${++requestSeq}`;
    const cut = (s: string, max = 400) => (s.length > max ? `${s.slice(0, max)}… (${s.length} chars)` : s);

    /** Arguments of a valid-looking call of `name`, from what is known. */
    const validArgs = (name: ToolName, p: number[]): Record<string, unknown> => {
      const [a = 0, b = 0, c = 0] = p;
      const runId = at(home.runs, a, "r_none");
      const item = at(home.workItems, b, { runId, workItemId: "w_none", snapshot: "0".repeat(64) });
      const token = at(home.tokens, c, "bt1.none.none");
      switch (name) {
        case "describe":
          return {};
        case "list_processes":
          return a % 3 === 0 ? { cursor: String(b) } : {};
        case "start_run":
          return a % 2 === 0
            ? {
                process: "expense-approval",
                inputs: {
                  employee: "sam@example.com",
                  amount: b % 1000,
                  receiptUrl: `https://example.com/${c}`,
                },
                mode: c % 2 === 0 ? "test" : "live",
                requestId: fresh(),
              }
            : {
                process: "supplier-onboarding",
                inputs: { vendorName: `V${b}`, amount: c % 5000 },
                requestId: fresh(),
              };
        case "get_run":
          return { runId };
        case "get_work":
          return a % 2 === 0
            ? { limit: (b % 100) + 1 }
            : { process: at(home.processes, b, "expense-approval") };
        case "claim":
          return { runId, stepId: at(home.steps, b, "check_claim"), requestId: fresh() };
        case "renew":
          return { token, progress: "Working.", requestId: fresh() };
        case "upload":
          return {
            fileName: `report-${a}.txt`,
            contentType: "text/plain",
            contentBase64: Buffer.from(`report ${b}`).toString("base64"),
            requestId: fresh(),
          };
        case "submit":
          return {
            token,
            output:
              a % 2 === 0 ? { matches: true, category: "travel" } : { cleared: true, summary: "Clear." },
            evidence:
              b % 2 === 0
                ? [{ kind: "link", ref: "https://example.com/r/1" }]
                : [{ kind: "file", ref: at(home.files, c, "f_none") }],
            summary: "Checked.",
            next: a % 2 === 0 ? "approve" : "approve",
            reason: "Matches.",
            requestId: fresh(),
          };
        case "escalate":
          return { token, note: "Stuck on this one.", requestId: fresh() };
        case "decide":
          return {
            runId: item.runId,
            workItemId: item.workItemId,
            snapshot: item.snapshot,
            decision: (["approved", "rejected", "completed", "returned", "failed"] as const)[a % 5],
            ...(a % 5 === 0 || a % 5 === 2 ? {} : { note: "Because." }),
            requestId: fresh(),
          };
        case "cancel":
          return { runId, reason: "Not needed.", requestId: fresh() };
        case "send_event":
          return { runId, name: at(home.events, b, "ready"), data: { p: c }, requestId: fresh() };
        case "list_runs":
          return a % 2 === 0 ? { state: "active" } : { process: "expense-approval", limit: (b % 100) + 1 };
        default: {
          const unreachable: never = name;
          throw new Error(`unknown tool ${String(unreachable)}`);
        }
      }
    };

    const foreignValue = (pick: number): string =>
      at(
        [
          ...foreign.runs,
          ...foreign.files,
          ...foreign.workItems.map((w) => w.workItemId),
          ...foreign.processes,
          ...foreign.steps,
        ],
        pick,
        "r_none",
      );

    /**
     * A value nested `depth` levels, as JSON text: built and sent as text, since this process's own
     * JSON.stringify would overflow on it as any recursive reader does ({@link raw}).
     */
    const deepText = (depth: number): string => {
      let open = "";
      let close = "";
      for (let i = 0; i < depth; i++) {
        open += i % 2 === 0 ? '{"a":' : "[";
        close = (i % 2 === 0 ? "}" : "]") + close;
      }
      return `${open}1${close}`;
    };

    const mutate = (name: ToolName, args: Record<string, unknown>, m: Mutation): Record<string, unknown> => {
      const keys = Object.keys(args);
      const key = (i: number) => (keys.length === 0 ? "x" : (keys[i % keys.length] as string));
      switch (m.kind) {
        case "drop": {
          const { [key(m.at)]: _dropped, ...rest } = args;
          return rest;
        }
        case "extra":
          return { ...args, [m.key]: m.value };
        case "retype":
          return { ...args, [key(m.at)]: m.value };
        case "huge":
          return { ...args, [key(m.at)]: "x".repeat(m.size) };
        case "deep":
          return { ...args, [key(m.at)]: raw(deepText(m.depth)) };
        case "wide":
          return {
            ...args,
            [key(m.at)]: Object.fromEntries(Array.from({ length: m.fields }, (_, i) => [`f${i}`, i])),
          };
        case "unicode": {
          const k = key(m.at);
          const v = args[k];
          return { ...args, [k]: typeof v === "string" ? `${v}${m.text}` : m.text };
        }
        case "foreign": {
          const idKeys = keys.filter((k) =>
            ["runId", "workItemId", "process", "stepId", "snapshot", "name"].includes(k),
          );
          const k = idKeys.length > 0 ? (idKeys[m.at % idKeys.length] as string) : key(m.at);
          if (name === "submit" || name === "decide") {
            const evidence = [{ kind: "file", ref: at(foreign.files, m.pick, "f_none") }];
            return { ...args, [k]: foreignValue(m.pick), evidence };
          }
          return { ...args, [k]: foreignValue(m.pick) };
        }
        case "replay": {
          const earlier = at(previous, m.pick, null);
          if (!earlier || earlier.tool !== name || typeof earlier.args.requestId !== "string") return args;
          // The same requestId with the arguments changed: never the first call's result.
          return { ...args, requestId: earlier.args.requestId };
        }
        case "token": {
          if (!("token" in args)) return args;
          const token = at(home.tokens, m.pick, "bt1.none.none");
          switch (m.how) {
            case "foreign":
              return { ...args, token: at(foreign.tokens, m.pick, token) };
            case "forged": {
              const body = Buffer.from(`${at(foreign.runs, m.pick, "r_none")}:c_1`).toString("base64url");
              return { ...args, token: `bt1.${body}.${randomBytes(32).toString("base64url")}` };
            }
            case "stale":
              return { ...args, token: at(home.staleTokens, m.pick, token) };
            case "truncated":
              return { ...args, token: token.slice(0, Math.max(0, token.length - 5)) };
          }
        }
      }
      return args;
    };

    /** Text a call carried, including what its claim tokens carry inside. */
    const carried = (text: string): string => {
      let all = text;
      for (const m of text.matchAll(/bt1\.([A-Za-z0-9_-]+)\./g)) {
        all += `\n${Buffer.from(m[1] as string, "base64url").toString("utf8")}`;
      }
      return all;
    };

    const learn = (name: ToolName, args: Record<string, unknown>, result: ToolResult<unknown>) => {
      if (!result.ok) return;
      // biome-ignore lint/suspicious/noExplicitAny: result shapes read dynamically
      const d = result.data as any;
      if (name === "start_run" && d?.run?.id) home.runs.push(d.run.id);
      if (name === "claim" && typeof d?.token === "string") home.tokens.push(d.token);
      if (name === "renew" && typeof d?.token === "string") {
        if (typeof args.token === "string") home.staleTokens.push(args.token);
        home.tokens.push(d.token);
      }
      if (name === "upload" && typeof d?.id === "string") home.files.push(d.id);
      if (name === "get_work" && Array.isArray(d?.items)) {
        for (const item of d.items) {
          const a = item?.workItem?.decide?.arguments;
          if (a?.runId && a?.workItemId && a?.snapshot)
            home.workItems.push({ runId: a.runId, workItemId: a.workItemId, snapshot: a.snapshot });
          if (item?.claim?.arguments?.runId) home.runs.push(item.claim.arguments.runId);
        }
      }
      for (const list of [home.runs, home.tokens, home.workItems, home.files, home.staleTokens]) {
        if (list.length > 200) list.splice(0, list.length - 200);
      }
    };

    const bearerFor = (plan: Plan): string | null => {
      const own = callers[plan.who % callers.length] as string;
      switch (plan.bearer) {
        case "valid":
          return own;
        case "forged-key":
          return forgedBearer;
        case "swapped-payload":
          return swapped;
        case "alg-none":
          return algNone;
        case "expired":
          return expired;
        case "other-audience":
          return otherAudience;
        case "garbage":
          return "not.a.jwt";
        case "missing":
          return null;
      }
    };

    const frameFor = (plan: Plan, args: Record<string, unknown>): string => {
      const call = {
        jsonrpc: "2.0",
        id: plan.picks[5] ?? 1,
        method: "tools/call",
        params: { name: plan.tool, arguments: args },
      };
      switch (plan.frame) {
        case "normal":
          return JSON.stringify(call);
        case "malformed-json":
          return JSON.stringify(call).slice(0, -3);
        case "batch":
          return JSON.stringify([call, call]);
        case "no-method":
          return JSON.stringify({ jsonrpc: "2.0", id: 1, params: call.params });
        case "params-not-object":
          return JSON.stringify({ ...call, params: [plan.tool, args] });
        case "unknown-method":
          return JSON.stringify({ ...call, method: "tasks/cancel" });
        case "notification":
          return JSON.stringify({
            jsonrpc: "2.0",
            method: "notifications/cancelled",
            params: { requestId: "m1" },
          });
        case "odd-id":
          return JSON.stringify({
            ...call,
            id: at<Json>([null, "m1", -1, 1e21, "", { a: 1 }], plan.picks[4] ?? 0, null),
          });
        case "tools-list":
          return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
        case "unknown-tool":
          return JSON.stringify({ ...call, params: { name: `${plan.tool}_x\ud800`, arguments: args } });
      }
    };

    const execute = async (plan: Plan): Promise<void> => {
      n++;
      let args = validArgs(plan.tool, plan.picks);
      for (const m of plan.mutations) args = mutate(plan.tool, args, m);
      const body = unmark(frameFor(plan, args));
      const bearer = bearerFor(plan);
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      };
      if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
      if (plan.origin === "same") headers.origin = base;
      if (plan.origin === "evil") headers.origin = "https://evil.example";
      const fail = (why: string, answer = "") => {
        failures.push(
          `call ${n} (seed ${options.seed}): ${why}\n  plan: ${cut(JSON.stringify({ ...plan, mutations: plan.mutations.map((m) => m.kind) }))}\n  sent: ${cut(body)}\n  got: ${cut(answer)}`,
        );
      };
      let status: number;
      let text: string;
      try {
        const response = await fetch(url, { method: "POST", headers, body });
        status = response.status;
        text = await response.text();
      } catch (error) {
        fail(`the connection failed: ${String(error)}`);
        return;
      }
      if (status >= 500) return fail(`answered ${status}`, text);
      const served = plan.origin !== "evil" && plan.bearer === "valid";
      if (plan.origin === "evil" && status !== 403)
        return fail(`a foreign Origin answered ${status}, not 403`, text);
      if (plan.origin !== "evil" && plan.bearer !== "valid" && status !== 401)
        return fail(`a ${plan.bearer} bearer token answered ${status}, not 401`, text);
      let outcome = String(status);
      if (served) {
        let parsed: {
          result?: { structuredContent?: ToolResult<unknown> };
          error?: { code: number };
        } | null = null;
        if (text !== "") {
          try {
            parsed = JSON.parse(text);
          } catch {
            return fail("the answer is not JSON", text);
          }
        }
        // A string or number id is a well-formed JSON-RPC id (-1, "", "m1"): the call is answered
        // as any other; null, an object or 1e21 (a float) may be refused as a frame.
        const toolAnswer =
          plan.frame === "normal" || (plan.frame === "odd-id" && parsed?.result !== undefined);
        if (toolAnswer) {
          const result = parsed?.result?.structuredContent;
          if (status !== 200 || !result) {
            const code = parsed?.error?.code;
            // An argument value no JSON-RPC reader takes (a body nested past 512 levels) is a frame error.
            if (status === 400 && code === -32600) outcome = "400 -32600";
            else return fail("a tool call was not answered with a tool result", text);
          } else {
            const problems = schemaProblems(plan.tool, result);
            if (problems.length > 0)
              return fail(`the result breaks the official schema: ${problems.join("; ")}`, text);
            outcome = `${status} ${result.ok ? "ok" : result.error.code}`;
            learn(plan.tool, args, result);
          }
        } else if (plan.frame === "notification") {
          if (status !== 202) return fail(`a notification answered ${status}`, text);
        } else if (plan.frame === "tools-list") {
          if (status !== 200) return fail(`tools/list answered ${status}`, text);
        } else if (plan.frame === "unknown-tool") {
          if (!parsed?.error && !parsed?.result) return fail("an unknown tool was not answered", text);
          outcome = `${status} ${parsed?.error ? parsed.error.code : "result"}`;
        } else {
          if (!parsed?.error || typeof parsed.error.code !== "number")
            return fail(`a ${plan.frame} frame was not answered with a JSON-RPC error`, text);
          outcome = `${status} ${parsed.error.code}`;
        }
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      // What a home caller sent is the home organization's to see again: an id of the other
      // organization cited in a submission comes back in its own run's handoff.issues ("evidence
      // f_…: not found"). The canary, the file's name and the process's texts are never sent, so
      // any answer showing the other organization's data still shows one of them.
      const sent = carried(body);
      for (const secret of secrets) if (sent.includes(secret)) told.add(secret);
      for (const secret of secrets) {
        if (text.includes(secret) && !told.has(secret))
          return fail(`the other organization's ${JSON.stringify(secret)} is in the answer`, text);
      }
      if (typeof args.requestId === "string" && served && plan.frame === "normal") {
        previous.push({ tool: plan.tool, args });
        if (previous.length > 500) previous.shift();
      }
      const alive = await tool(url, describer, "describe", {}).catch((error: unknown) => ({
        ok: false,
        error: String(error),
      }));
      if (!alive.ok) fail("describe was not answered after this call", JSON.stringify(alive));
    };

    const every = Math.max(1, Math.floor(options.calls / 20));
    await fc.assert(
      fc.asyncProperty(planArbitrary, async (plan) => {
        if (failures.length >= maxFailures) return;
        await execute(plan);
        if (n % every === 0)
          progress(
            `${n}/${options.calls} calls, ${failures.length} failures, ${Math.round((Date.now() - began) / 1000)} s`,
          );
      }),
      { numRuns: options.calls, seed: options.seed, endOnFailure: true },
    );
    const count = (k: Known) =>
      Object.fromEntries(Object.entries(k).map(([name, list]) => [name, list.length]));
    return {
      calls: n,
      seed: options.seed,
      durationMs: Date.now() - began,
      outcomes,
      failures,
      known: { foreign: count(foreign), home: count(home) },
    };
  } finally {
    await dev?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
