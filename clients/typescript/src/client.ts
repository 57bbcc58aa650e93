/**
 * `FactledgerClient`: typed calls to the factledger HTTP API, with bearer auth and safe retries.
 *
 * Commands (register, append, end, propose, decide, forget) carry an `Idempotency-Key`, chosen
 * once per call (or by the caller) and sent again on every retry, so a retried command returns
 * the first result and never acts twice. Reads and session starts (idempotent by session id)
 * need none.
 */

import { randomUUID } from "node:crypto";

import { errorFor, TransportFailedError } from "./errors.js";
import { EventFollower, type FollowOptions } from "./events.js";
import type * as m from "./models.js";
import { laterPosition, POSITION_HEADER } from "./positions.js";
import { DEFAULT_RETRY, RETRY_STATUSES, retryAfterOf, type RetryPolicy, sleep, waitBeforeRetry } from "./retry.js";

/** `me`: the subject an agent token is bound to. */
export const ME = "me";
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
const USER_AGENT = "factledger-client-ts/1";

export interface ClientOptions {
  /** A bearer token (JWT) of the caller's platform. */
  token: string;
  /** Per try; a try that takes longer is abandoned and retried. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Another `fetch` (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
  /** A write position to start from (another client's `position`): reads never older. */
  position?: string;
}

/** One API operation: what to send, and whether it is a command (then it has a key). */
export interface Call {
  method: "GET" | "POST" | "DELETE";
  path: string;
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  idempotencyKey?: string;
}

export interface Keyed {
  /** The command's idempotency key; a fresh one per call when omitted. */
  idempotencyKey?: string;
}

export interface OnSubject {
  /** A subject id, or `me` (the default) for an agent token's own subject. */
  subject?: string;
}

function newKey(): string {
  return randomUUID().replaceAll("-", "");
}

function subjectPath(subject: string | undefined): string {
  return `/v1/subjects/${encodeURIComponent(subject ?? ME)}`;
}

function sessionPath(subject: string | undefined, sessionId: string): string {
  return `${subjectPath(subject)}/sessions/${encodeURIComponent(sessionId)}`;
}

function command(path: string, body: unknown, key: string | undefined): Call {
  return { method: "POST", path, body, idempotencyKey: key ?? newKey() };
}

function isTransportError(error: unknown): boolean {
  // fetch rejects with a TypeError when the connection fails, and a timeout aborts it.
  return error instanceof TypeError || (error instanceof DOMException && error.name === "TimeoutError");
}

async function shouldRetry(response: Response): Promise<boolean> {
  if (RETRY_STATUSES.has(response.status)) return true;
  if (response.status !== 409) return false;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => null);
  return typeof body === "object" && body !== null && (body as { error?: unknown }).error === "RequestInProgressError";
}

async function decode<T>(response: Response): Promise<T> {
  const body: unknown = await response.json().catch(() => null);
  if (response.ok) return body as T;
  throw errorFor(response.status, body);
}

export class FactledgerClient {
  readonly baseUrl: string;
  readonly retry: RetryPolicy;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly fetcher: typeof fetch;
  private latestPosition: string | undefined;

  constructor(baseUrl: string, options: ClientOptions) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.headers = { Authorization: `Bearer ${options.token}`, "User-Agent": USER_AGENT };
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetcher = options.fetch ?? fetch;
    this.latestPosition = options.position;
  }

  /**
   * The latest write position the service answered (`Factledger-Position`); sent with every
   * later call and stream connection. Hand it to another client (`position` in its options)
   * to carry read-your-writes across clients.
   */
  get position(): string | undefined {
    return this.latestPosition;
  }

  /** Sends one call, retrying as the policy says with the same idempotency key. */
  async send<T>(call: Call): Promise<T> {
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      let wait: number | null;
      try {
        const response = await this.fetcher(this.url(call.path, call.query), this.init(call));
        this.latestPosition = laterPosition(this.latestPosition, response.headers.get(POSITION_HEADER));
        if (!(await shouldRetry(response))) return await decode<T>(response);
        wait = waitBeforeRetry(this.retry, attempt, Date.now() - started, retryAfterOf(response));
        if (wait === null) return await decode<T>(response);
        await response.body?.cancel();
      } catch (error) {
        if (!isTransportError(error)) throw error;
        wait = waitBeforeRetry(this.retry, attempt, Date.now() - started);
        if (wait === null) throw new TransportFailedError(transportDetail(error));
      }
      await sleep(wait);
    }
  }

  /** The full URL of a path and query; repeated parameters from arrays. */
  url(path: string, query: Record<string, string | number | readonly string[] | undefined> = {}): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(one));
    }
    return url.toString();
  }

  /** Headers for a request of this client (auth, user agent, its latest position) plus `extra`. */
  requestHeaders(extra: Record<string, string> = {}): Record<string, string> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.latestPosition !== undefined) headers[POSITION_HEADER] = this.latestPosition;
    return { ...headers, ...extra };
  }

  get fetchFunction(): typeof fetch {
    return this.fetcher;
  }

  private init(call: Call): RequestInit {
    const headers = this.requestHeaders();
    if (call.idempotencyKey !== undefined) headers[IDEMPOTENCY_HEADER] = call.idempotencyKey;
    const init: RequestInit = { method: call.method, headers, signal: AbortSignal.timeout(this.timeoutMs) };
    if (call.body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(call.body);
    }
    return init;
  }

  // -- events -------------------------------------------------------------------------------

  /**
   * The tenant's events after the cursor `after` (none: from the start), as an endless async
   * iterable that reconnects and resumes by itself (`Last-Event-ID`); its `cursor` is the last
   * event's. Stop it with `break`, or with `signal`.
   */
  followEvents(options: FollowOptions = {}): EventFollower {
    return new EventFollower(this, options);
  }

  // -- subjects -----------------------------------------------------------------------------

  whoami(): Promise<m.WhoAmI> {
    return this.send({ method: "GET", path: "/v1/whoami" });
  }

  registerSubject(kind: string, externalRef: string, options: Keyed = {}): Promise<m.Subject> {
    return this.send(command("/v1/subjects", { kind, external_ref: externalRef }, options.idempotencyKey));
  }

  lookupSubject(kind: string, externalRef: string): Promise<m.Subject> {
    return this.send({ method: "GET", path: "/v1/subjects/lookup", query: { kind, external_ref: externalRef } });
  }

  getSubject(subject: string = ME): Promise<m.Subject> {
    return this.send({ method: "GET", path: subjectPath(subject) });
  }

  // -- sessions -----------------------------------------------------------------------------

  /** Starts a session; a retried start is a no-op (the caller's session id makes it so). */
  startSession(
    sessionId: string,
    channel: m.Channel,
    options: OnSubject & { startedAt?: string; conversationType?: string } = {},
  ): Promise<m.Session> {
    const body: Record<string, unknown> = { session_id: sessionId, channel };
    if (options.startedAt !== undefined) body.started_at = options.startedAt;
    if (options.conversationType !== undefined) body.conversation_type = options.conversationType;
    return this.send({ method: "POST", path: `${subjectPath(options.subject)}/sessions`, body });
  }

  /**
   * Appends a message. `messageId` (unique within the session) makes the append a no-op when
   * repeated, even by another process; without it, the idempotency key serves.
   *
   * An agent token appends the agent's lines; the subject's come from the channel that heard
   * them (a service token). The agent's line may ask about one pending change (`asks`, its
   * id from `context().to_confirm`): the subject's next line is judged as the answer, and a
   * yes confirms it, a no declines it, when the session ends. `confirms` / `declines` on the
   * subject's line state what the channel heard, and are refused (422) unless the line
   * answers the question about that change that way.
   */
  appendMessage(
    sessionId: string,
    role: m.Role,
    text: string,
    options: OnSubject &
      Keyed & {
        at?: string;
        flagged?: boolean;
        confirms?: string;
        declines?: string;
        asks?: string;
        messageId?: string;
      } = {},
  ): Promise<m.MessageOutcome> {
    const body: Record<string, unknown> = { role, text, flagged: options.flagged ?? false };
    if (options.at !== undefined) body.at = options.at;
    if (options.confirms !== undefined) body.confirms = options.confirms;
    if (options.declines !== undefined) body.declines = options.declines;
    if (options.asks !== undefined) body.asks = options.asks;
    if (options.messageId !== undefined) body.message_id = options.messageId;
    return this.send(command(`${sessionPath(options.subject, sessionId)}/messages`, body, options.idempotencyKey));
  }

  sessionMessages(sessionId: string, options: OnSubject & { last?: number } = {}): Promise<m.Transcript> {
    return this.send({
      method: "GET",
      path: `${sessionPath(options.subject, sessionId)}/messages`,
      query: { last: options.last },
    });
  }

  endSession(
    sessionId: string,
    options: OnSubject & Keyed & { summary?: Record<string, unknown>; proposals?: m.ProposalDraft[] } = {},
  ): Promise<m.EndedSession> {
    const body = { summary: options.summary ?? null, proposals: options.proposals ?? [] };
    return this.send(command(`${sessionPath(options.subject, sessionId)}/end`, body, options.idempotencyKey));
  }

  // -- recall -------------------------------------------------------------------------------

  context(topic: string | null = null, options: OnSubject = {}): Promise<m.SessionContext> {
    return this.send({ method: "POST", path: `${subjectPath(options.subject)}/context`, body: { topic } });
  }

  recall(query: string, options: OnSubject = {}): Promise<m.RecallAnswer> {
    return this.send({ method: "POST", path: `${subjectPath(options.subject)}/recall`, body: { query } });
  }

  // -- proposals ----------------------------------------------------------------------------

  propose(draft: m.ProposalDraft, options: OnSubject & Keyed = {}): Promise<m.Proposal> {
    return this.send(command(`${subjectPath(options.subject)}/proposals`, draft, options.idempotencyKey));
  }

  confirm(changeId: string, evidence: m.Evidence, options: OnSubject & Keyed = {}): Promise<m.Decision> {
    return this.decide(options.subject ?? ME, changeId, "confirm", { evidence }, options.idempotencyKey);
  }

  approve(subject: string, changeId: string, options: Keyed & { note?: string } = {}): Promise<m.Decision> {
    const body = options.note === undefined ? {} : { note: options.note };
    return this.decide(subject, changeId, "approve", body, options.idempotencyKey);
  }

  reject(subject: string, changeId: string, reason: string, options: Keyed = {}): Promise<m.Decision> {
    return this.decide(subject, changeId, "reject", { reason }, options.idempotencyKey);
  }

  /** A page of the tenant's review queue, oldest first; `total` counts every match, and
   * `next_cursor` / `previous_cursor` go back as `cursor`. */
  pending(options: m.QueueFilters & { limit?: number; cursor?: string } = {}): Promise<m.PendingList> {
    const { limit, ...rest } = options;
    return this.send({ method: "GET", path: "/v1/proposals/pending", query: { limit: limit ?? 50, ...rest } });
  }

  /** Identical proposals across subjects, largest group first. */
  pendingGroups(options: m.QueueFilters & { limit?: number; offset?: number } = {}): Promise<m.PendingGroups> {
    const { limit, offset, ...rest } = options;
    const query = { limit: limit ?? 50, offset: offset ?? 0, ...rest };
    return this.send({ method: "GET", path: "/v1/proposals/pending/groups", query });
  }

  /** One decision on many pending changes (`changes`, or every match of `filter` up to
   * `snapshot`, at most `expected_count`); each gets its own decision, once per key. */
  decidePending(body: m.PendingDecision, options: Keyed = {}): Promise<m.Decisions> {
    return this.send(command("/v1/proposals/pending/decisions", body, options.idempotencyKey));
  }

  private decide(subject: string, changeId: string, action: string, body: unknown, key?: string): Promise<m.Decision> {
    const path = `${subjectPath(subject)}/proposals/${encodeURIComponent(changeId)}/${action}`;
    return this.send(command(path, body, key));
  }

  // -- forget -------------------------------------------------------------------------------

  /** Forgets the field; with `items`, only those items of its list (the others stay). */
  forgetField(
    field: string,
    reason: string,
    options: OnSubject & Keyed & { items?: string[] } = {},
  ): Promise<m.Forgotten> {
    const body = options.items === undefined ? { field, reason } : { field, reason, items: options.items };
    return this.send(command(`${subjectPath(options.subject)}/forget`, body, options.idempotencyKey));
  }

  forgetMemory(memoryId: string, reason: string, options: OnSubject & Keyed = {}): Promise<m.Forgotten> {
    const body = { memory_id: memoryId, reason };
    return this.send(command(`${subjectPath(options.subject)}/forget`, body, options.idempotencyKey));
  }

  // -- profile and history ------------------------------------------------------------------

  /** The current profile, or the one at `asOf` on `clock`: `said` (the server's default) for
   * what the subject had said by then, `known` for the version the ledger had written. */
  profile(options: OnSubject & { asOf?: string; clock?: m.Clock } = {}): Promise<m.Profile> {
    const query = { as_of: options.asOf, clock: options.clock };
    return this.send({ method: "GET", path: `${subjectPath(options.subject)}/profile`, query });
  }

  profileVersion(version: number, options: OnSubject = {}): Promise<m.Profile> {
    return this.send({ method: "GET", path: `${subjectPath(options.subject)}/profile/versions/${version}` });
  }

  history(field?: string, options: OnSubject = {}): Promise<m.History> {
    return this.send({ method: "GET", path: `${subjectPath(options.subject)}/profile/history`, query: { field } });
  }

  diff(fromVersion: number, toVersion: number, options: OnSubject = {}): Promise<m.Diff> {
    const query = { from_version: fromVersion, to_version: toVersion };
    return this.send({ method: "GET", path: `${subjectPath(options.subject)}/profile/diff`, query });
  }

  /** What changed between the profiles at two aware ISO times on one clock. */
  diffAt(fromAsOf: string, toAsOf: string, options: OnSubject & { clock?: m.Clock } = {}): Promise<m.Diff> {
    const query = { from_as_of: fromAsOf, to_as_of: toAsOf, clock: options.clock };
    return this.send({ method: "GET", path: `${subjectPath(options.subject)}/profile/diff`, query });
  }

  events(subject: string, options: { after?: number; limit?: number } = {}): Promise<m.EventPage> {
    const query = { after: options.after ?? 0, limit: options.limit ?? 100 };
    return this.send({ method: "GET", path: `${subjectPath(subject)}/events`, query });
  }

  // -- operations ---------------------------------------------------------------------------

  deadLetters(options: { limit?: number; after?: string } = {}): Promise<m.DeadLetters> {
    return this.send({ method: "GET", path: "/v1/dead-letters", query: { limit: options.limit ?? 100, after: options.after } });
  }

  retryDeadLetters(itemId?: string): Promise<m.Retried> {
    const path = itemId === undefined ? "/v1/dead-letters/retry" : `/v1/dead-letters/${encodeURIComponent(itemId)}/retry`;
    return this.send({ method: "POST", path, body: {} });
  }
}

/** The error's type and cause's code, never a message that could carry content. */
export function transportDetail(error: unknown): string {
  if (!(error instanceof Error)) return "TransportError";
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : "";
  return `${error.name}${code}`;
}
