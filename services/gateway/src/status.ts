// The HTTP status each protocol error code is answered with by the admin API.
import type { ErrorCode } from "@baton/protocol";

/** The HTTP status of an admin API answer refused with each error code (§4.3). */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid: 400,
  not_accepted: 422,
  stale: 409,
  conflict: 409,
  forbidden: 403,
  not_found: 404,
  retry: 503,
};
