import { randomId } from "@baton/auth";
import {
  type Bus,
  CONTRACTS,
  type Envelope,
  type HandlerReply,
  type RegistryCall,
  type Subscription,
  serve,
} from "@baton/bus";
import type { Clock } from "@baton/clock";
import { type Db, drafts, processVersions } from "@baton/db";
import type { Logger } from "@baton/kit";
import { formatIssue, type Process, parseProcess } from "@baton/process";
import {
  type DraftView,
  fail,
  type Identity,
  ok,
  type Page,
  PROFILES,
  type ProcessSummary,
  type Published,
  protocolError,
  type ToolResult,
} from "@baton/protocol";
import { and, asc, desc, eq, gt, sql } from "drizzle-orm";
import { serveVersionReads } from "./versions.ts";

/** What the registry needs. */
export interface RegistryDeps {
  db: Db;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** What this server offers (§4.2, §8): a process needing anything else is refused at publication. */
  offers: { tools: readonly string[]; profiles: readonly string[] };
}

export type { DraftView, Published };

const GROUP = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/;

/**
 * The registry (§6 rule 5, §7): imports PROCESS.md into drafts, binds roles to groups, publishes
 * immutable numbered versions with their content hash, and answers `list_processes`.
 *
 * Re-publishing content identical to the latest version (same content hash) with the same bindings
 * creates nothing and returns that version with `unchanged: true`; any difference in the file or the
 * bindings creates the next version. A published version is never updated.
 */
export function createRegistry(deps: RegistryDeps) {
  const { db, bus, clock, log, offers } = deps;
  let sub: Subscription | null = null;
  let reads: Subscription | null = null;

  function parse(source: string, folderName: string | null) {
    return parseProcess(source, folderName === null ? {} : { folderName });
  }

  function refuseOffer(process: Process): string[] {
    const issues: string[] = [];
    for (const profile of process.profiles) {
      if (!offers.profiles.includes(profile)) {
        // check.md: offered only while an evaluator is configured; say what would offer it.
        const why = profile === PROFILES.check ? ": no evaluator is configured (BATON_CHECK_URL)" : "";
        issues.push(
          `PROCESS.md: needs the ${profile} profile, which this server does not offer (describe.profiles)${why}`,
        );
      }
    }
    for (const tool of process.tools) {
      if (!offers.tools.includes(tool)) {
        issues.push(`PROCESS.md: needs the ${tool} tool, which this server does not offer (describe.tools)`);
      }
    }
    return issues;
  }

  function draftView(id: string, process: Process, bindings: Record<string, string>): DraftView {
    return {
      draftId: id,
      name: process.name,
      description: process.description,
      roles: process.roles,
      bindings,
      unbound: process.roles.filter((r) => bindings[r] === undefined),
      requires: process.requires,
      contentHash: process.contentHash,
    };
  }

  async function loadDraft(who: Identity, draftId: string) {
    const rows = await db
      .select()
      .from(drafts)
      .where(and(eq(drafts.id, draftId), eq(drafts.org, who.org)));
    return rows[0] ?? null;
  }

  async function importDraft(
    who: Identity,
    folderName: string | null,
    source: string,
  ): Promise<ToolResult<DraftView>> {
    const parsed = parse(source, folderName);
    if (!parsed.ok) {
      return fail(
        protocolError(
          "invalid",
          `PROCESS.md has ${parsed.issues.length} problem${parsed.issues.length === 1 ? "" : "s"}`,
          parsed.issues.map((i) => formatIssue("PROCESS.md", i)),
        ),
      );
    }
    const id = randomId("d_");
    await db.insert(drafts).values({
      id,
      org: who.org,
      name: parsed.process.name,
      folderName,
      source,
      bindings: {},
      createdBy: who.id,
      createdAt: new Date(clock.now()),
    });
    return ok(draftView(id, parsed.process, {}));
  }

  /** Binds roles to groups; `bindings` as the operator sent them (a group id that is not text is refused). */
  async function bind(
    who: Identity,
    draftId: string,
    bindings: Record<string, unknown>,
  ): Promise<ToolResult<DraftView>> {
    const draft = await loadDraft(who, draftId);
    if (!draft) return fail(protocolError("not_found", `no draft ${draftId} in your organization`));
    const parsed = parse(draft.source, draft.folderName);
    if (!parsed.ok) throw new Error(`draft ${draftId} no longer parses`);
    const issues: string[] = [];
    const groups: Record<string, string> = {};
    for (const [role, group] of Object.entries(bindings)) {
      if (!parsed.process.roles.includes(role)) {
        issues.push(
          `bindings.${role}: ${parsed.process.name} has no role ${role}; its roles are ${parsed.process.roles.join(", ") || "none"}`,
        );
      }
      if (typeof group !== "string" || !GROUP.test(group))
        issues.push(`bindings.${role}: group ids are 1–128 characters of letters, digits and ._:@-`);
      else groups[role] = group;
    }
    if (issues.length > 0) return fail(protocolError("invalid", "bindings refused", issues));
    const merged = { ...draft.bindings, ...groups };
    await db.update(drafts).set({ bindings: merged }).where(eq(drafts.id, draftId));
    return ok(draftView(draftId, parsed.process, merged));
  }

  async function publish(who: Identity, draftId: string): Promise<ToolResult<Published>> {
    const draft = await loadDraft(who, draftId);
    if (!draft) return fail(protocolError("not_found", `no draft ${draftId} in your organization`));
    const parsed = parse(draft.source, draft.folderName);
    if (!parsed.ok) throw new Error(`draft ${draftId} no longer parses`);
    const process = parsed.process;
    const issues = refuseOffer(process);
    const unbound = process.roles.filter((r) => draft.bindings[r] === undefined);
    for (const role of unbound)
      issues.push(
        `bindings.${role}: bind role ${role} to a group before publishing (baton publish … --bind ${role}=<group>)`,
      );
    if (issues.length > 0)
      return fail(protocolError("invalid", `${process.name} cannot be published`, issues));
    const bindings = Object.fromEntries(process.roles.map((r) => [r, draft.bindings[r] as string]));

    for (let attempt = 0; attempt < 5; attempt++) {
      const latest = (
        await db
          .select({
            version: processVersions.version,
            contentHash: processVersions.contentHash,
            bindings: processVersions.bindings,
          })
          .from(processVersions)
          .where(and(eq(processVersions.org, who.org), eq(processVersions.name, process.name)))
          .orderBy(desc(processVersions.version))
          .limit(1)
      )[0];
      if (latest && latest.contentHash === process.contentHash && sameBindings(latest.bindings, bindings)) {
        return ok({
          name: process.name,
          version: latest.version,
          contentHash: latest.contentHash,
          unchanged: true,
        });
      }
      const version = (latest?.version ?? 0) + 1;
      const inserted = await db
        .insert(processVersions)
        .values({
          org: who.org,
          name: process.name,
          version,
          contentHash: process.contentHash,
          source: draft.source,
          definition: process,
          bindings,
          publishedBy: who.id,
          publishedAt: new Date(clock.now()),
        })
        .onConflictDoNothing()
        .returning({ version: processVersions.version });
      if (inserted.length > 0) {
        log.info({ org: who.org, process: process.name, version }, "published");
        return ok({ name: process.name, version, contentHash: process.contentHash, unchanged: false });
      }
      // Another publication took this number first; read the latest again.
    }
    return fail(protocolError("retry", "publication raced with others; try again"));
  }

  async function getDraft(who: Identity, draftId: string): Promise<ToolResult<DraftView>> {
    const draft = await loadDraft(who, draftId);
    if (!draft) return fail(protocolError("not_found", `no draft ${draftId} in your organization`));
    const parsed = parse(draft.source, draft.folderName);
    if (!parsed.ok) throw new Error(`draft ${draftId} no longer parses`);
    return ok(draftView(draftId, parsed.process, draft.bindings));
  }

  /** `list_processes` (tools.md): the latest published version of each process, by name, paged. */
  async function listProcesses(
    who: Identity,
    cursor: string | undefined,
  ): Promise<ToolResult<Page<ProcessSummary>>> {
    let after: string | null = null;
    if (cursor !== undefined) {
      try {
        const key = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
        if (typeof key !== "string") throw new Error("bad cursor");
        after = key;
      } catch {
        return fail(
          protocolError("invalid", "cursor was not issued by this server", [
            "cursor: pass nextCursor unchanged",
          ]),
        );
      }
    }
    const limit = 20;
    const rows = await db
      .selectDistinctOn([processVersions.name], {
        name: processVersions.name,
        version: processVersions.version,
        definition: processVersions.definition,
      })
      .from(processVersions)
      .where(
        and(eq(processVersions.org, who.org), after === null ? sql`true` : gt(processVersions.name, after)),
      )
      .orderBy(asc(processVersions.name), desc(processVersions.version))
      .limit(limit + 1);
    const page = rows.slice(0, limit);
    const items = page.map((r): ProcessSummary => {
      const p = r.definition as Process;
      const item: ProcessSummary = {
        name: p.name,
        description: p.description,
        version: r.version,
        inputs: p.inputs,
      };
      if (p.requires) item.requires = p.requires;
      return item;
    });
    const last = page[page.length - 1];
    return ok({
      items,
      nextCursor:
        rows.length > limit && last
          ? Buffer.from(JSON.stringify(last.name), "utf8").toString("base64url")
          : null,
    });
  }

  async function handle(env: Envelope<RegistryCall>): Promise<HandlerReply<typeof CONTRACTS.registry>> {
    const who = env.identity;
    if (!who) throw new Error("registry calls carry the caller's identity");
    const call = env.payload;
    if (call.op !== "list_processes" && !who.operator) {
      return fail(
        protocolError("forbidden", "importing, binding and publishing processes needs an operator"),
      );
    }
    switch (call.op) {
      case "list_processes":
        return listProcesses(who, call.args.cursor);
      case "import":
        return importDraft(who, call.folderName, call.source);
      case "get_draft":
        return getDraft(who, call.draftId);
      case "bind":
        return bind(who, call.draftId, call.bindings);
      case "publish":
        return publish(who, call.draftId);
      default: {
        const unreachable: never = call;
        throw new Error(`unknown registry call ${JSON.stringify(unreachable)}`);
      }
    }
  }

  return {
    handle,
    async start() {
      sub = serve(bus, CONTRACTS.registry, (_call, env) => handle(env), { log });
      reads = serveVersionReads(bus, db, log);
      log.info({}, "registry started");
    },
    async stop() {
      await sub?.stop();
      await reads?.stop();
    },
  };
}

function sameBindings(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}
