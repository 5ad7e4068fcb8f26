import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { McpSession, Result } from "@baton/conformance/mcp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type As,
  DEPLOYMENTS,
  type Deployment,
  type DistributedDeployment,
  REPO,
} from "../support/deploy.ts";

/**
 * Issue 8, part 1: "anything a client sends that refers to a request must be resolved within that
 * client's own HTTP request, never in a space shared with other callers". The gateway serves every
 * HTTP request through one shared MCP server; a `notifications/cancelled` (or a progress notification)
 * naming the id under which the shared server knows another caller's call once cancelled that call:
 * its write was applied, its answer dropped and its HTTP request hung.
 *
 * Here, while a caller's calls are in flight, an agent of another organization, another principal of
 * the same organization and the caller itself (from other HTTP requests) post cancellations and
 * progress notifications naming every plausible id (the gateway's `m1`, `m2`, … and raw client ids,
 * as numbers and as strings), and every call still answers, and answers correctly. On the services over NATS the calls are held on the bus while the
 * notifications arrive (the services that answer them are paused), so every one is in flight for the
 * whole sweep; in `baton dev` the calls are multi-MB uploads and bus calls, repeated in rounds while
 * the sweep runs.
 */
describe.each(DEPLOYMENTS)(
  "a cancellation never reaches another caller's call (issue 8) — %s",
  (label, start) => {
    let baton: Deployment;
    let victim: McpSession;
    /** MCP requests this file has sent so far: the gateway cannot have numbered more of ours. */
    let sent = 0;
    const attackers: { label: string; as: As; token: string }[] = [];

    beforeAll(async () => {
      baton = await start();
      await baton.publish(join(REPO, "test/e2e/processes/any-object"));
      victim = await baton.session({ kind: "agent", id: "a_victim" });
      sent += 1;
      for (const [label, as] of [
        ["an agent of another organization", { kind: "agent", id: "a_intruder", org: "other" }],
        ["another principal of the same organization", { kind: "person", id: "neighbour@example.com" }],
        // The caller itself, from another HTTP request: on a stateless gateway its own cancellation
        // reaches no call either (docs/decisions.md, cancellation).
        ["the caller itself", { kind: "agent", id: "a_victim" }],
      ] as const) {
        attackers.push({ label, as, token: await baton.token(as) });
      }
    });
    afterAll(async () => {
      await victim?.close();
      await baton?.stop();
    });

    /**
     * Ids the shared server could know a call by: `m0…mN` and raw JSON-RPC ids `0…N`, as numbers and
     * as strings. N covers every request this file has sent or is about to send, and what start-up
     * sent: nothing in `baton dev`, the readiness probe's few dozen in the distributed deployment.
     */
    const plausibleIds = (upcoming: number): (string | number)[] => {
      const n = sent + upcoming + (baton.kind === "distributed" ? 200 : 20);
      const ids: (string | number)[] = [];
      for (let i = 0; i <= n; i++) ids.push(`m${i}`, i, String(i));
      return ids;
    };

    /**
     * Posts, as `token`, a cancellation and a progress notification naming each id, 16 at a time, and
     * goes round again until `done()` says stop (one pass at least). Every one must be accepted (MCP
     * Streamable HTTP: 202, no body).
     */
    async function sweep(token: string, ids: (string | number)[], done = () => true): Promise<void> {
      const notifications = ids.flatMap((id) => [
        { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "not yours" } },
        { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: id, progress: 1 } },
      ]);
      const statuses = new Map<number, number>();
      let next = 0;
      let posted = 0;
      const worker = async () => {
        while (next < notifications.length || !done()) {
          const body = JSON.stringify(notifications[next++ % notifications.length]);
          const response = await fetch(baton.url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              accept: "application/json, text/event-stream",
              "content-type": "application/json",
            },
            body,
          });
          await response.arrayBuffer();
          posted++;
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(Object.fromEntries(statuses)).toEqual({ 202: posted });
    }

    const CALLS_PER_ROUND = 7;
    /**
     * One round of {@link CALLS_PER_ROUND} calls from the victim (three 3 MB uploads, a `start_run`,
     * three reads), each checked against what it must answer.
     */
    function round(tag: string): Promise<string>[] {
      const calls: Promise<string>[] = [];
      const expectOk = async (what: string, call: Promise<Result>, check: (data: never) => void) => {
        const result = await call;
        if (!result.ok) throw new Error(`${what}: ${JSON.stringify(result.error)}`);
        check(result.data as never);
        return what;
      };
      for (let i = 0; i < 3; i++) {
        const bytes = randomBytes(3 * 1024 * 1024);
        const sha256 = createHash("sha256").update(bytes).digest("hex");
        calls.push(
          expectOk(
            `upload ${tag}.${i}`,
            victim.write("upload", {
              fileName: `evidence-${tag}-${i}.bin`,
              contentType: "application/octet-stream",
              contentBase64: bytes.toString("base64"),
            }),
            (data: { sha256: string; bytes: number }) => {
              expect(data).toMatchObject({ sha256, bytes: bytes.length });
            },
          ),
        );
      }
      calls.push(
        expectOk(
          `start_run ${tag}`,
          victim.write("start_run", { process: "any-object", inputs: { blob: { tag } } }),
          (data: { run: { id: string; state: string } }) => {
            expect(data.run.state).toBe("active");
          },
        ),
        expectOk(`get_work ${tag}`, victim.call("get_work", {}), (data: { items: unknown[] }) => {
          expect(Array.isArray(data.items)).toBe(true);
        }),
        expectOk(
          `list_processes ${tag}`,
          victim.call("list_processes", {}),
          (data: { items: { name: string }[] }) => {
            expect(data.items.map((p) => p.name)).toContain("any-object");
          },
        ),
        expectOk(`describe ${tag}`, victim.call("describe", {}), (data: { version: string }) => {
          expect(data.version).toBe("core-2");
        }),
      );
      expect(calls).toHaveLength(CALLS_PER_ROUND);
      sent += calls.length;
      return calls;
    }

    /** Every call answered (a hung one fails at the client's 60 s request deadline) and correctly. */
    async function answered(calls: Promise<string>[]): Promise<void> {
      const outcomes = await Promise.allSettled(calls);
      const failed = outcomes.flatMap((o) => (o.status === "rejected" ? [String(o.reason)] : []));
      expect(failed, "calls that did not answer, or answered wrongly").toEqual([]);
      expect(outcomes).toHaveLength(calls.length);
    }

    it("calls in flight answer whatever other callers cancel or report progress on (issue 8 part 1)", {
      timeout: 300_000,
    }, async () => {
      if (baton.kind === "distributed") {
        // Every call but `describe` waits on the bus while the services that answer it are paused, so
        // all of them are in flight for the whole sweep.
        const services = baton as DistributedDeployment;
        const paused: ChildProcess[] = ["engine", "registry", "evidence"].flatMap((s) => services.running(s));
        expect(paused.length).toBeGreaterThanOrEqual(3);
        let calls: Promise<string>[] = [];
        try {
          for (const child of paused) child.kill("SIGSTOP");
          const ids = plausibleIds(CALLS_PER_ROUND);
          calls = round("held");
          // Let the calls reach the gateway (where they wait on the bus) before the sweep starts.
          await new Promise((r) => setTimeout(r, 1000));
          await Promise.all(attackers.map((a) => sweep(a.token, ids)));
        } finally {
          for (const child of paused) child.kill("SIGCONT");
        }
        await answered(calls);
      } else {
        // In one process nothing can be held: the sweep goes round while rounds of calls are in flight.
        const rounds = 3;
        const ids = plausibleIds(rounds * CALLS_PER_ROUND);
        const calls: Promise<string>[] = [];
        let done = false;
        const attack = Promise.all(attackers.map((a) => sweep(a.token, ids, () => done)));
        for (let r = 0; r < rounds; r++) {
          const round_ = round(`r${r}`);
          calls.push(...round_);
          await Promise.allSettled(round_);
        }
        done = true;
        await attack;
        await answered(calls);
      }
      // The victim's session still serves, and so does everyone else's.
      expect((await victim.call("describe", {})).ok).toBe(true);
      for (const attacker of attackers) {
        const session = await baton.session(attacker.as);
        expect((await session.call("describe", {})).ok).toBe(true);
        await session.close();
      }
    });

    // Only on the services can a call be held in flight from outside (by pausing the engine), so only
    // there is it known that the caller walked away from a call the gateway had already routed.
    if (label.startsWith("distributed")) {
      it("a caller that walks away from a write gets a clean close; the write stands and a resend answers it (docs/decisions.md)", async () => {
        const services = baton as DistributedDeployment;
        const engines = services.running("engine");
        const requestId = crypto.randomUUID();
        const args = { process: "any-object", inputs: { blob: { walkedAway: requestId } }, requestId };
        const token = await baton.token({ kind: "agent", id: "a_victim" });
        const walkAway = new AbortController();
        let outcome: string;
        try {
          for (const engine of engines) engine.kill("SIGSTOP");
          const pending = fetch(baton.url, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              accept: "application/json, text/event-stream",
              "content-type": "application/json",
            },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: { name: "start_run", arguments: args },
            }),
            signal: walkAway.signal,
          });
          // Let the call reach the gateway (and wait on the bus), then close the request.
          await new Promise((r) => setTimeout(r, 1000));
          walkAway.abort();
          outcome = await pending.then(
            () => "answered before the caller left",
            (error: Error) => error.name,
          );
        } finally {
          for (const engine of engines) engine.kill("SIGCONT");
        }
        expect(outcome).toBe("AbortError");
        // The write stands without a resend: the run is there once the engine has caught up.
        const listed = async () =>
          (
            await victim.ok("list_runs", {
              process: "any-object",
              inputs: { blob: { walkedAway: requestId } },
            })
          ).items as { id: string }[];
        const deadline = Date.now() + 60_000;
        let runs = await listed();
        while (runs.length === 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 200));
          runs = await listed();
        }
        expect(runs).toHaveLength(1);
        // The same call again, with the same requestId, answers that run (§4.3) and creates no other.
        const again = await victim.ok("start_run", args);
        expect(again.run.id).toBe(runs[0]?.id);
        expect(await listed()).toHaveLength(1);
      });
    }
  },
);
