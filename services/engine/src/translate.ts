// Translation between bus messages and the core: a write becomes a Command, an Outcome becomes the tool's result.
import type { ClaimTokens } from "@baton/auth";
import type { EngineWrite } from "@baton/bus";
import { type Command, claimResult, type Outcome, type PublishedProcess, runView } from "@baton/engine";
import { iso } from "@baton/process";
import { ok, type ToolResult } from "@baton/protocol";

/** A write to an existing run: every {@link EngineWrite} but `start_run` and `tick`. */
export type RunWrite = Exclude<EngineWrite, { tool: "start_run" | "tick" }>;

/**
 * The core's command for a write (tools.md arguments → `@baton/engine` {@link Command}): the token
 * tools carry the claim id their token verified to, and `requestId` (the shell's, for idempotency)
 * is left out.
 */
export function toCommand(write: RunWrite): Command {
  switch (write.tool) {
    case "claim":
      return { type: "claim", stepId: write.args.stepId };
    case "renew":
      return {
        type: "renew",
        claimId: write.claimId,
        ...(write.args.progress !== undefined ? { progress: write.args.progress } : {}),
      };
    case "submit": {
      const { token: _t, requestId: _r, ...rest } = write.args;
      return { type: "submit", claimId: write.claimId, ...rest };
    }
    case "escalate":
      return { type: "escalate", claimId: write.claimId, note: write.args.note };
    case "decide": {
      const { runId: _run, requestId: _r, ...rest } = write.args;
      return { type: "decide", ...rest };
    }
    case "cancel":
      return { type: "cancel", reason: write.args.reason };
    case "send_event":
      return {
        type: "send_event",
        name: write.args.name,
        ...(write.args.data !== undefined ? { data: write.args.data } : {}),
      };
    default: {
      const unreachable: never = write;
      throw new Error(`unknown tool ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The tool's result for a successful outcome at `now` (epoch ms): the run view, a claim with its
 * token, a renewed token, or what `send_event` consumed. Tokens are minted here from the claim id
 * (ARCHITECTURE "Claim tokens"). Throws when the outcome carries no value.
 */
export function resultOf(
  outcome: Outcome,
  at: { def: PublishedProcess; now: number; tokens: ClaimTokens },
): ToolResult<unknown> {
  const { run, value } = outcome;
  if (!value) throw new Error("no value on success");
  switch (value.kind) {
    case "view":
      return ok(runView(run, at.def, at.now));
    case "claim":
      return ok(claimResult(run, at.def, value, at.tokens.mint(run.id, value.claimId)));
    case "renew":
      return ok({ token: at.tokens.mint(run.id, value.claimId), expiresAt: iso(value.expiresAt) });
    case "send_event":
      return ok({ consumedBy: value.consumedBy });
    case "none":
      return ok(null);
    default: {
      const unreachable: never = value;
      throw new Error(`unknown value ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The timers a transition applied, for its journal entry (issue #5: "the journal shows one
 * transition per timer"): every fired timer appears in exactly one entry, with its own time.
 */
export function firedTimers(outcome: Outcome): { kind: string; stepId: string; at: string }[] {
  return outcome.fired.map((t) => ({ kind: t.kind, stepId: t.stepId, at: iso(t.at) }));
}
