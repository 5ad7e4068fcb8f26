/**
 * The admin HTTP API (`/api`) as the CLI calls it: `baton publish`, `baton clock`, `baton webhook` and `baton group`.
 */

interface ApiReply<T> {
  ok?: boolean;
  data?: T;
  error?: { code: string; message: string; issues?: string[] };
}

/** The admin API refused a call: `code` is the protocol error code (§4.3), `status` the HTTP status. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Where the admin API is: the server's base URL (without `/mcp`) and an operator's bearer token. */
export interface AdminTarget {
  baseUrl: string;
  token: string;
}

/** One admin API request: `body` is sent as JSON; `timeoutMs` (default 60 s) guards a hung connection. */
export interface AdminRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  body?: unknown;
  timeoutMs?: number;
}

/**
 * One call to the admin API at `target`; returns `data`, or throws {@link ApiError}: the server's
 * refusal with its protocol code and every issue, `unauthorized` for a refused token, `unreachable`
 * when nothing answers at the base URL (nothing was sent, so nothing happened).
 */
export async function adminCall<T>(target: AdminTarget, request: AdminRequest) {
  const { baseUrl, token } = target;
  const { method, path, body, timeoutMs = 60_000 } = request;
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      signal: AbortSignal.timeout(timeoutMs),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (cause?.code === "ECONNREFUSED") {
      throw new ApiError(
        "unreachable",
        0,
        `nothing answers at ${baseUrl}: start the server (pnpm baton dev), or pass --url with its address`,
      );
    }
    throw error;
  }
  const text = await response.text();
  let json: ApiReply<T>;
  try {
    json = JSON.parse(text) as ApiReply<T>;
  } catch {
    throw new ApiError(
      response.status >= 500 ? "retry" : "invalid",
      response.status,
      `${method} ${path}: HTTP ${response.status} ${text.slice(0, 200)}`,
    );
  }
  if (response.status === 401)
    throw new ApiError(
      "unauthorized",
      401,
      `the server refused the token (${text}); mint one with baton token person <email> --operator`,
    );
  if (!json.ok || json.data === undefined) {
    const issues = json.error?.issues?.map((i) => `  ${i}`).join("\n") ?? "";
    throw new ApiError(
      json.error?.code ?? (response.status >= 500 ? "retry" : "invalid"),
      response.status,
      `${json.error?.message ?? `HTTP ${response.status}`}${issues ? `\n${issues}` : ""}`,
    );
  }
  return json.data;
}
