import { join } from "node:path";
import type { ToolName } from "@baton/protocol";
import { describe, expect, it } from "vitest";
import { TOOLS } from "../items.ts";
import { type McpSession, type Result, withoutUrls } from "../mcp.ts";
import { type Data, type Harness, PROCESSES_DIR, refused, rid, statesOf } from "../support.ts";

/**
 * What holds for every write (§4, §6): `requestId` replays and conflicts, arguments checked against the
 * tool's schema, concurrent writes resolved by the server, `limits.runDataBytes`, and test runs.
 */
export function requestScenarios(h: Harness): void {
  describe("§4 writes: idempotency, arguments, concurrency, limits and test mode", () => {
    it("[R2-5 #13 #50 submit.conflict:requestId decide.conflict:requestId] expense: 85.5 is not rounded; a replayed write returns the original result and completes nothing twice; changed arguments are a conflict (§2.3, §4)", async () => {
      const employee = await h.person("emp5@example.com");
      const manager = await h.person("mgr5@example.com");
      const payables = await h.person("ap5@example.com", ["accounts-payable"]);
      const agent = await h.agent("a_expense5");
      const runId = (
        await employee.ok("start_run", {
          process: "expense-reimbursement",
          inputs: { claimId: "EXP-55", manager: "mgr5@example.com" },
        })
      ).run.id;
      const receipt = await h.upload(employee, "receipt", "r.txt");
      expect(receipt.bytes).toBe(7);
      await h.decided(employee, runId, "receipts", "completed", {
        output: { purpose: "Lunch", totalUsd: 85.5, lines: [{ merchant: "Cafe", amount: 85.5 }] },
        evidence: [{ kind: "file", ref: receipt.id }],
      });
      const claim = await h.claim(agent, runId, "check");
      expect(claim.data.steps.receipts.output.totalUsd).toBe(85.5);
      const submit = {
        token: claim.token,
        output: { checkedTotalUsd: 85.5, checks: "ok" },
        evidence: [{ kind: "link", ref: "https://expenses/55" }],
        summary: "Checked.",
        requestId: rid(),
      };
      const first = await agent.call("submit", submit);
      expect(first.ok).toBe(true);
      const replay = await agent.call("submit", submit);
      expect(withoutUrls(replay)).toEqual(withoutUrls(first));
      refused(await agent.call("submit", { ...submit, summary: "Checked twice." }), "conflict");
      await h.decided(manager, runId, "manager_review", "approved");
      const item = await h.workItem(payables, runId, "reimburse");
      const last = {
        ...item.decide.arguments,
        requestId: rid(),
        decision: "completed",
        output: { paymentReference: "PAY-55", paidUsd: 85.5 },
        evidence: [{ kind: "link", ref: "https://erp/pay/55" }],
      };
      const done = await payables.call("decide", last);
      expect(done.ok && done.data.run.outcome).toBe("reimbursed");
      expect(withoutUrls(await payables.call("decide", last))).toEqual(withoutUrls(done));
      refused(
        await payables.call("decide", { ...last, output: { paymentReference: "PAY-56", paidUsd: 85.5 } }),
        "conflict",
      );
      const view = await employee.ok("get_run", { runId });
      expect(view.run).toMatchObject({ state: "ended", outcome: "reimbursed" });
      expect(view.data.steps.check.history).toEqual([]);
      expect(view.data.steps.reimburse.output.paidUsd).toBe(85.5);
    });

    it("[R3-3a] (without lease expiry) a lost submit response replayed with its requestId returns the original run view, no expiresAt, nothing completed twice (§3.3, §4)", async () => {
      const agent = await h.agent("a_r3a3");
      const editor = await h.person("ed3a@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const args = { token: claim.token, output: { revision: "r1" }, summary: "Drafted.", requestId: rid() };
      const first = await agent.call("submit", args);
      expect(first.ok).toBe(true);
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Shorter." });
      const replay = await agent.call("submit", args);
      expect(withoutUrls(replay)).toEqual(withoutUrls(first));
      expect(replay.ok && "expiresAt" in replay.data).toBe(false);
      const now = await agent.ok("get_run", { runId });
      expect(statesOf(now)).toMatchObject({ draft: "ready", editor_review: null });
      expect(now.data.steps.draft.history).toEqual([]);
    });

    it("[#49 #50 #51 start_run.conflict:requestId claim.conflict:requestId upload.conflict:requestId send_event.conflict:requestId] idempotency: replays return the original result (a claim's token even after its lease ended); other arguments conflict; failed calls are not recorded; scope is the organization; concurrent first calls make one effect (§4; issue #4 deliver 7)", async () => {
      const agent = await h.agent("a_d7");
      const ops = await h.operator("ops_d7@example.com");
      const editor = await h.person("ed_d7@example.com", ["editor"]);
      const startArgs = { process: "drafting", inputs: {}, requestId: rid() };
      const started = await editor.call("start_run", startArgs);
      expect(await editor.call("start_run", startArgs)).toEqual(started);
      refused(await editor.call("start_run", { ...startArgs, mode: "test" }), "conflict");
      const runId = started.ok ? started.data.run.id : "";

      // A claim replayed after its lease ended (here by the submission) returns the original token.
      const claimArgs = { runId, stepId: "draft", requestId: rid() };
      const claim = await agent.call("claim", claimArgs);
      expect(claim.ok).toBe(true);
      const token = claim.ok ? claim.data.token : "";
      await agent.ok("submit", { token, output: { revision: "r" }, summary: "x" });
      const replayed = await agent.call("claim", claimArgs);
      expect(withoutUrls(replayed)).toEqual(withoutUrls(claim));
      refused(await agent.call("claim", { ...claimArgs, stepId: "editor_review" }), "conflict");
      // The same requestId with another tool is other arguments.
      refused(
        await agent.call("send_event", { runId, name: "x", requestId: claimArgs.requestId }),
        "conflict",
      );

      // A failed call is not recorded: the retry with the same requestId can succeed.
      const item = await h.workItem(editor, runId, "editor_review");
      const decideArgs = { ...item.decide.arguments, decision: "rejected", requestId: rid() };
      refused(await editor.call("decide", { ...decideArgs, note: "" }), "invalid");
      const rejected = await editor.call("decide", { ...decideArgs, note: "Shorter." });
      expect(rejected.ok).toBe(true);
      expect(await editor.call("decide", { ...decideArgs, note: "Shorter." })).toEqual(rejected);
      const cancelArgs = { runId, reason: "Stop.", requestId: rid() };
      const cancelled = await ops.call("cancel", cancelArgs);
      expect(await ops.call("cancel", cancelArgs)).toEqual(cancelled);

      // Uploads replay too; the scope is the organization: another org may use the same requestId.
      const uploadArgs = {
        fileName: "a.txt",
        contentType: "text/plain",
        contentBase64: "YQ==",
        requestId: rid(),
      };
      const up = await agent.call("upload", uploadArgs);
      expect(await agent.call("upload", uploadArgs)).toEqual(up);
      refused(await agent.call("upload", { ...uploadArgs, fileName: "b.txt" }), "conflict");
      const org = h.org("idem-org");
      await h.publish(join(PROCESSES_DIR, "triage"), {}, org);
      const elsewhere = await h.agent("a_d7", org);
      const shared = rid();
      const here = await agent.call("start_run", {
        process: "triage",
        inputs: { ticket: "1", team: "red" },
        requestId: shared,
      });
      const there = await elsewhere.call("start_run", {
        process: "triage",
        inputs: { ticket: "1", team: "red" },
        requestId: shared,
      });
      expect(here.ok && there.ok).toBe(true);
      expect(here.ok && there.ok && here.data.run.id !== there.data.run.id).toBe(true);
      // Another identity reusing an organization's requestId is a different call: conflict.
      const other = await h.agent("b_d7");
      refused(
        await other.call("start_run", {
          process: "triage",
          inputs: { ticket: "1", team: "red" },
          requestId: shared,
        }),
        "conflict",
      );

      // Two concurrent first calls with one requestId: one effect, both get the same result.
      const concurrent = { process: "triage", inputs: { ticket: "C", team: "blue" }, requestId: rid() };
      const before = (await agent.ok("list_runs", { process: "triage", inputs: { ticket: "C" }, limit: 100 }))
        .items.length;
      const [x, y] = await Promise.all([
        agent.call("start_run", concurrent),
        agent.call("start_run", concurrent),
      ]);
      expect(x.ok).toBe(true);
      expect(y).toEqual(x);
      expect(
        (await agent.ok("list_runs", { process: "triage", inputs: { ticket: "C" }, limit: 100 })).items,
      ).toHaveLength(before + 1);
      const waits = (await editor.ok("start_run", { process: "two-waits", inputs: {} })).run.id;
      const event = { runId: waits, name: "ping", requestId: rid() };
      const [e1, e2] = await Promise.all([agent.call("send_event", event), agent.call("send_event", event)]);
      expect(e1).toEqual({ ok: true, data: { consumedBy: "first" } });
      expect(e2).toEqual(e1);
      expect(statesOf(await editor.ok("get_run", { runId: waits }))).toMatchObject({
        first: "done",
        second: "waiting",
      });
    });

    it("[#57] concurrency: 50 agents claiming one step at once get exactly one token; 20 group members deciding one item at once apply one decision, the rest already_decided or run_ended, never stale (§6, tools.md decide; issue #4 deliver 9)", async () => {
      const starter = await h.person("st_d9@example.com");
      const runId = (
        await starter.ok("start_run", { process: "triage", inputs: { ticket: "RACE", team: "red" } })
      ).run.id;
      const agents = await Promise.all(Array.from({ length: 50 }, (_, i) => h.agent(`racer_${i}`)));
      const claims = await Promise.all(agents.map((a) => a.write("claim", { runId, stepId: "classify" })));
      const won = claims.filter((c) => c.ok);
      expect(won).toHaveLength(1);
      for (const c of claims.filter((r) => !r.ok)) refused(c, "conflict", ["claimed_by_other"]);

      const editors = await Promise.all(
        Array.from({ length: 20 }, (_, i) => h.person(`member_${i}@example.com`, ["editor"])),
      );
      const race = async (decision: "rejected" | "approved"): Promise<Result[]> => {
        const first = editors[0] as McpSession;
        const editorRun = (await first.ok("start_run", { process: "drafting", inputs: {} })).run.id;
        await h.work(agents[0] as McpSession, editorRun, "draft", { revision: "r" });
        const item = await h.workItem(first, editorRun, "editor_review");
        return Promise.all(
          editors.map((e) =>
            e.write("decide", {
              ...item.decide.arguments,
              decision,
              ...(decision === "rejected" ? { note: "No." } : {}),
            }),
          ),
        );
      };
      const rejections = await race("rejected");
      expect(rejections.filter((r) => r.ok)).toHaveLength(1);
      for (const r of rejections.filter((x) => !x.ok)) refused(r, "conflict", ["already_decided"]);
      const approvals = await race("approved");
      expect(approvals.filter((r) => r.ok)).toHaveLength(1);
      for (const r of approvals.filter((x) => !x.ok)) refused(r, "conflict", ["run_ended"]);
    });

    it("[#56] limits and mode: limits.runDataBytes bounds inputs at start, submissions and held events; mode test shows on get_work items, claims and work items (§3.3, §6 rule 3; issue #4 deliver 6)", async () => {
      const agent = await h.agent("a_d6");
      const starter = await h.person("st_d6@example.com", ["reviewer"]);
      const cap = (await agent.ok("describe")).limits.runDataBytes as number;
      expect(cap).toBeGreaterThan(0);
      const big = (n: number) => "x".repeat(n);
      const tooBig = refused(
        await agent.write("start_run", {
          process: "triage",
          inputs: { ticket: "T", team: "red", notes: big(cap) },
        }),
        "invalid",
      );
      expect(tooBig.issues[0]).toMatch(
        new RegExp(`^inputs: run data would be \\d+ bytes, over limits\\.runDataBytes \\(${cap}\\)$`),
      );
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      const over = refused(
        await agent.write("submit", { token: claim.token, output: { label: big(cap) }, summary: "x" }),
        "not_accepted",
      );
      expect(over.issues[0]).toMatch(/^run data: \d+ bytes with this submission, over limits\.runDataBytes/);
      expect((await agent.ok("get_run", { runId })).data.steps).toEqual({});
      await agent.ok("submit", { token: claim.token, output: { label: "bug" }, summary: "x" });
      const events = (await starter.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      const half = Math.floor(cap / 2);
      expect(
        await agent.ok("send_event", { runId: events, name: "proof_received", data: { p: big(half) } }),
      ).toEqual({ consumedBy: null });
      const held = refused(
        await agent.write("send_event", { runId: events, name: "proof_received", data: { p: big(half) } }),
        "invalid",
      );
      expect(held.issues[0]).toMatch(
        /^data: the run data and held events with this event would be \d+ bytes/,
      );

      // mode: "test" on every get_work item, claim and work item of a test run.
      const test = (await starter.ok("start_run", { process: "event-review", inputs: {}, mode: "test" })).run
        .id;
      expect((await h.agentItem(agent, test, "prepare")).mode).toBe("test");
      const testClaim = await h.claim(agent, test, "prepare");
      expect(testClaim.mode).toBe("test");
      await agent.ok("submit", { token: testClaim.token, output: {}, summary: "x" });
      const view = await agent.ok("send_event", { runId: test, name: "proof_received" });
      expect(view).toEqual({ consumedBy: "proof" });
      const entry = await h.inboxEntry(starter, test, "review");
      expect(entry.mode).toBe("test");
      expect(entry.workItem.mode).toBe("test");
      expect((await starter.ok("get_run", { runId: test })).workItems[0].mode).toBe("test");
      const live = (await starter.ok("start_run", { process: "event-review", inputs: {} })).run.id;
      expect((await h.agentItem(agent, live, "prepare")).mode).toBe("live");
      expect((await h.claim(agent, live, "prepare")).mode).toBe("live");
    });

    it("[start_run.conflict:requestId claim.conflict:requestId renew.conflict:requestId escalate.conflict:requestId decide.conflict:requestId submit.conflict:requestId upload.conflict:requestId send_event.conflict:requestId cancel.conflict:requestId] every write refuses its requestId with other arguments as a conflict, and the same arguments still replay the original (§4)", async () => {
      const agent = await h.agent("a_rid");
      const editor = await h.person("edrid@example.com", ["editor"]);
      const ops = await h.operator("opsrid@example.com");
      /** `tool` with `args` under a fresh requestId, then `other` under it (conflict), then `args` again (the original). */
      const pinned = async (
        who: McpSession,
        tool: ToolName,
        args: Record<string, unknown>,
        other: Record<string, unknown>,
      ): Promise<Data> => {
        const requestId = rid();
        const first = await who.call(tool, { ...args, requestId });
        expect(first.ok, `${tool}: ${JSON.stringify(first).slice(0, 300)}`).toBe(true);
        refused(await who.call(tool, { ...other, requestId }), "conflict");
        expect(withoutUrls(await who.call(tool, { ...args, requestId }))).toEqual(withoutUrls(first));
        return first.ok ? first.data : null;
      };
      const started = await pinned(
        editor,
        "start_run",
        { process: "drafting", inputs: {} },
        { process: "drafting", inputs: {}, mode: "test" },
      );
      const runId = started.run.id;
      const claim = await pinned(
        agent,
        "claim",
        { runId, stepId: "draft" },
        { runId, stepId: "editor_review" },
      );
      const renewed = await pinned(
        agent,
        "renew",
        { token: claim.token },
        { token: claim.token, progress: "Half done." },
      );
      await pinned(
        agent,
        "escalate",
        { token: renewed.token, note: "Blocked." },
        { token: renewed.token, note: "Blocked again." },
      );
      const item = await h.workItem(ops, runId, "draft");
      await pinned(
        ops,
        "decide",
        { ...item.decide.arguments, decision: "returned", note: "Go on." },
        { ...item.decide.arguments, decision: "returned", note: "Carry on." },
      );
      const again = await h.claim(agent, runId, "draft");
      await pinned(
        agent,
        "submit",
        { token: again.token, output: { revision: "r" }, summary: "Drafted." },
        { token: again.token, output: { revision: "r" }, summary: "Drafted twice." },
      );
      await pinned(
        agent,
        "upload",
        { fileName: "a.txt", contentType: "text/plain", contentBase64: "YQ==" },
        { fileName: "b.txt", contentType: "text/plain", contentBase64: "YQ==" },
      );
      await pinned(
        agent,
        "send_event",
        { runId, name: "nudge", data: { n: 1 } },
        { runId, name: "nudge", data: { n: 2 } },
      );
      await pinned(ops, "cancel", { runId, reason: "Done testing." }, { runId, reason: "Another reason." });
    });

    it("[describe.invalid:arguments list_processes.invalid:arguments start_run.invalid:arguments get_run.invalid:arguments get_work.invalid:arguments claim.invalid:arguments submit.invalid:arguments escalate.invalid:arguments renew.invalid:arguments decide.invalid:arguments cancel.invalid:arguments upload.invalid:arguments send_event.invalid:arguments list_runs.invalid:arguments] every tool refuses an argument it does not take, and a missing required one, as invalid naming it, and changes nothing (§6 rule 3)", async () => {
      const agent = await h.agent("a_args");
      const editor = await h.person("edargs@example.com", ["editor"]);
      const ops = await h.operator("opsargs@example.com");
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const write = { requestId: rid() };
      // Each tool with arguments it accepts, and the one required argument left out below (if any).
      const calls: [McpSession, ToolName, Record<string, unknown>, string | null][] = [
        [agent, "describe", {}, null],
        [agent, "list_processes", {}, null],
        [agent, "start_run", { process: "drafting", inputs: {}, ...write }, "process"],
        [agent, "get_run", { runId }, "runId"],
        [agent, "get_work", {}, null],
        [agent, "claim", { runId, stepId: "draft", ...write }, "stepId"],
        [
          agent,
          "submit",
          { token: claim.token, output: { revision: "r" }, summary: "x", ...write },
          "output",
        ],
        [agent, "escalate", { token: claim.token, note: "x", ...write }, "note"],
        [agent, "renew", { token: claim.token, ...write }, "token"],
        [
          editor,
          "decide",
          { runId, workItemId: "w_1", snapshot: "s", decision: "approved", ...write },
          "workItemId",
        ],
        [ops, "cancel", { runId, reason: "x", ...write }, "reason"],
        [
          agent,
          "upload",
          { fileName: "a.txt", contentType: "text/plain", contentBase64: "YQ==", ...write },
          "fileName",
        ],
        [agent, "send_event", { runId, name: "nudge", ...write }, "name"],
        [agent, "list_runs", {}, null],
      ];
      expect(calls.map(([, tool]) => tool).sort()).toEqual([...TOOLS].sort());
      for (const [who, tool, args, required] of calls) {
        refused(await who.call(tool, { ...args, bogus: 1 }), "invalid", [
          "bogus: not an argument of this tool",
        ]);
        if (required) {
          const { [required]: _, ...without } = args;
          refused(await who.call(tool, without), "invalid", [`${required}: required`]);
        }
      }
      // Nothing changed: the run is as it was and the claim still stands.
      expect(statesOf(await agent.ok("get_run", { runId }))).toEqual({
        draft: "claimed",
        editor_review: null,
        done: null,
      });
      await agent.ok("submit", { token: claim.token, output: { revision: "r" }, summary: "Drafted." });
    });

    it("[#56] a test run is worked like a live one: people see that it is a test, decide its items, and it ends as a live run would (§3.3 test mode)", async () => {
      const agent = await h.agent("a_56");
      const editor = await h.person("ed56@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {}, mode: "test" })).run.id;
      await h.work(agent, runId, "draft", { revision: "r" });
      expect(await h.inboxEntry(editor, runId, "editor_review")).toMatchObject({
        mode: "test",
        workItem: { mode: "test" },
      });
      const ended = await h.decided(editor, runId, "editor_review", "approved");
      expect(ended.run).toMatchObject({ mode: "test", state: "ended", outcome: "published" });
      expect(ended.data.steps.editor_review).toMatchObject({ decision: "approved", by: "ed56@example.com" });
    });
  });
}
