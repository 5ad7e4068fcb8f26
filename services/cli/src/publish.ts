import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { decodeProcessFile, formatIssue } from "@baton/process";

/** The outcome of `baton publish`. */
export interface PublishOutcome {
  name: string;
  version: number;
  contentHash: string;
  unchanged: boolean;
}

async function api(base: string, token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json: { ok?: boolean; data?: unknown; error?: { code: string; message: string; issues?: string[] } } =
    {};
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`);
  }
  if (response.status === 401)
    throw new Error(
      `the server refused the token (${text}); mint one with baton token person <email> --operator`,
    );
  if (!json.ok) {
    const issues = json.error?.issues?.map((i) => `  ${i}`).join("\n") ?? "";
    throw new Error(`${json.error?.message ?? `HTTP ${response.status}`}${issues ? `\n${issues}` : ""}`);
  }
  return json.data;
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
  const draft = (await api(baseUrl, token, "POST", "/api/processes", {
    folderName: basename(dir),
    source: decoded.text,
  })) as { draftId: string; roles: string[]; requires: { systems: string[] } | null };
  if (Object.keys(bindings).length > 0)
    await api(baseUrl, token, "PUT", `/api/drafts/${draft.draftId}/bindings`, { bindings });
  return (await api(baseUrl, token, "POST", `/api/drafts/${draft.draftId}/publish`)) as PublishOutcome;
}
