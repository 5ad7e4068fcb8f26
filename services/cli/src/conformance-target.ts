import { McpSession } from "@baton/conformance/mcp";
import { type RunnerConfig, tokenSessions } from "@baton/conformance/runner/target";
import type { ConformanceTarget, Identity } from "@baton/conformance/support";
import { advanceClock, clockNow } from "./clock.ts";
import { publishFolder } from "./publish.ts";
import { DEFAULT_ORG, devToken, mcpUrl } from "./token.ts";

/**
 * Baton as the server under test of `baton conformance` (issue #18), loaded by the runner in vitest's
 * worker: identities minted by the dev issuer in `--data-dir` (any identity a scenario asks for) or
 * taken from `--tokens`; processes published over the admin API as an operator, as `baton publish`
 * does; with `--clock baton`, the manual clock moved as `baton clock advance` does.
 */

/** The claims of a dev token for a scenario's identity. */
function claims(who: Identity) {
  const org = who.org ?? DEFAULT_ORG;
  return who.kind === "agent"
    ? { sub: who.id, org, kind: "agent" as const, groups: [], roles: [] }
    : {
        sub: who.id,
        org,
        kind: "person" as const,
        groups: who.groups ?? [],
        roles: who.operator ? ["operator"] : [],
      };
}

/** The target for `config` (see the file comment). */
export async function createTarget(config: RunnerConfig): Promise<ConformanceTarget> {
  const url = mcpUrl(config.url);
  const base = url.replace(/\/mcp$/, "");
  const audience = config.audience ?? url;
  const { dataDir, tokens } = config;
  let session: (who: Identity) => Promise<McpSession>;
  let operator: (org: string) => Promise<string>;
  let key: ((who: Identity) => string) | undefined;
  let publishRefusal: ((org: string) => string | null) | undefined;
  if (dataDir) {
    session = async (who) =>
      McpSession.connect(url, await devToken(dataDir, claims(who), audience), `${who.kind}:${who.id}`);
    operator = (org) =>
      devToken(
        dataDir,
        claims({ kind: "person", id: "conformance-operator@example.com", operator: true, org }),
        audience,
      );
  } else if (tokens) {
    const sessions = tokenSessions(tokens);
    key = sessions.key;
    session = (who) => {
      const picked = sessions.pick(who);
      return McpSession.connect(url, picked.token, `${who.kind}:${picked.id}`, sessions.names);
    };
    operator = async () => tokens.operator.token;
    publishRefusal = (org) =>
      org === DEFAULT_ORG
        ? null
        : "publishes into an organization of its own, whose people the tokens file cannot name (--data-dir mints them)";
  } else throw new Error("baton conformance needs --tokens or --data-dir");
  const clockToken = config.clock === "baton" ? await operator(DEFAULT_ORG) : null;
  return {
    ...(key ? { key } : {}),
    ...(publishRefusal ? { publishRefusal } : {}),
    session,
    async publish(folder, bindings = {}, org = DEFAULT_ORG) {
      return publishFolder(folder, bindings, base, await operator(org));
    },
    ...(clockToken
      ? {
          clock: {
            async now() {
              return Date.parse((await clockNow(base, clockToken)).now);
            },
            async advance(ms: number) {
              return Date.parse((await advanceClock(base, clockToken, ms, 120_000)).now);
            },
          },
        }
      : {}),
    async stop() {},
  };
}
