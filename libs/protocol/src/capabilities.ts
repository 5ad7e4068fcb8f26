import { TOOL_NAMES, type ToolName } from "./tools.ts";

/**
 * What this build of Baton offers (§4.2, §8): the tools listed in `describe.tools` and the MCP tool
 * list, and the profiles in `describe.profiles`. The registry refuses at publication any process that
 * needs something outside these (ARCHITECTURE "A tool Baton does not offer yet"), so the gateway and
 * the registry read the same constants. Every tool of core-2 is offered, the optional ones included.
 */
export const OFFERED_TOOLS: readonly ToolName[] = TOOL_NAMES;

/** The profiles Baton implements (§8; profiles/parallel.md, profiles/check.md), by their `describe` names. */
export const PROFILES = { parallel: "parallel-1", check: "check-1" } as const;

/**
 * The profiles offered in `describe.profiles` and at publication (§8): `parallel-1` always, and
 * `check-1` only while an evaluator is configured (check.md preamble: "lists it only while an
 * evaluator is configured"; `BATON_CHECK_URL` and `BATON_CHECK_MODEL`). The gateway (`describe`) and
 * the registry (publication) both call this with their own reading of the same environment.
 */
export function offeredProfiles(evaluator: boolean): string[] {
  return evaluator ? [PROFILES.parallel, PROFILES.check] : [PROFILES.parallel];
}

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
  /** check.md §5 `limits.checkPass`: the yes-probability at or above which a yes/no answer passes. */
  checkPass: 0.9,
  /** check.md §5 `limits.checkFail`: below it a yes/no answer fails; none by default (below `pass` fails). */
  checkFail: null,
  /** check.md §5 `limits.checkConfidence`: below it a choice or rubric answer is unsure. */
  checkConfidence: 0.8,
  /** check.md §5 `limits.checkStateBytes`: how much run data the evaluator is shown, 64 KiB. */
  checkStateBytes: 65_536,
} as const;
