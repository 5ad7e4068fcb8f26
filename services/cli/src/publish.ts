import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { decodeProcessFile, formatIssue } from "@baton/process";
import { adminCall } from "./admin-api.ts";

/** The outcome of `baton publish`. */
export interface PublishOutcome {
  name: string;
  version: number;
  contentHash: string;
  unchanged: boolean;
}

/**
 * `baton publish <folder>` (§7): import the folder's PROCESS.md as a draft, bind roles, publish.
 * `baseUrl` is the server's base URL (without `/mcp`).
 */
export async function publishFolder(
  folder: string,
  bindings: Record<string, string>,
  baseUrl: string,
  token: string,
): Promise<PublishOutcome> {
  const dir = resolve(folder);
  const file = join(dir, "PROCESS.md");
  if (!existsSync(file)) throw new Error(`${file} does not exist; pass the process folder`);
  const decoded = decodeProcessFile(readFileSync(file));
  if (!decoded.ok) throw new Error(decoded.issues.map((i) => formatIssue(file, i)).join("\n"));
  return publishSource({ folderName: basename(dir), source: decoded.text }, bindings, baseUrl, token);
}

/**
 * Imports one PROCESS.md text as a draft of the folder `folderName` (§7: the folder's name must equal
 * the process `name`), binds its roles and publishes it, over the admin API at `baseUrl` (without
 * `/mcp`) as the operator `token`. Throws the server's refusal (`ApiError`) with every issue.
 */
export async function publishSource(
  text: { folderName: string; source: string },
  bindings: Record<string, string>,
  baseUrl: string,
  token: string,
): Promise<PublishOutcome> {
  const target = { baseUrl, token };
  const draft = await adminCall<{ draftId: string; roles: string[]; requires: { systems: string[] } | null }>(
    target,
    { method: "POST", path: "/api/processes", body: text },
  );
  if (Object.keys(bindings).length > 0)
    await adminCall(target, {
      method: "PUT",
      path: `/api/drafts/${draft.draftId}/bindings`,
      body: { bindings },
    });
  return adminCall<PublishOutcome>(target, { method: "POST", path: `/api/drafts/${draft.draftId}/publish` });
}
