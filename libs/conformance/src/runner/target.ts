import { inject, TestRunner } from "vitest";
import { type IdTranslation, McpSession } from "../mcp.ts";
import { type ConformanceTarget, type Identity, skipTest } from "../support.ts";
import { type TokenIdentity, TokenSlots, type TokensFile } from "./options.ts";

/**
 * The server under test as the runner's check files see it (inside vitest's worker): built from the
 * {@link RunnerConfig} the runner provides, either by a target module the caller names (Baton's CLI
 * names its own, which mints identities, publishes over Baton's admin API and moves Baton's manual
 * clock) or, for any other server, from the tokens file alone.
 */

/** What the runner hands its check files (serializable: it crosses into vitest's worker). */
export interface RunnerConfig {
  /** The MCP endpoint. */
  url: string;
  tokens: TokensFile | null;
  dataDir: string | null;
  clock: "baton" | null;
  /**
   * An absolute path (or file URL) of a module exporting `createTarget(config): Promise<ConformanceTarget>`,
   * loaded in the worker; null: {@link tokensTarget}.
   */
  targetModule: string | null;
  /**
   * The resource identities are minted for (a token's audience), when it differs from `url`: the
   * server's own MCP URL from its protected resource metadata (RFC 9728), e.g. behind a proxy.
   */
  audience: string | null;
}

declare module "vitest" {
  export interface ProvidedContext {
    conformance: RunnerConfig;
  }
}

/** The config the runner provided, in a check file. */
export function runnerConfig(): RunnerConfig {
  return inject("conformance");
}

/** The target of the running conformance run (see the file comment). */
export async function runnerTarget(): Promise<ConformanceTarget> {
  const config = runnerConfig();
  if (config.targetModule) {
    const module = (await import(config.targetModule)) as {
      createTarget(config: RunnerConfig): Promise<ConformanceTarget>;
    };
    return module.createTarget(config);
  }
  return tokensTarget(config);
}

/**
 * Sessions for the identities a check asks for, from the tokens file ({@link TokenSlots}, afresh per
 * check), with the ids translated between the check's names and the server's; a check that needs an
 * identity the file cannot give is skipped with the reason.
 */
export function tokenSessions(tokens: TokensFile): {
  key(who: Identity): string;
  pick(who: Identity): TokenIdentity;
  names: IdTranslation;
} {
  const slots = new TokenSlots(tokens);
  const test = () => TestRunner.getCurrentTest()?.id ?? "setup";
  const pick = (who: Identity): TokenIdentity => {
    const picked = slots.pick(test(), who);
    if ("reason" in picked) skipTest(picked.reason);
    return picked;
  };
  const names: IdTranslation = {
    toServer(value) {
      const mapped = slots.idToServer(test(), value);
      if (typeof mapped !== "string") skipTest(mapped.reason);
      return mapped;
    },
    fromServer: (value) => slots.idFromServer(test(), value),
  };
  return { pick, key: (who) => pick(who).token, names };
}

/**
 * A target with no admin API: MCP sessions from the tokens file, nothing to publish with (the runner
 * checked beforehand that the processes are published), no clock.
 */
export async function tokensTarget(config: RunnerConfig): Promise<ConformanceTarget> {
  if (!config.tokens) throw new Error("a server other than Baton needs --tokens FILE");
  const sessions = tokenSessions(config.tokens);
  return {
    key: sessions.key,
    async session(who) {
      const picked = sessions.pick(who);
      return McpSession.connect(config.url, picked.token, `${who.kind}:${picked.id}`, sessions.names);
    },
    async stop() {},
  };
}
