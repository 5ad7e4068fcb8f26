// The admin API (`/api`): what no tool reads (versions, journals), and import, bind and publish for operators.
import type { ToolResult } from "@baton/protocol";
import { SignedOut } from "./mcp.ts";

/**
 * Sends one admin API request with the person's token and returns its `{ ok, data | error }`. A 401 is
 * {@link SignedOut}, saying why the server refused the token; a network failure is answered as `retry`.
 */
export async function admin<T>(
  token: string,
  method: "GET" | "POST" | "PUT",
  path: string,
  body?: unknown,
): Promise<ToolResult<T>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (error) {
    return { ok: false, error: { code: "retry", message: `could not reach the server: ${String(error)}` } };
  }
  if (response.status === 401) {
    // RFC 6750: the server says why in error_description (expired, another audience, …).
    const refusal = (await response.json().catch(() => null)) as { error_description?: unknown } | null;
    const why = typeof refusal?.error_description === "string" ? refusal.error_description : null;
    throw new SignedOut(why ?? "the server refused the token");
  }
  try {
    return (await response.json()) as ToolResult<T>;
  } catch {
    return { ok: false, error: { code: "retry", message: `the server answered ${response.status}` } };
  }
}
