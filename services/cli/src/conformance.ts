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
 * The MCP resource the server at `url` says it is (RFC 9728 protected resource metadata,
 * `/.well-known/oauth-protected-resource/mcp`), the audience of the tokens it accepts; null when it
 * does not say. Differs from `url` behind a proxy.
 */
export async function protectedResource(url: string): Promise<string | null> {
  try {
    const u = new URL(url);
    const answer = await fetch(`${u.origin}/.well-known/oauth-protected-resource${u.pathname}`, {
      signal: AbortSignal.timeout(10_000),
    });
    if (!answer.ok) return null;
    const resource = ((await answer.json()) as { resource?: unknown }).resource;
    return typeof resource === "string" ? resource : null;
  } catch {
    return null;
  }
}

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
  // Minted tokens are for the resource the server says it is, which behind a proxy is not --url.
  const audience = dataDir ? ((await protectedResource(options.url)) ?? options.url) : null;
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
          audience ?? options.url,
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
  return runConformance(options, {
    targetModule: baton ? TARGET_MODULE : null,
    operatorToken,
    out,
    err,
    audience: audience !== options.url ? audience : null,
  });
}
