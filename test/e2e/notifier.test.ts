import { execFile } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import type { McpSession } from "@baton/conformance/mcp";
import { decideStep, doStep } from "@baton/conformance/walk";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Deployment, freePort, REPO, startEmbedded } from "../support/deploy.ts";
import { until } from "../support/processes.ts";

/**
 * Issue #11's end-to-end "Done when", against `baton dev --clock manual` with a real HTTP receiver
 * and a real SMTP server (`smtp-server`) started here: the expense approval produces one signed
 * `work_item.opened` webhook that the receiver verifies with the `standardwebhooks` library and the
 * secret the CLI printed; a receiver answering 500 twice and then 200 gets exactly three attempts and
 * one success as the clock moves; advancing the clock past `due` produces one `step.overdue` webhook
 * and the mails to the assignee and the operators; a test run produces no request and no mail, only
 * suppressed records (§3 test mode).
 */

const run = promisify(execFile);
const CLI = join(REPO, "services/cli/src/main.ts");

// biome-ignore lint/suspicious/noExplicitAny: tests read reply shapes dynamically
type Data = any;

interface Request {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("notifier — baton dev --clock manual, a real receiver and a real SMTP server (issue #11)", () => {
  let baton: Deployment;
  let http: Server;
  let smtp: SMTPServer;
  let base: string;
  let operatorToken: string;
  let agent: McpSession;
  let manager: McpSession;
  let employee: McpSession;
  const requests: Request[] = [];
  const mails: ParsedMail[] = [];
  /** Answers of the flaky receiver (`/flaky`), in order; 200 once used up. */
  const flakyAnswers = [500, 500];
  let signed: { id: string; secret: string };
  let flaky: string;
  let liveRun: string;

  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, ["--import", "tsx", CLI, ...args, "--data-dir", baton.dataDir], {
        cwd: REPO,
      })
    ).stdout;
  const api = async (path: string) => {
    const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${operatorToken}` } });
    const body = (await response.json()) as Data;
    expect(body.ok, JSON.stringify(body)).toBe(true);
    return body.data;
  };
  const deliveriesOf = async (runId: string) =>
    (await api(`/api/runs/${runId}/deliveries`)).deliveries as Data[];
  const received = (path: string, runId: string) =>
    requests.filter((r) => r.path === path && JSON.parse(r.body).data.runId === runId);

  beforeAll(async () => {
    http = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        requests.push({ path: req.url ?? "", headers: req.headers, body });
        res.writeHead(req.url === "/flaky" ? (flakyAnswers.shift() ?? 200) : 204).end();
      });
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const httpPort = (http.address() as { port: number }).port;
    const smtpPort = await freePort();
    smtp = new SMTPServer({
      disabledCommands: ["STARTTLS", "AUTH"],
      authOptional: true,
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream).then(
          (mail) => {
            mails.push(mail);
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve));
    baton = await startEmbedded({
      clock: "manual",
      args: ["--smtp", `smtp://127.0.0.1:${smtpPort}`],
      env: { BATON_OPERATORS_EMAIL: "ops-team@example.com" },
    });
    base = baton.url.replace(/\/mcp$/, "");
    operatorToken = await baton.token({ kind: "person", id: "ops@example.com", operator: true });
    agent = await baton.session({ kind: "agent", id: "a_checker" });
    manager = await baton.session({ kind: "person", id: "mia@example.com", groups: ["manager"] });
    employee = await baton.session({ kind: "person", id: "sam@example.com" });

    // The CLI prints `<id> <secret>`, or exactly { id, secret } with --json.
    const json = JSON.parse(
      await cli(
        "webhook",
        "add",
        `http://127.0.0.1:${httpPort}/signed`,
        "--events",
        "work_item.opened,step.overdue",
        "--json",
      ),
    );
    expect(Object.keys(json).sort()).toEqual(["id", "secret"]);
    signed = json;
    const line = (
      await cli("webhook", "add", `http://127.0.0.1:${httpPort}/flaky`, "--events", "work_item.opened")
    ).trim();
    expect(line).toMatch(/^wh_[a-z2-7]{20} whsec_\S+$/);
    flaky = line.split(" ")[0] as string;
    expect((await cli("group", "email", "manager", "managers@example.com")).trim()).toBe(
      "manager managers@example.com",
    );
  }, 240_000);

  afterAll(async () => {
    await Promise.all([agent?.close(), manager?.close(), employee?.close()]);
    await baton?.stop();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
  });

  const startExpense = async (mode: "live" | "test") => {
    const started = await employee.ok("start_run", {
      process: "expense-approval",
      inputs: { employee: "sam@example.com", amount: 84.5, receiptUrl: "https://receipts.example.com/r/1" },
      requestId: crypto.randomUUID(),
      ...(mode === "test" ? { mode } : {}),
    });
    const runId = started.run.id as string;
    await doStep(agent, runId, "check_claim", {
      output: { matches: true, category: "travel" },
      evidence: [{ kind: "link", ref: "https://receipts.example.com/r/1" }],
      next: "approve",
      reason: "The receipt matches and the policy allows it.",
    });
    return runId;
  };

  it("the expense approval produces one signed work_item.opened webhook, verified with the CLI's secret, and mails the manager group", async () => {
    liveRun = await startExpense("live");
    await until(() => received("/signed", liveRun).length === 1, "the signed work_item.opened webhook");
    const [request] = received("/signed", liveRun) as [Request];
    const payload = new Webhook(signed.secret).verify(
      request.body,
      request.headers as Record<string, string>,
    ) as Data;
    expect(payload).toEqual({
      type: "work_item.opened",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: {
        org: "default",
        runId: liveRun,
        process: "expense-approval",
        version: 1,
        mode: "live",
        stepId: "approve",
        stepKind: "approve",
        workItemId: expect.stringMatching(/^w_/),
        assignee: { group: "manager" },
        due: expect.stringMatching(/Z$/),
        overdue: false,
        link: `${base}/ui/#/runs/${liveRun}`,
      },
    });
    expect(request.headers["webhook-id"]).toMatch(/^msg_\d+_wh_/);
    // Never run data, evidence or tokens.
    expect(request.body).not.toContain("receipts.example.com");
    await until(() => mails.some((m) => m.subject?.includes("Approval needed")), "the manager group's mail");
    const mail = mails.find((m) => m.subject?.includes("Approval needed")) as ParsedMail;
    expect((mail.to as { text: string }).text).toBe("managers@example.com");
    expect(mail.text).toContain("What to do (step approve):");
    expect(mail.text).toContain("Approve when the receipt matches and the expense is within policy.");
    expect(mail.text).toMatch(/By when: \d{4}-\d\d-\d\dT/);
    expect(mail.text).toContain(`${base}/ui/#/runs/${liveRun}`);
  });

  it("a receiver answering 500 twice and then 200 gets exactly three attempts and one success, as the clock moves", async () => {
    const attemptsOf = async () =>
      ((await api(`/api/webhooks/${flaky}/deliveries`)).deliveries as Data[]).find((d) => d.runId === liveRun)
        ?.attempts.length ?? 0;
    await until(async () => (await attemptsOf()) === 1, "the first attempt is recorded");
    // The back-off follows the injected clock: nothing is sent again until it moves.
    await cli("clock", "advance", "1m");
    await until(async () => (await attemptsOf()) === 2, "the second attempt is recorded");
    await cli("clock", "advance", "1m");
    await until(async () => (await attemptsOf()) === 3, "the third attempt is recorded");
    const listed = JSON.parse(await cli("webhook", "deliveries", flaky, "--json")).deliveries as Data[];
    const d = listed.find((x) => x.runId === liveRun);
    expect(d).toMatchObject({ type: "work_item.opened", state: "delivered", channel: "webhook" });
    expect(d.attempts.map((a: Data) => [a.n, a.status, a.responseCode])).toEqual([
      [1, "failed", 500],
      [2, "failed", 500],
      [3, "ok", 200],
    ]);
    expect(d.attempts[0].nextRetryAt).not.toBeNull();
    const hits = received("/flaky", liveRun);
    expect(hits).toHaveLength(3);
    expect(new Set(hits.map((h) => h.headers["webhook-id"]))).toEqual(new Set([d.webhookId]));
    const text = await cli("webhook", "deliveries", flaky);
    expect(text).toMatch(new RegExp(`^${d.id} work_item.opened ${liveRun} delivered$`, "m"));
    expect(text).toMatch(/^ {2}#1 \S+ failed 500 answered 500 next retry \S+$/m);
    expect(text).toMatch(/^ {2}#3 \S+ ok 200$/m);
  });

  it("advancing the clock past due produces one step.overdue webhook and the mails to the assignee and the operators (§2.2 due)", async () => {
    await cli("clock", "advance", "2d");
    await until(
      () => requests.some((r) => r.path === "/signed" && JSON.parse(r.body).type === "step.overdue"),
      "the step.overdue webhook",
    );
    const overdue = received("/signed", liveRun).filter((r) => JSON.parse(r.body).type === "step.overdue");
    expect(overdue).toHaveLength(1);
    const payload = new Webhook(signed.secret).verify(
      (overdue[0] as Request).body,
      (overdue[0] as Request).headers as Record<string, string>,
    ) as Data;
    expect(payload.data).toMatchObject({
      runId: liveRun,
      stepId: "approve",
      overdue: true,
      assignee: { group: "manager" },
    });
    await until(
      () => mails.filter((m) => m.subject?.startsWith("[Baton] Overdue")).length === 2,
      "two overdue mails",
    );
    const to = mails
      .filter((m) => m.subject?.startsWith("[Baton] Overdue"))
      .map((m) => (m.to as { text: string }).text)
      .sort();
    expect(to).toEqual(["managers@example.com", "ops-team@example.com"]);
    const deliveries = await deliveriesOf(liveRun);
    expect(
      deliveries
        .filter((d) => d.channel === "mail")
        .map((d) => [d.type, d.to, d.state])
        .sort(),
    ).toEqual([
      ["step.overdue", "managers@example.com", "delivered"],
      ["step.overdue", "ops-team@example.com", "delivered"],
      ["work_item.opened", "managers@example.com", "delivered"],
    ]);
    // The run can still be decided; the approval ends it.
    await decideStep(manager, liveRun, "approve", { decision: "approved" });
  });

  it("a test run produces no request and no mail, only suppressed records (§3 test mode)", async () => {
    const mailsBefore = mails.length;
    const testRun = await startExpense("test");
    await until(
      async () => (await deliveriesOf(testRun)).filter((d) => d.type === "work_item.opened").length === 3,
      "the test run's work_item.opened records",
    );
    const records = await deliveriesOf(testRun);
    expect(records.length).toBeGreaterThanOrEqual(3);
    for (const d of records) expect(d).toMatchObject({ state: "suppressed", attempts: [] });
    expect(
      records
        .filter((d) => d.type === "work_item.opened")
        .map((d) => d.to)
        .sort(),
    ).toEqual(["managers@example.com", flaky, signed.id].sort());
    const shown = JSON.parse(await cli("webhook", "deliveries", signed.id, "--json")).deliveries as Data[];
    expect(shown.find((d) => d.runId === testRun)).toMatchObject({
      state: "suppressed",
      reason: expect.stringMatching(/^a test run \(§3 test mode\)/),
    });
    expect(requests.filter((r) => JSON.parse(r.body).data.runId === testRun)).toEqual([]);
    expect(mails.length).toBe(mailsBefore);
  });

  it("refuses bad input with a clear error: not a URL, an unknown event type, another organization's subscription (not_found)", async () => {
    const refused = async (...args: string[]) => {
      try {
        await cli(...args);
      } catch (error) {
        const e = error as { code: number; stderr: string };
        expect(e.code).toBe(1);
        return e.stderr;
      }
      throw new Error(`baton ${args.join(" ")} was not refused`);
    };
    expect(await refused("webhook", "add", "receiver.example.com/hook")).toBe(
      'baton: the webhook cannot be made\n  url: "receiver.example.com/hook" is not a URL; give an absolute https:// URL\n',
    );
    expect(
      await refused("webhook", "add", "http://127.0.0.1/hook", "--events", "step.ready,run.exploded"),
    ).toMatch(/events\[1\]: unknown event type "run.exploded"; one of run.started, run.ended, step.ready/);
    expect(await refused("webhook", "remove", signed.id, "--org", "elsewhere")).toBe(
      `baton: no webhook ${signed.id} in this organization\n`,
    );
    const listed = await cli("webhook", "list");
    expect(listed).toMatch(
      new RegExp(
        `^${signed.id} active http://127\\.0\\.0\\.1:\\d+/signed events=work_item\\.opened,step\\.overdue$`,
        "m",
      ),
    );
    expect(listed).not.toContain(signed.secret);
  });
});
