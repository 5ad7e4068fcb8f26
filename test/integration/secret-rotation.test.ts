import type { ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { runIdFor } from "@baton/auth";
import type { Result } from "@baton/conformance/mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DistributedDeployment, REPO, startDistributed } from "../support/deploy.ts";

/**
 * Issue #12: rotating `BATON_SECRET` without breaking what agents hold. The engine and the gateway
 * are replaced one at a time (a rolling restart) with a new secret, the gateway keeping the old one
 * in `BATON_SECRET_PREVIOUS`. Afterwards a claim token minted under the old secret still submits
 * (its run is routed by the run id it carries, ARCHITECTURE rule 5), a replayed `claim` returns that
 * same token and a replayed `start_run` its original run (§4 idempotency: the record is kept per
 * organization and `requestId`, whatever id the new secret derives), and new runs get ids and tokens
 * of the new secret. docs/security.md gives the procedure this follows.
 */

const OLD = randomBytes(32).toString("hex");
const NEW = randomBytes(32).toString("hex");

/** `data` of a result that must be `ok`. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response shapes dynamically
function data(result: Result): any {
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.data;
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

describe("rotating the server secret (issue #12)", () => {
  let baton: DistributedDeployment;

  beforeAll(async () => {
    baton = await startDistributed({ env: { BATON_SECRET: OLD } });
    await baton.publish(join(REPO, "bench/processes/bench-step"));
  }, 240_000);
  afterAll(async () => {
    await baton?.stop();
  });

  it("tokens and runs from before the rotation keep working; new ones use the new secret", async () => {
    const agent = await baton.session({ kind: "agent", id: "a_rotation" });
    const start = { process: "bench-step", inputs: { n: 1 }, requestId: `start-${randomUUID()}` };
    const before = await agent.call("start_run", start);
    expect(before.ok).toBe(true);
    const runId = data(before).run.id as string;
    expect(runId).toBe(runIdFor(OLD, "default", start.requestId));
    const claimArgs = { runId, stepId: "work", requestId: `claim-${randomUUID()}` };
    const claimed = await agent.call("claim", claimArgs);
    expect(claimed.ok).toBe(true);
    const token = data(claimed).token as string;
    await agent.close();

    // Rolling restart: a new engine with the new secret takes the partitions over, then the old one
    // stops; then the gateway is replaced, keeping the old secret as a previous one.
    const [oldEngine] = baton.running("engine");
    baton.serve("engine", { BATON_SECRET: NEW, BATON_REPLICA_ID: "engine-rotated" });
    await exited(oldEngine as ChildProcess);
    const [oldGateway] = baton.running("gateway");
    await exited(oldGateway as ChildProcess);
    baton.serve("gateway", { BATON_SECRET: NEW, BATON_SECRET_PREVIOUS: OLD });

    // The new gateway is up when it answers (the MCP client retries `retry` for up to 60 s).
    const deadline = Date.now() + 60_000;
    let after = await baton.session({ kind: "agent", id: "a_rotation" }).catch(() => null);
    while (after === null) {
      if (Date.now() > deadline) throw new Error(`the gateway did not come back:\n${baton.logs()}`);
      await new Promise((r) => setTimeout(r, 250));
      after = await baton.session({ kind: "agent", id: "a_rotation" }).catch(() => null);
    }

    // Replays answer what the first calls did.
    const replayedStart = await after.call("start_run", start);
    expect(replayedStart.ok).toBe(true);
    expect(data(replayedStart).run.id).toBe(runId);
    const replayedClaim = await after.call("claim", claimArgs);
    expect(replayedClaim.ok).toBe(true);
    expect(data(replayedClaim).token).toBe(token);

    // The token from before the rotation still submits.
    const submitted = await after.call("submit", {
      token,
      output: { n: 1 },
      summary: "Done before and after the rotation.",
      requestId: `submit-${randomUUID()}`,
    });
    expect(submitted.ok, JSON.stringify(submitted)).toBe(true);
    expect(data(submitted).run.state).toBe("ended");

    // A new run: its id and its claim token are of the new secret.
    const fresh = { process: "bench-step", inputs: { n: 2 }, requestId: `start-${randomUUID()}` };
    const next = await after.call("start_run", fresh);
    expect(next.ok).toBe(true);
    expect(data(next).run.id).toBe(runIdFor(NEW, "default", fresh.requestId));
    const nextClaim = await after.call("claim", {
      runId: data(next).run.id,
      stepId: "work",
      requestId: `claim-${randomUUID()}`,
    });
    expect(nextClaim.ok).toBe(true);
    const done = await after.call("submit", {
      token: data(nextClaim).token,
      output: { n: 2 },
      summary: "Done under the new secret.",
      requestId: `submit-${randomUUID()}`,
    });
    expect(done.ok, JSON.stringify(done)).toBe(true);
    await after.close();
  });
});
