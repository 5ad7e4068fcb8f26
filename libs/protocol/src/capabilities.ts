import { TOOL_NAMES, type ToolName } from "./tools.ts";

/**
 * What this build of Baton offers (§4.2, §8): the tools listed in `describe.tools` and the MCP tool
 * list, and the profiles in `describe.profiles`. The registry refuses at publication any process that
 * needs something outside these (ARCHITECTURE "A tool Baton does not offer yet"), so the gateway and
 * the registry read the same constants. Every tool of core-2 is offered, the optional ones included.
 */
export const OFFERED_TOOLS: readonly ToolName[] = TOOL_NAMES;

/** Profiles implemented: none yet (`parallel-1` and `check-1` come with their own issues). */
export const OFFERED_PROFILES: readonly string[] = [];

/** Server defaults, published in `describe` (`leaseSeconds`, `maxUploadBytes`, `limits.runDataBytes`). */
export const DEFAULTS = {
  leaseSeconds: 600,
  /** 256 KiB: with the body, every bus message stays well under NATS's 1 MB `max_payload`. */
  runDataBytes: 262_144,
  /** 10 MiB, tools.md upload's default. */
  maxUploadBytes: 10 * 1024 * 1024,
  partitions: 64,
  operatorGroup: "operators",
  /** How long a file `url` stays valid, ms. */
  fileUrlTtlMs: 15 * 60_000,
} as const;
