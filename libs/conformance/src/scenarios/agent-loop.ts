import { describe, expect, it } from "vitest";
import { type Harness, refused, statesOf } from "../support.ts";

/**
 * The agent loop (§3.3, §6 rule 2): `claim`, `submit`, `renew` and `escalate`, their tokens and
 * errors (tools.md), and the handoff a next attempt receives.
 */
export function agentLoopScenarios(h: Harness): void {
  describe("§3.3 the agent loop: claim, submit, renew, escalate, tokens, handoff", () => {
    it("[claim.conflict:claimed_by_you claim.conflict:claimed_by_other claim.conflict:not_ready claim.forbidden claim.not_found cancel.forbidden] claim: claimed_by_you, claimed_by_other, not_ready; forbidden for a person and for a non-agent step; cancel forbidden for an agent and a non-operator (tools.md claim, cancel; issue #4 deliver 1)", async () => {
      const a = await h.agent("a_d1c");
      const b = await h.agent("b_d1c");
      const editor = await h.person("ed_d1c@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      refused(await editor.write("claim", { runId, stepId: "draft" }), "forbidden");
      refused(await a.write("claim", { runId, stepId: "editor_review" }), "forbidden");
      refused(await a.write("claim", { runId, stepId: "no_such_step" }), "not_found");
      refused(await a.write("claim", { runId: "r_doesnotexist", stepId: "draft" }), "not_found");
      const claim = await h.claim(a, runId, "draft");
      refused(await a.write("claim", { runId, stepId: "draft" }), "conflict", ["claimed_by_you"]);
      refused(await b.write("claim", { runId, stepId: "draft" }), "conflict", ["claimed_by_other"]);
      await a.ok("submit", { token: claim.token, output: { revision: "r" }, summary: "x" });
      refused(await b.write("claim", { runId, stepId: "draft" }), "conflict", ["not_ready"]);
      refused(await a.write("cancel", { runId, reason: "x" }), "forbidden");
      refused(await editor.write("cancel", { runId, reason: "x" }), "forbidden");
    });

    it("[#42 W3 R3-Q5 submit.invalid:token renew.invalid:token escalate.invalid:token submit.stale claim.conflict:run_ended submit.conflict:run_ended renew.conflict:run_ended escalate.conflict:run_ended send_event.conflict:run_ended] tokens: invalid when it does not verify; stale when its lease ended (submitted, escalated) or was replaced (renewed); run_ended first on an ended run (§3.3, §4.3, §6 rule 2; issue #4 deliver 1)", async () => {
      const agent = await h.agent("a_d1t");
      const editor = await h.person("ed_d1t@example.com", ["editor"]);
      const ops = await h.operator();
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      const submit = (token: string) =>
        agent.write("submit", { token, output: { revision: "r" }, summary: "x" });
      for (const bad of [
        "not-a-token",
        `${claim.token}x`,
        claim.token.replace(/.$/, (c: string) => (c === "A" ? "B" : "A")),
      ]) {
        refused(await submit(bad), "invalid");
        refused(await agent.write("renew", { token: bad }), "invalid");
        refused(await agent.write("escalate", { token: bad, note: "x" }), "invalid");
      }
      const renewed = await agent.ok("renew", { token: claim.token });
      refused(await submit(claim.token), "stale");
      await agent.ok("escalate", { token: renewed.token, note: "Blocked." });
      refused(await submit(renewed.token), "stale");
      await h.decided(ops, runId, "draft", "returned", { note: "Go on." });
      const again = await h.claim(agent, runId, "draft");
      await agent.ok("submit", { token: again.token, output: { revision: "r" }, summary: "x" });
      refused(await submit(again.token), "stale");
      await ops.ok("cancel", { runId, reason: "Done testing." });
      refused(await submit(again.token), "conflict", ["run_ended"]);
      refused(await agent.write("renew", { token: again.token }), "conflict", ["run_ended"]);
      refused(await agent.write("escalate", { token: again.token, note: "x" }), "conflict", ["run_ended"]);
      refused(await agent.write("claim", { runId, stepId: "draft" }), "conflict", ["run_ended"]);
      refused(await agent.write("send_event", { runId, name: "x" }), "conflict", ["run_ended"]);
    });

    it("[R2-B3 W6] handoff: issues after a refused submission and returned after an escalation, on get_work, on claim and on the escalation's work item; reset by rework through on_reject (§3.3; issue #4 deliver 3)", async () => {
      const agent = await h.agent("a_d3");
      const next = await h.agent("b_d3");
      const editor = await h.person("ed_d3@example.com", ["editor"]);
      const ops = await h.operator("ops_d3@example.com");
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      expect((await h.agentItem(agent, runId, "draft")).handoff).toBeNull();
      const claim = await h.claim(agent, runId, "draft");
      expect(claim.handoff).toBeNull();
      refused(
        await agent.write("submit", { token: claim.token, output: { revision: 3 }, summary: "x" }),
        "not_accepted",
        ["output.revision: expected string"],
      );
      const escalated = await agent.ok("escalate", { token: claim.token, note: "The CMS times out." });
      expect(escalated.workItems[0].handoff).toEqual({ issues: ["output.revision: expected string"] });
      await h.decided(ops, runId, "draft", "returned", { note: "CMS restarted." });
      const expected = {
        issues: ["output.revision: expected string"],
        returned: { note: "CMS restarted.", by: "ops_d3@example.com", at: expect.any(String) },
      };
      expect((await h.agentItem(next, runId, "draft")).handoff).toEqual(expected);
      const taken = await h.claim(next, runId, "draft");
      expect(taken.handoff).toEqual(expected);
      await next.ok("submit", { token: taken.token, output: { revision: "r1" }, summary: "Drafted." });
      await h.decided(editor, runId, "editor_review", "rejected", { note: "Too long." });
      expect((await h.agentItem(agent, runId, "draft")).handoff).toBeNull();
      const fresh = await h.claim(agent, runId, "draft");
      expect(fresh.handoff).toBeNull();
      expect(fresh.data.steps.editor_review.note).toBe("Too long.");
    });

    it("[#16 submit.invalid:arguments submit.not_accepted] an argument the tool does not take is invalid; an undeclared output field is not_accepted (§6 rule 3)", async () => {
      const agent = await h.agent("a_16");
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { label: "x" },
          summary: "s",
          priority: 1,
        }),
        "invalid",
        ["priority: not an argument of this tool"],
      );
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { label: "x", priority: 1 },
          summary: "s",
        }),
        "not_accepted",
        ["output.priority: not declared"],
      );
    });

    it("[#40 #43 #45 #48] a claim and a renew expire now + leaseSeconds; there is no release or agent-fail tool (§3.3)", async () => {
      const agent = await h.agent("a_40");
      const lease = (await agent.ok("describe")).leaseSeconds * 1000;
      const runId = (await agent.ok("start_run", { process: "triage", inputs: { ticket: "T", team: "red" } }))
        .run.id;
      const claim = await h.claim(agent, runId, "classify");
      const claimedAt = Date.parse((await agent.ok("get_run", { runId })).run.updatedAt);
      expect(Date.parse(claim.expiresAt) - claimedAt).toBe(lease);
      const renewed = await agent.ok("renew", { token: claim.token });
      const renewedAt = Date.parse((await agent.ok("get_run", { runId })).run.updatedAt);
      expect(Date.parse(renewed.expiresAt) - renewedAt).toBe(lease);
      const tools = (await agent.tools()).map((t) => t.name);
      expect(tools).not.toContain("release");
      expect(tools).not.toContain("fail");
    });

    it("[R2-3 #34 #46 #47 R2-B3] support-escalation: escalate → operator queue item with three decisions; returned → handoff.returned on get_work and claim; reclaim → resolved; or the operator completes it (§3.3, §3.4)", async () => {
      const agent = await h.agent("a_support2");
      const tier1 = await h.person("t1b@example.com", ["tier1-lead"]);
      const ops = await h.operator("ops2@example.com");
      const toClose = async () => {
        const runId = (
          await agent.ok("start_run", { process: "support-escalation", inputs: { ticketId: "T-23" } })
        ).run.id;
        await h.work(
          agent,
          runId,
          "diagnose",
          { diagnosis: "Fixed by restart.", attemptedFixes: "Restart." },
          {
            evidence: [{ kind: "link", ref: "https://support/T-23" }],
            next: "confirm",
            reason: "Runbook fix worked.",
          },
        );
        await h.decided(tier1, runId, "confirm", "approved");
        return runId;
      };
      const runId = await toClose();
      const claim = await h.claim(agent, runId, "close_ticket");
      const escalated = await agent.ok("escalate", {
        token: claim.token,
        note: "The ticket system refuses the close.",
      });
      expect(statesOf(escalated).close_ticket).toBe("waiting");
      expect(escalated.run.state).toBe("waiting");
      const item = escalated.workItems[0];
      expect(item).toMatchObject({
        stepId: "close_ticket",
        kind: "agent",
        assignedTo: { group: "operators" },
        escalation: { note: "The ticket system refuses the close.", by: "a_support2" },
        decide: { decisions: ["returned", "completed", "failed"] },
      });
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { ticket: "T-23" },
          evidence: [{ kind: "link", ref: "x" }],
          summary: "x",
        }),
        "stale",
      );
      const inbox = await h.workItem(ops, runId, "close_ticket");
      expect(inbox.escalation.note).toBe("The ticket system refuses the close.");
      const returned = await h.decided(ops, runId, "close_ticket", "returned", {
        note: "Unlocked it; try again.",
      });
      expect(statesOf(returned).close_ticket).toBe("ready");
      const listed = await h.agentItem(agent, runId, "close_ticket");
      expect(listed.handoff).toEqual({
        returned: { note: "Unlocked it; try again.", by: "ops2@example.com", at: expect.any(String) },
      });
      const again = await h.claim(agent, runId, "close_ticket");
      expect(again.handoff).toEqual(listed.handoff);
      const ended = await agent.ok("submit", {
        token: again.token,
        output: { ticket: "T-23" },
        evidence: [{ kind: "link", ref: "https://support/T-23" }],
        summary: "Closed.",
      });
      expect(ended.run).toMatchObject({ state: "ended", outcome: "resolved" });

      // Alternative: the operator completes it under the same acceptance.
      const alt = await toClose();
      const c = await h.claim(agent, alt, "close_ticket");
      await agent.ok("escalate", { token: c.token, note: "Stuck." });
      refused(
        await h.decide(ops, alt, "close_ticket", "completed", { output: { ticket: "T-23" } }),
        "not_accepted",
        ["evidence: link required"],
      );
      const done = await h.decided(ops, alt, "close_ticket", "completed", {
        output: { ticket: "T-23" },
        evidence: [{ kind: "link", ref: "https://support/T-23" }],
      });
      expect(done.run.outcome).toBe("resolved");
      expect(done.data.steps.close_ticket.by).toBe("ops2@example.com");
    });

    it("[R2-6 #42 renew.stale submit.stale] supplier-rfp: renew → new token and expiresAt, the old token is stale; submit with the new one; select; record → ended selected (§3.3, tools.md renew)", async () => {
      const buyer = await h.person("buyer6@example.com", ["procurement-buyer"]);
      const manager = await h.person("pm6@example.com", ["procurement-manager"]);
      const agent = await h.agent("a_sourcing6");
      const runId = (
        await buyer.ok("start_run", {
          process: "supplier-rfp",
          inputs: {
            rfpId: "RFP-26",
            requirements: "Chairs",
            supplierOne: "Acme",
            supplierTwo: "Birch",
            supplierThree: "Cedar",
          },
        })
      ).run.id;
      const q = await h.upload(buyer, "quotes", "quotes.txt");
      await h.decided(buyer, runId, "collect_quotes", "completed", {
        output: { quoteOne: "Q1", quoteTwo: "Q2", quoteThree: "Q3" },
        evidence: [{ kind: "file", ref: q.id }],
      });
      const claim = await h.claim(agent, runId, "compare");
      const renewed = await agent.ok("renew", {
        token: claim.token,
        progress: "Normalized two of three quotes.",
      });
      expect(renewed.token).not.toBe(claim.token);
      expect(Date.parse(renewed.expiresAt)).toBeGreaterThanOrEqual(Date.parse(claim.expiresAt));
      const output = { comparison: "Birch best.", recommendedSupplier: "Birch", rationale: "Price." };
      refused(await agent.write("submit", { token: claim.token, output, summary: "x" }), "stale");
      refused(await agent.write("renew", { token: claim.token }), "stale");
      await agent.ok("submit", { token: renewed.token, output, summary: "Compared all three." });
      await h.decided(manager, runId, "select", "approved");
      const ended = await h.work(
        agent,
        runId,
        "record_selection",
        { sourcingRecord: "SRC-26" },
        {
          evidence: [{ kind: "link", ref: "https://sourcing/26" }],
        },
      );
      expect(ended.run).toMatchObject({ state: "ended", outcome: "selected" });
    });

    it("[#26 submit.not_accepted escalate.stale] a submission with next and reason on a step whose next is not a list is not_accepted and the claim stands; escalate with a token that was renewed or submitted is stale (§3.2, §4.3)", async () => {
      const agent = await h.agent("a_26");
      const editor = await h.person("ed26@example.com", ["editor"]);
      const runId = (await editor.ok("start_run", { process: "drafting", inputs: {} })).run.id;
      const claim = await h.claim(agent, runId, "draft");
      refused(
        await agent.write("submit", {
          token: claim.token,
          output: { revision: "r" },
          summary: "Drafted.",
          next: "editor_review",
          reason: "Done.",
        }),
        "not_accepted",
        [
          "next: not accepted; this step's next is not a list",
          "reason: not accepted; this step's next is not a list",
        ],
      );
      const renewed = await agent.ok("renew", { token: claim.token });
      refused(await agent.write("escalate", { token: claim.token, note: "Stuck." }), "stale");
      await agent.ok("submit", { token: renewed.token, output: { revision: "r" }, summary: "Drafted." });
      refused(await agent.write("escalate", { token: renewed.token, note: "Stuck." }), "stale");
      expect(statesOf(await agent.ok("get_run", { runId }))).toMatchObject({
        draft: "done",
        editor_review: "waiting",
      });
    });
  });
}
