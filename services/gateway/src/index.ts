export { type AdminReadDeps, registerAdminReads } from "./admin-reads.ts";
export { MAX_ARGUMENT_DEPTH, type ParsedBody, parseBody } from "./body.ts";
export { GatewayConfigSchema, type GatewayEnv, gatewaySettings } from "./config.ts";
export {
  CONSOLE_CSP,
  CONSOLE_ENV,
  type ConsoleEnv,
  type ConsoleOptions,
  type ConsoleSignIn,
  consoleCsp,
  consoleEnvProblems,
  consoleSignInFromEnv,
  DEFAULT_CONSOLE_DIR,
  issuerConnectSources,
  registerConsole,
} from "./console.ts";
export { createGateway, type GatewayOptions } from "./gateway.ts";
export { closeGracefully, createHttpServer, type HttpDeps, type HttpSettings } from "./http.ts";
export {
  MAX_ADMIN_BODY_BYTES,
  MAX_EVIDENCE_ITEMS,
  MAX_FIELDS,
  MAX_ID_CHARS,
  MAX_KEY_CHARS,
  maxCallBytes,
} from "./limits.ts";
export { type CallContext, McpEndpoint, type ToolHandler } from "./mcp.ts";
export { allowedOrigins, ORIGIN_ENV } from "./origin.ts";
export {
  createRateLimiter,
  DEFAULT_RATE_LIMITS,
  type Limited,
  RATE_LIMIT_ENV,
  type RateLimiter,
  type RateLimits,
  rateLimitsFromEnv,
} from "./rate-limit.ts";
export { type GatewayInfra, type GatewaySettings, type RunningGateway, startGateway } from "./start.ts";
export { createToolRouter, type ToolDeps, type ToolSettings } from "./tools.ts";
