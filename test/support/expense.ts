// The quickstart's expense run brought to its approval, for tests that decide it (console, OIDC console).
import type { McpSession } from "@baton/conformance/mcp";

/**
 * Starts an `expense-approval` test run as `starter` (84.50, travel) and has `agent` claim and submit
 * its `check_claim` step with a link as evidence, routing to `approve`: the run then waits on the
 * manager group's approval. Returns the run id. Throws when a call is refused.
 */
export async function expenseAtApproval(starter: McpSession, agent: McpSession): Promise<string> {
  const started = await starter.ok("start_run", {
    process: "expense-approval",
    mode: "test",
    inputs: { employee: "sam@example.com", amount: 84.5, receiptUrl: "https://example.com/r/1" },
  });
  const runId = started.run.id as string;
  const claim = await agent.ok("claim", { runId, stepId: "check_claim" });
  await agent.ok("submit", {
    token: claim.token,
    output: { matches: true, category: "travel" },
    evidence: [{ kind: "link", ref: "https://example.com/r/1" }],
    summary: "The receipt matches the claim.",
    next: "approve",
    reason: "Matches the policy.",
  });
  return runId;
}
