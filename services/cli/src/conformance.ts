import { fileURLToPath } from "node:url";
import { McpSession } from "@baton/conformance/mcp";
import {
  EXIT,
  listChecks,
  parseRunnerArgs,
  RUNNER_USAGE,
  runConformance,
  tokensTemplate,
} from "@baton/conformance/runner/index";
import { DEFAULT_ORG, devToken, mcpUrl, requireDevIssuer } from "./token.ts";

/** The module the runner loads in its worker to make Baton the target (`createTarget`). */
const TARGET_MODULE = fileURLToPath(new URL("./conformance-target.ts", import.meta.url));

/**
 * `baton conformance …` (issue #18, docs/conformance-runner.md): parses the arguments, decides whether
 * the server is Baton (`--data-dir`, or `serverInfo.name` `baton` in the MCP handshake) so the
 * runner may publish and move the clock through Baton's admin API, and runs the checks. Returns the
 * exit code: 0 every check passed, 1 a check failed, 2 could not run.
 */
export async function conformanceCommand(
  argv: string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
  err: (text: string) => void = (t) => process.stderr.write(t),
): Promise<number> {
  const parsed = parseRunnerArgs(argv);
  if (parsed.kind === "help") {
    out(`${RUNNER_USAGE}\n`);
    return EXIT.passed;
  }
  if (parsed.kind === "template") {
    out(`${JSON.stringify(tokensTemplate(), null, 2)}\n`);
    return EXIT.passed;
  }
  if (parsed.kind === "list") {
    const checks = await listChecks();
    out(
      parsed.json
        ? `${JSON.stringify(checks, null, 2)}\n`
        : `${checks.map((c) => `${c.name}${c.spec ? `  [${c.spec}]` : ""}`).join("\n")}\n${checks.length} checks\n`,
    );
    return EXIT.passed;
  }
  if (parsed.kind === "error") {
    err(`baton conformance: ${parsed.message}\n`);
    return EXIT.cannotRun;
  }
  const options = { ...parsed.options, url: mcpUrl(parsed.options.url) };
  const { dataDir, tokens } = options;
  if (dataDir) {
    try {
      requireDevIssuer(dataDir);
    } catch (error) {
      err(`baton conformance: ${(error as Error).message}\n`);
      return EXIT.cannotRun;
    }
  }
  const operatorToken = async () =>
    dataDir
      ? devToken(
          dataDir,
          {
            sub: "conformance-operator@example.com",
            org: DEFAULT_ORG,
            kind: "person",
            groups: [],
            roles: ["operator"],
          },
          options.url,
        )
      : (tokens?.operator.token as string);
  let baton = dataDir !== null;
  if (!baton) {
    // Whether the server is Baton, from its MCP handshake; an unreachable server is reported by the run.
    try {
      const session = await McpSession.connect(options.url, await operatorToken(), "runner");
      baton = session.serverName() === "baton";
      await session.close();
    } catch {}
  }
  return runConformance(options, { targetModule: baton ? TARGET_MODULE : null, operatorToken, out, err });
}
