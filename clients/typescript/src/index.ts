/**
 * TypeScript client of the factledger HTTP API.
 *
 * ```ts
 * import { FactledgerClient } from "@factledger/client";
 *
 * const fl = new FactledgerClient("http://localhost:8000", { token });
 * const answer = await fl.recall("which supplier do they use?");
 * ```
 *
 * Its calls and types follow the API's OpenAPI document (`src/generated/api.ts`, made by
 * `npm run generate`); auth, retries and the event stream are written by hand.
 */

export * from "./client.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./models.js";
export * from "./positions.js";
export * from "./retry.js";
export type { components, operations, paths } from "./generated/api.js";
