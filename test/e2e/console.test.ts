import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { McpSession } from "@baton/conformance/mcp";
import { parseProcess } from "@baton/process";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AxeViolation, seriousViolations, startBrowser, type TestBrowser } from "../support/browser.ts";
import { type Deployment, REPO, startEmbedded } from "../support/deploy.ts";
import { expenseAtApproval as expenseRun } from "../support/expense.ts";
import { generateProcess } from "../support/generated-process.ts";

const run = promisify(execFile);
/** What the tests read of an element's computed style (this file has no DOM types). */
type CSSDeclaration = { strokeDasharray: string };
const WAIT = 30_000;
const FORM_FOLDER = join(REPO, "test/e2e/processes/console-form");
/** Set to a folder to keep a screenshot of each page the tests visit (docs/console.md's images). */
const SHOTS = process.env.BATON_CONSOLE_SCREENSHOTS;

/**
 * The web console (issue #16) end to end: Debian's Chromium, driven by playwright-core, against
 * `baton dev`, every call going through the console's own MCP client and the admin API. Each page the
 * tests render is checked by axe-core for serious and critical violations, every request the browser
 * makes must stay on the server, and no Content-Security-Policy violation may occur.
 */
describe("web console (issue #16) in Chromium against baton dev", () => {
  let baton: Deployment;
  let base: string;
  let browser: TestBrowser;
  let agent: McpSession;
  let manager: McpSession;
  const requests: string[] = [];
  const problems: string[] = [];
  const audited: string[] = [];

  beforeAll(async () => {
    baton = await startEmbedded();
    base = baton.url.replace(/\/mcp$/, "");
    await baton.publish(FORM_FOLDER, { clerk: "clerk" });
    agent = await baton.session({ kind: "agent", id: "a_console" });
    manager = await baton.session({ kind: "person", id: "mia@example.com", groups: ["manager"] });
    browser = await startBrowser();
    browser.context.on("request", (r) => requests.push(r.url()));
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.close();
    await manager?.close();
    await baton?.stop();
  });

  /** A new tab; console errors about the page itself (not the SDK's tolerated 405 on GET /mcp) are kept. */
  async function tab(options?: Parameters<TestBrowser["page"]>[0]): Promise<Page> {
    const page = await browser.page(options);
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => {
      if (/Content[- ]Security[- ]Policy|Refused to/i.test(m.text())) problems.push(`csp: ${m.text()}`);
    });
    return page;
  }

  async function audit(page: Page, name: string): Promise<void> {
    const violations: AxeViolation[] = await seriousViolations(page);
    audited.push(name);
    expect(violations, `axe-core on ${name}`).toEqual([]);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name.replace(/\W+/g, "-")}.png`) });
  }

  async function heading(page: Page, name: string | RegExp) {
    await page.getByRole("heading", { level: 1, name }).waitFor({ timeout: WAIT });
  }

  async function token(as: Parameters<Deployment["token"]>[0]) {
    return baton.token(as);
  }

  /** Signs in on the sign-in form by pasting a bearer token. */
  async function signIn(page: Page, bearer: string) {
    await page.goto(`${base}/ui/`);
    await page.getByLabel("Bearer token").fill(bearer);
    await page.getByRole("button", { name: "Sign in" }).click();
    await heading(page, "Inbox");
  }

  /** An expense-approval test run whose approval waits on the manager group (the quickstart's walk). */
  const expenseAtApproval = () => expenseRun(manager, agent);

  async function openInboxItem(page: Page, runId: string) {
    const card = page.locator("li.inbox-item", { hasText: runId });
    await card.waitFor({ timeout: WAIT });
    await card.locator("h2 a").click();
  }

  it("baton dev prints the console's address under its MCP line", () => {
    expect(baton.consoleUrl).toBe(`${base}/ui/`);
  });

  it("serves /ui/ from the build with a strict Content-Security-Policy and no inline script", async () => {
    const response = await fetch(`${base}/ui/`);
    expect(response.status).toBe(200);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await response.text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/ui\/assets\/[^"]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    const asset = /src="(\/ui\/assets\/[^"]+)"/.exec(html)?.[1] as string;
    const js = await fetch(`${base}${asset}`);
    expect(js.headers.get("cache-control")).toContain("immutable");
    expect(js.headers.get("content-security-policy")).toBe(csp);
    const bare = await fetch(`${base}/ui`, { redirect: "manual" });
    expect([301, 302]).toContain(bare.status);
    expect(bare.headers.get("location")).toBe("/ui/");
  });

  it("a manager signs in with `baton token person … --console`, approves the quickstart's approval by keyboard, and the run ends approved", async () => {
    const runId = await expenseAtApproval();
    const { stdout } = await run(
      process.execPath,
      [
        "--import",
        "tsx",
        join(REPO, "services/cli/src/main.ts"),
        "token",
        "person",
        "mia@example.com",
      ].concat(["--groups", "manager", "--console", "--data-dir", baton.dataDir]),
      { cwd: REPO, timeout: 60_000 },
    );
    expect(stdout).toMatch(
      new RegExp(`^${base.replace(/[.:/]/g, "\\$&")}/ui/#token=[\\w-]+\\.[\\w-]+\\.[\\w-]+\\n$`),
    );
    const page = await tab();
    await page.goto(stdout.trim());
    await heading(page, "Inbox");
    // The fragment is read once and cleared from the address bar.
    expect(page.url()).toBe(`${base}/ui/#/`);
    await page.locator("li.inbox-item", { hasText: runId }).waitFor({ timeout: WAIT });
    await audit(page, "inbox");
    await openInboxItem(page, runId);
    await heading(page, "Approval: Approve");
    await page.getByText("This is a test run").waitFor({ timeout: WAIT });
    await page.getByText("Approve when the receipt matches").waitFor({ timeout: WAIT });
    await page.getByRole("button", { name: "Approve" }).waitFor({ timeout: WAIT });
    await audit(page, "work item (approval)");
    // Keyboard only: Tab to the Approve button and press Enter.
    let focused = "";
    for (let i = 0; i < 80 && focused !== "Approve"; i++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate("document.activeElement?.textContent?.trim() ?? ''");
    }
    expect(focused).toBe("Approve");
    await page.keyboard.press("Enter");
    await heading(page, "Decided: approved");
    await page.getByText("with the outcome approved").waitFor({ timeout: WAIT });
    const view = await manager.ok("get_run", { runId });
    expect(view.run).toMatchObject({ state: "ended", outcome: "approved" });

    // The run page: state, outcome, steps, the timeline from the journal and where the run stands.
    await page.getByRole("link", { name: "the run" }).click();
    await heading(page, /Run of expense-approval/);
    const timeline = page.locator("ol.timeline");
    await timeline.getByText("decided approved").waitFor({ timeout: WAIT });
    expect(await timeline.locator("li").count()).toBeGreaterThanOrEqual(4);
    await expect.poll(() => timeline.textContent()).toContain("mia@example.com");
    await page.locator("svg.map-svg").waitFor({ timeout: WAIT });
    await audit(page, "run");
    await page.close();
  });

  it("the sign-in form refuses a token the server does not accept, saying so by the Bearer token field", async () => {
    const good = await token({ kind: "person", id: "mia@example.com", groups: ["manager"] });
    const [header, payload] = good.split(".");
    const forged = `${header}.${payload}.${"A".repeat(43)}`;
    const page = await tab();
    await page.goto(`${base}/ui/`);
    await page.getByLabel("Bearer token").fill(forged);
    await page.getByRole("button", { name: "Sign in" }).click();
    const error = page.locator("#token-error");
    await error.waitFor({ timeout: WAIT });
    expect(await error.textContent()).toMatch(/^The server refused this token/);
    expect(await page.getByLabel("Bearer token").getAttribute("aria-invalid")).toBe("true");
    await audit(page, "sign-in (refused)");
    await page.close();
  });

  it("with the dev issuer: config.json says paste a token, and Who am I shows the token's identity as the server read it", async () => {
    expect(await (await fetch(`${base}/ui/config.json`)).json()).toEqual({ signIn: "token" });
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "ola@example.com", groups: ["manager", "clerk"] }));
    await page.getByRole("link", { name: "ola@example.com" }).click();
    await heading(page, "Who am I");
    const identity = page.locator('dl[aria-label="Your identity"]');
    await identity.waitFor({ timeout: WAIT });
    expect(
      await page.getByRole("list", { name: "Your groups" }).getByRole("listitem").allTextContents(),
    ).toEqual(["manager", "clerk"]);
    const text = (await identity.textContent()) ?? "";
    expect(text).toContain("ola@example.com");
    expect(text).toContain("with a token of the dev issuer");
    expect(text).toMatch(/Rolesnone/);
    await audit(page, "who am I");
    await page.close();
  });

  it("a manager rejects with a note (refused first without one, by the Note field); the agent's next claim carries the note", async () => {
    const runId = await expenseAtApproval();
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "mia@example.com", groups: ["manager"] }));
    await openInboxItem(page, runId);
    await heading(page, "Approval: Approve");
    await page.getByRole("button", { name: "Reject" }).click();
    const noteError = page.locator("#error-note");
    await noteError.waitFor({ timeout: WAIT });
    expect(await noteError.textContent()).toMatch(/^note: required/);
    expect(await page.getByLabel("Note (required to reject)").getAttribute("aria-invalid")).toBe("true");
    const note = "The receipt date is outside the trip; check it again.";
    await page.getByLabel("Note (required to reject)").fill(note);
    await page.getByRole("button", { name: "Reject" }).click();
    await heading(page, "Decided: rejected");
    const item = (await agent.ok("get_work", {})).items.find((i: { runId: string }) => i.runId === runId);
    expect(item?.stepId).toBe("check_claim");
    const claim = await agent.ok("claim", { runId, stepId: "check_claim" });
    expect(claim.data.steps.approve).toMatchObject({ decision: "rejected", note, by: "mia@example.com" });
    await page.close();
  });

  it("a task form refuses a wrong value with the engine's issue by the field, keeps what was typed, sends numbers exactly as typed, then accepts", async () => {
    const clerk = await baton.session({ kind: "person", id: "clara@example.com", groups: ["clerk"] });
    const started = await clerk.ok("start_run", {
      process: "console-form",
      inputs: { subject: "Q3 invoice" },
    });
    const runId = started.run.id as string;
    await clerk.close();
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "clara@example.com", groups: ["clerk"] }));
    await openInboxItem(page, runId);
    await heading(page, "Task: Fill in");
    await page.getByRole("button", { name: "Complete" }).waitFor({ timeout: WAIT });
    const amount = page.getByLabel(/^Amount/);
    await amount.fill("twelve");
    await page.getByRole("radio", { name: "Yes" }).check();
    await page.getByLabel(/^Tier/).selectOption({ label: "gold" });
    await page.getByLabel(/^Due/).fill("2026-12-24");
    await page.getByRole("button", { name: "Add an item to Tags" }).click();
    await page.getByLabel("Tags, item 1").fill("urgent");
    await page.getByLabel("Attach a file").setInputFiles({
      name: "signed.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("signed copy\n"),
    });
    await page.locator("ul.attached", { hasText: "signed.txt" }).waitFor({ timeout: WAIT });
    // The route choice shows each route's `when` label.
    await page.getByRole("radio", { name: /Everything is in order/ }).check();
    await page.getByLabel("Reason for this route").fill("Every field was checked.");
    await audit(page, "work item (task form)");

    await page.getByRole("button", { name: "Complete" }).click();
    const amountError = page.locator("#error-output-amount");
    await amountError.waitFor({ timeout: WAIT });
    expect(await amountError.textContent()).toMatch(/^output\.amount: expected number/);
    expect(await amount.getAttribute("aria-invalid")).toBe("true");
    // Nothing typed was lost.
    expect(await amount.inputValue()).toBe("twelve");
    expect(await page.getByLabel(/^Tier/).inputValue()).toBe("0");
    expect(await page.getByLabel("Tags, item 1").inputValue()).toBe("urgent");
    expect(await page.getByLabel("Reason for this route").inputValue()).toBe("Every field was checked.");
    expect(await page.getByRole("radio", { name: /Everything is in order/ }).isChecked()).toBe(true);
    await audit(page, "work item (refused)");

    // Sent exactly as typed: JavaScript would round 12345678901234567890; the server refuses it by the field.
    await amount.fill("12345678901234567890");
    await page.getByRole("button", { name: "Complete" }).click();
    await expect
      .poll(() => amountError.textContent(), { timeout: WAIT })
      .toMatch(/^output\.amount: integer 12345678901234567890 is beyond/);

    await amount.fill("1234.50");
    await page.getByRole("button", { name: "Complete" }).click();
    await heading(page, "Decided: completed");
    await page.getByText("with the outcome filed").waitFor({ timeout: WAIT });
    const view = await manager.ok("get_run", { runId });
    expect(view.run).toMatchObject({ state: "ended", outcome: "filed" });
    const done = view.data.steps.fill_in;
    expect(done.output).toEqual({
      amount: 1234.5,
      approved: true,
      tier: "gold",
      due: "2026-12-24",
      tags: ["urgent"],
    });
    expect(done).toMatchObject({
      next: "filed",
      reason: "Every field was checked.",
      by: "clara@example.com",
    });
    expect(done.evidence).toHaveLength(1);
    expect(done.evidence[0]).toMatchObject({ kind: "file" });
    // On the run page, the file's link opens its bytes (§5 `url`).
    await page.getByRole("link", { name: "the run" }).click();
    await heading(page, /Run of console-form/);
    const file = page.locator("section.step-data a", { hasText: `File ${done.evidence[0].ref}` });
    await file.waitFor({ timeout: WAIT });
    const bytes = await fetch((await file.getAttribute("href")) as string);
    expect(await bytes.text()).toBe("signed copy\n");
    await page.close();
  });

  it("a decision the server refuses as stale reloads the run and keeps what was typed; sent again, it goes through", async () => {
    const runId = await expenseAtApproval();
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "mia@example.com", groups: ["manager"] }));
    await openInboxItem(page, runId);
    await heading(page, "Approval: Approve");
    // The first decide carries a snapshot from before the run moved on (§3.4): the server says stale.
    let rewritten = 0;
    await page.route(`${base}/mcp`, async (route) => {
      const body = route.request().postData() ?? "";
      if (rewritten === 0 && body.includes('"name":"decide"')) {
        rewritten++;
        return route.continue({
          postData: body.replace(/"snapshot":"[0-9a-f]+"/, `"snapshot":"${"0".repeat(64)}"`),
        });
      }
      return route.continue();
    });
    const note = "Within policy; the hotel was booked early.";
    await page.getByLabel("Note (required to reject)").fill(note);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("The run changed since you opened this item.").waitFor({ timeout: WAIT });
    expect(rewritten).toBe(1);
    expect(await page.getByLabel("Note (required to reject)").inputValue()).toBe(note);
    await page.getByRole("button", { name: "Approve" }).click();
    await heading(page, "Decided: approved");
    const view = await manager.ok("get_run", { runId });
    expect(view.data.steps.approve).toMatchObject({ decision: "approved", note });
    await page.close();
  });

  it("an operator returns an escalated step from the escalation queue; the agent's next claim carries the note", async () => {
    const started = await manager.ok("start_run", {
      process: "expense-approval",
      mode: "test",
      inputs: { employee: "sam@example.com", amount: 12, receiptUrl: "https://example.com/r/2" },
    });
    const runId = started.run.id as string;
    const claim = await agent.ok("claim", { runId, stepId: "check_claim" });
    await agent.ok("escalate", { token: claim.token, note: "The receipt is unreadable." });
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "olga@example.com", operator: true }));
    await page.getByRole("link", { name: "Operators" }).click();
    await heading(page, "Operators");
    const card = page.locator("li.card", { hasText: runId });
    await card.getByText("The receipt is unreadable.").waitFor({ timeout: WAIT });
    await audit(page, "operators");
    await card.getByRole("link", { name: "Return, complete or fail it" }).click();
    await heading(page, "Escalated: Check claim");
    // The form appears once the published version (declared field order) is read.
    await page.getByRole("button", { name: "Return", exact: true }).waitFor({ timeout: WAIT });
    for (const name of ["Return", "Complete", "Fail"]) {
      expect(await page.getByRole("button", { name, exact: true }).count()).toBe(1);
    }
    await audit(page, "work item (escalated)");
    const note = "Ask the employee for a readable scan first.";
    await page.getByLabel("Note (required to return or fail)").fill(note);
    await page.getByRole("button", { name: "Return", exact: true }).click();
    await heading(page, "Decided: returned");
    const again = await agent.ok("claim", { runId, stepId: "check_claim" });
    expect(again.handoff.returned).toMatchObject({ note, by: "olga@example.com" });
    await page.close();
  });

  it("an operator sends an event to a run and cancels it with a reason from the run page", async () => {
    const runId = await expenseAtApproval();
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "olga@example.com", operator: true }));
    await page.goto(`${base}/ui/#/runs/${runId}`);
    await heading(page, /Run of expense-approval/);
    await page.getByLabel("Event name").fill("receipt_rescanned");
    await page.getByRole("button", { name: "Send event" }).click();
    await page.getByText("The event is held for a later wait.").waitFor({ timeout: WAIT });
    await page.getByLabel("Reason", { exact: true }).fill("The trip was called off.");
    await page.getByRole("button", { name: "Cancel the run" }).click();
    await page.locator("dl.facts").getByText("cancelled", { exact: true }).waitFor({ timeout: WAIT });
    const view = await manager.ok("get_run", { runId });
    expect(view.run.state).toBe("cancelled");
    expect(view.run.ended).toMatchObject({ by: "olga@example.com", note: "The trip was called off." });
    await page.close();
  });

  it("the map of supplier-onboarding shows its lanes, its decision point, its dashed rejection line and its ends", async () => {
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "fin@example.com", groups: ["finance-approver"] }));
    await page.getByRole("link", { name: "Processes" }).click();
    await page.getByRole("link", { name: "supplier-onboarding" }).click();
    await heading(page, "supplier-onboarding");
    const svg = page.locator("svg.map-svg");
    await svg.waitFor({ timeout: WAIT });
    const lanes = await svg.locator("g.lane").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-lane")));
    expect(lanes).toEqual(["Agent", "Finance approver"]);
    expect(await svg.locator("polygon.decision-node").count()).toBe(1);
    for (const when of ["Vendor is cleared on both lists", "Any sanctions hit"]) {
      const edge = svg.locator('g.edge-route[data-from="check_vendor.decision"]', {
        hasText: when.split(" ")[0] as string,
      });
      expect(await edge.count(), when).toBeGreaterThanOrEqual(1);
    }
    expect(
      (await svg.locator("g.edge-route .edge-label").allTextContents()).map((t) => t.replace(/\s+/g, "")),
    ).toEqual(expect.arrayContaining(["Vendorisclearedonbothlists", "Anysanctionshit"]));
    const rejection = svg.locator('g.edge-rejected[data-from="approve"][data-to="check_vendor"] path');
    expect(await rejection.count()).toBe(1);
    const dashes = await rejection.evaluate(
      (p) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): CSSDeclaration }).getComputedStyle(p)
          .strokeDasharray,
    );
    expect(dashes).not.toBe("none");
    const ends = await svg.locator("g.end-node text").allTextContents();
    expect(ends.sort()).toEqual(["End: declined", "End: onboarded"]);
    expect(await svg.locator('g.card-node[data-step="approve"]').textContent()).toContain("Approval");
    // Versions with content hash and bindings, as the admin API reads them.
    const versions = (await (
      await fetch(`${base}/api/processes/supplier-onboarding/versions`, {
        headers: { authorization: `Bearer ${await token({ kind: "agent", id: "a_reader" })}` },
      })
    ).json()) as { data: { versions: { contentHash: string }[] } };
    const row = page.locator("table tbody tr").first();
    expect(await row.textContent()).toContain(versions.data.versions[0]?.contentHash);
    expect(await row.textContent()).toContain("finance-approver → finance-approver");
    await audit(page, "process map");
    await page.close();
  });

  it("an operator imports, binds and publishes a generated PROCESS.md; its map shows every step and route it has", async () => {
    const seed = Math.floor(Math.random() * 1_000_000);
    const generated = generateProcess("gen-map", seed);
    const parsed = parseProcess(generated.source, { folderName: "gen-map" });
    expect(parsed.ok, `seed ${seed}`).toBe(true);
    const page = await tab();
    await signIn(page, await token({ kind: "person", id: "olga@example.com", operator: true }));
    await page.goto(`${base}/ui/#/operate`);
    await heading(page, "Operators");
    await page.getByLabel("PROCESS.md", { exact: true }).fill(generated.source);
    await page.getByLabel("Folder name (optional)").fill("gen-map");
    await page.getByRole("button", { name: "Import" }).click();
    for (const role of generated.roles) await page.getByLabel(`Group for the role ${role}`).fill(`g-${role}`);
    await page.getByRole("button", { name: "Bind and publish" }).click();
    await page.getByRole("link", { name: /^gen-map v\d+$/ }).click();
    await heading(page, "gen-map");
    const svg = page.locator("svg.map-svg");
    await svg.waitFor({ timeout: WAIT });
    const context = `seed ${seed}:\n${generated.source}`;
    for (const [i, stepId] of generated.steps.entries()) {
      const outcome = generated.outcomes[i - (generated.steps.length - generated.outcomes.length)];
      if (stepId.startsWith("end_")) {
        expect(await svg.locator(`g.end-node[data-step="${stepId}"]`).textContent(), context).toBe(
          `End: ${outcome}`,
        );
      } else expect(await svg.locator(`g.card-node[data-step="${stepId}"]`).count(), context).toBe(1);
    }
    const decisions = new Set(generated.routes.filter((r) => r.kind === "route").map((r) => r.from));
    expect(await svg.locator("polygon.decision-node").count(), context).toBe(decisions.size);
    for (const r of generated.routes) {
      const from = r.kind === "route" ? `${r.from}.decision` : r.from;
      const edge = svg.locator(
        `g.edge-${r.kind === "next" ? "flow" : r.kind}[data-from="${from}"][data-to="${r.to}"]`,
      );
      const kind =
        (await edge.count()) === 0
          ? svg.locator(`g.edge-approved[data-from="${from}"][data-to="${r.to}"]`)
          : edge;
      expect(await kind.count(), `${r.from} → ${r.to} (${r.kind}), ${context}`).toBe(1);
      // A label wraps onto several <text> lines: compare without white space.
      if (r.when)
        expect((await kind.textContent())?.replace(/\s+/g, ""), context).toContain(
          r.when.replace(/\s+/g, ""),
        );
    }
    const lanes = await svg.locator("g.lane").evaluateAll((gs) => gs.map((g) => g.getAttribute("data-lane")));
    const expected = ["Agent", ...generated.roles.map((r) => r.charAt(0).toUpperCase() + r.slice(1))];
    expect(lanes.sort(), context).toEqual(expected.sort());
    await audit(page, "generated process map");
    await page.close();
  });

  it("reads at 200% zoom and on a phone, light and dark, with no serious accessibility violation", async () => {
    const runId = await expenseAtApproval();
    const bearer = await token({ kind: "person", id: "mia@example.com", groups: ["manager"] });
    for (const [label, viewport, scheme] of [
      ["200% zoom", { width: 640, height: 450 }, "light"],
      ["phone, dark", { width: 390, height: 844 }, "dark"],
    ] as const) {
      const page = await tab({ viewport, scheme });
      await signIn(page, bearer);
      for (const path of ["", `work/${runId}`, `runs/${runId}`]) {
        if (path.startsWith("work/")) await openInboxItem(page, runId);
        else await page.goto(`${base}/ui/#/${path}`);
        // Each page as a person sees it once loaded: the inbox's items, the decision, the map.
        const loaded = path.startsWith("runs/")
          ? page.locator("svg.map-svg")
          : path.startsWith("work/")
            ? page.getByRole("button", { name: "Approve" })
            : page.locator("li.inbox-item", { hasText: runId });
        await loaded.waitFor({ timeout: WAIT });
        // Reflow: the page itself never scrolls sideways (a wide map scrolls inside its own region).
        const overflow = await page.evaluate(
          "document.documentElement.scrollWidth - document.documentElement.clientWidth",
        );
        expect(overflow, `${label} ${path || "inbox"}`).toBeLessThanOrEqual(0);
        await audit(page, `${path.split("/")[0] || "inbox"} (${label})`);
      }
      await page.close();
    }
  });

  it("made no request to any other host and met no Content-Security-Policy violation", () => {
    expect(audited.length).toBeGreaterThanOrEqual(10);
    const elsewhere = requests.filter((u) => !u.startsWith(`${base}/`) && !u.startsWith("data:"));
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
  });
});
