import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { parseProcess } from "@baton/process";
// vitest/config adds `test` to Vite's config type (the overrides below), in any program that compiles this.
import type { ViteUserConfig } from "vitest/config";
import { createVitest, startVitest } from "vitest/node";
import { corePublications, type Publication, profilePublications } from "../fixtures.ts";
import { McpSession } from "../mcp.ts";
import { EXIT, type RunnerOptions } from "./options.ts";
import {
  ConformanceReporter,
  junitXml,
  namesOf,
  type Report,
  skipReasons,
  specOf,
  summaryLine,
} from "./report.ts";
import type { RunnerConfig } from "./target.ts";

/**
 * `baton conformance` (issue #18, docs/conformance-runner.md): the conformance scenarios run through
 * vitest's Node API against the server at `--url`, after a check that the server can be reached and
 * has what the scenarios need. Returns the exit code ({@link EXIT}); never exits the process.
 */

export { EXIT, parseRunnerArgs, RUNNER_USAGE, tokensTemplate } from "./options.ts";
export type { Report } from "./report.ts";

const LIB = fileURLToPath(new URL("../../", import.meta.url));
/** The runner's check files (relative to the package), and the settings every run of them uses. */
const CHECKS = {
  include: ["src/runner/checks/*.check.ts"],
  fileParallelism: false,
  testTimeout: 180_000,
  hookTimeout: 600_000,
};

/** The Vite config of a run of the checks, `config` handed to them (`inject("conformance")`). */
function checksConfig(config: RunnerConfig): ViteUserConfig {
  return { test: { ...CHECKS, provide: { conformance: config } } };
}

/** A writable that keeps what vitest itself prints, shown only when it could not run. */
function keep(): { sink: Writable; text(): string } {
  let text = "";
  return {
    sink: new Writable({
      write(chunk, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    text: () => text,
  };
}

/** One check the runner would run, without running it: its name, item tags and spec sections. */
export interface ListedCheck {
  name: string;
  group: string;
  title: string;
  tags: string[];
  spec: string;
}

/**
 * Every check of the runner, collected by vitest without running any (`baton conformance --list`):
 * what docs/conformance-matrix.md's items are proven by, here. Throws when collection fails.
 */
export async function listChecks(): Promise<ListedCheck[]> {
  const out = keep();
  const config: RunnerConfig = {
    url: "http://127.0.0.1:1/mcp",
    tokens: null,
    dataDir: null,
    clock: "baton",
    targetModule: null,
    audience: null,
  };
  const vitest = await createVitest(
    "test",
    { root: LIB, config: false, watch: false, reporters: [] },
    checksConfig(config),
    { stdout: out.sink, stderr: out.sink },
  );
  try {
    const { testModules, unhandledErrors } = await vitest.collect();
    const errors = [...unhandledErrors, ...testModules.flatMap((m) => m.errors())];
    if (errors.length > 0)
      throw new Error(`collecting the checks failed: ${JSON.stringify(errors).slice(0, 2000)}`);
    return testModules.flatMap((m) =>
      [...m.children.allTests()].map((t) => {
        const { group, title, tags } = namesOf(t);
        return { name: group ? `${group} › ${title}` : title, group, title, tags, spec: specOf(title) };
      }),
    );
  } finally {
    await vitest.close();
  }
}

/** What the caller adds for a server it knows (Baton's CLI for Baton). */
export interface RunnerHooks {
  /**
   * A module (absolute path) exporting `createTarget(config)`, loaded in vitest's worker: the target
   * that mints identities, publishes and moves the clock. Null: the tokens file alone, no admin API.
   */
  targetModule: string | null;
  /** The operator's bearer token for the checks before the run (the file's `operator` with `--tokens`). */
  operatorToken(): Promise<string>;
  /** Where lines go (stdout); the JSON report goes there too with `--json`. */
  out(text: string): void;
  /** Where problems go (stderr). */
  err(text: string): void;
  /** See {@link RunnerConfig.audience}. */
  audience?: string | null;
}

/** A process of `publications` the server does not list as the scenarios need it, and why. */
export interface Missing {
  name: string;
  folder: string;
  problem: string;
  bindings: Record<string, string>;
}

/** Every page of `list_processes`. */
async function listAll(
  session: McpSession,
): Promise<{ name: string; inputs?: object; requires?: unknown }[]> {
  const items: { name: string; inputs?: object; requires?: unknown }[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const data = await session.ok("list_processes", cursor ? { cursor } : {});
    items.push(...data.items);
    cursor = data.nextCursor ?? null;
    if (!cursor) break;
  }
  return items;
}

/**
 * The publications the server does not list with the name, input names and `requires` of their
 * folder (conformance README, "Fixtures": an operator publishes them before the run).
 */
export async function missingPublications(session: McpSession, wanted: Publication[]): Promise<Missing[]> {
  const listed = new Map((await listAll(session)).map((p) => [p.name, p]));
  const missing: Missing[] = [];
  for (const { folder, bindings = {} } of wanted) {
    const parsed = parseProcess(readFileSync(join(folder, "PROCESS.md"), "utf8"));
    if (!parsed.ok) throw new Error(`${folder} does not parse`);
    const { name, inputs, requires } = parsed.process;
    const item = listed.get(name);
    let problem = "";
    if (!item) problem = "not listed by list_processes";
    else {
      const want = Object.keys(inputs).sort().join(", ");
      const got = Object.keys(item.inputs ?? {})
        .sort()
        .join(", ");
      if (want !== got) problem = `listed with inputs (${got}), the fixture declares (${want})`;
      else if (JSON.stringify(requires ?? null) !== JSON.stringify(item.requires ?? null))
        problem = `listed with requires ${JSON.stringify(item.requires ?? null)}, the fixture declares ${JSON.stringify(requires ?? null)}`;
    }
    if (problem) missing.push({ name, folder, problem, bindings });
  }
  return missing;
}

/** Runs the conformance checks as `options` says; returns the exit code. */
export async function runConformance(options: RunnerOptions, hooks: RunnerHooks): Promise<number> {
  // Before the run: the server answers MCP, and has (or can be given) what the scenarios need.
  let session: McpSession;
  let profiles: string[];
  try {
    session = await McpSession.connect(options.url, await hooks.operatorToken(), "runner");
  } catch (error) {
    hooks.err(`cannot reach an MCP server at ${options.url}: ${(error as Error).message}\n`);
    return EXIT.cannotRun;
  }
  try {
    const describe = await session.ok("describe");
    profiles = Array.isArray(describe.profiles) ? describe.profiles : [];
    if (!hooks.targetModule) {
      if (options.clock === "baton") {
        hooks.err(
          "--clock baton moves Baton's manual clock: this server does not say it is Baton (serverInfo.name)\n",
        );
        return EXIT.cannotRun;
      }
      const missing = await missingPublications(session, [
        ...corePublications(),
        ...profilePublications(profiles),
      ]);
      if (missing.length > 0) {
        hooks.err(
          `the server lacks ${missing.length} of the processes the scenarios run on; publish each folder as an operator, every role bound to the group of the same name (conformance README, "Fixtures"):\n`,
        );
        for (const m of missing) {
          const binds = Object.entries(m.bindings)
            .map(([role, group]) => `${role} → ${group}`)
            .join(", ");
          hooks.err(`  ${m.name}: ${m.problem}\n    folder ${m.folder}\n    roles ${binds || "(none)"}\n`);
        }
        return EXIT.cannotRun;
      }
    }
  } catch (error) {
    hooks.err(
      `the server at ${options.url} did not answer as the checks before the run need: ${(error as Error).message}\n`,
    );
    return EXIT.cannotRun;
  } finally {
    await session.close().catch(() => {});
  }

  const config: RunnerConfig = {
    url: options.url,
    tokens: options.tokens,
    dataDir: options.dataDir,
    clock: options.clock,
    targetModule: hooks.targetModule,
    audience: hooks.audience ?? null,
  };
  const reporter = new ConformanceReporter(options.url, hooks.out, options.json);
  const vitestOutput = keep();
  let report: Report;
  try {
    const vitest = await startVitest(
      "test",
      [],
      {
        root: LIB,
        config: false,
        watch: false,
        reporters: [reporter],
        ...(options.only ? { testNamePattern: options.only } : {}),
        passWithNoTests: true,
      },
      // Files run one at a time (the timed checks rebind processes; each file publishes what it needs first).
      checksConfig(config),
      { stdout: vitestOutput.sink, stderr: vitestOutput.sink },
    );
    await vitest.close();
    report = reporter.report();
  } catch (error) {
    hooks.err(`could not run the checks: ${(error as Error).message}\n${vitestOutput.text().slice(-4000)}`);
    return EXIT.cannotRun;
  }
  if (options.json) hooks.out(`${JSON.stringify(report, null, 2)}\n`);
  else {
    for (const [reason, n] of skipReasons(report)) hooks.out(`skipped ${n}: ${reason}\n`);
    for (const e of report.errors) hooks.out(`error outside a check: ${e}\n`);
    hooks.out(`${summaryLine(report)}\n`);
  }
  if (options.junit) writeFileSync(options.junit, junitXml(report));
  if (report.errors.length > 0 && report.summary.failed === 0) return EXIT.cannotRun;
  if (report.summary.total === 0) {
    hooks.err(`no check matched${options.only ? ` --only ${options.only}` : ""}\n`);
    return EXIT.cannotRun;
  }
  return report.summary.failed > 0 ? EXIT.failed : EXIT.passed;
}
