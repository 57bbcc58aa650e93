/**
 * Following the tenant's event stream (`GET /v1/events/stream`, Server-Sent Events).
 *
 * A follower reads the stream, yields each ledger event once, and reconnects after a dropped
 * connection with `Last-Event-ID` set to the cursor of the last event it yielded, so a consumer
 * sees every event in order, none twice. Keep `follower.cursor` to resume in a later process
 * (`after`). A cursor is opaque: the service seals the log's position in it.
 */

import type { FactledgerClient } from "./client.js";
import { errorFor, TransportFailedError } from "./errors.js";
import { backoffDelay, RETRY_STATUSES, sleep } from "./retry.js";

export const STREAM_PATH = "/v1/events/stream";
export const LAST_EVENT_ID = "Last-Event-ID";

/** One ledger event of the tenant; `payload` lacks content when `content` is false. */
export interface LedgerEvent {
  /** Where this event stands in the tenant's stream (opaque; resume after it). */
  cursor: string;
  type: string;
  subject_id: string;
  subject_kind: string;
  version: number;
  timestamp: string | null;
  content: boolean;
  payload: Record<string, unknown>;
}

export interface FollowOptions {
  /** Resume after this cursor (the `cursor` of the last event handled). */
  after?: string;
  /** Only subjects of these kinds. */
  kinds?: readonly string[];
  /** Only these event types (e.g. `registered`, `change_confirmed`). */
  types?: readonly string[];
  /** Stops the follower: the iteration ends. */
  signal?: AbortSignal;
  /**
   * The server sends heartbeats while idle; a connection silent for longer than this is taken
   * for dead and replaced.
   */
  idleTimeoutMs?: number;
}

/**
 * SSE framing, a line at a time: fields until a blank line; `:` lines (heartbeats) and events
 * without data are skipped.
 */
export class SseParser {
  private data: string[] = [];

  /** The data of the event this line completes, if it completes one. */
  feed(line: string): string | null {
    if (line === "") {
      const done = this.data;
      this.data = [];
      return done.length > 0 ? done.join("\n") : null;
    }
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    if (name === "data") {
      const value = colon === -1 ? "" : line.slice(colon + 1);
      this.data.push(value.startsWith(" ") ? value.slice(1) : value);
    }
    return null; // comments, `id` and `event` (the data repeats both)
  }
}

/** The server answered a status worth reconnecting after (502, 503, 504), or went silent. */
class ReconnectError extends Error {}

/**
 * An endless async iterable of `LedgerEvent`s that reconnects and resumes by itself.
 *
 * Reconnects on transport errors and on 502/503/504 after the client's retry backoff (reset by
 * every event), and gives up with `TransportFailedError` after the policy's attempts in a row;
 * other statuses throw the client's error for them.
 */
export class EventFollower implements AsyncIterable<LedgerEvent> {
  /** The cursor of the last event yielded (where a later follower resumes). */
  cursor: string | undefined;
  private failures = 0;

  constructor(
    private readonly client: FactledgerClient,
    private readonly options: FollowOptions = {},
  ) {
    this.cursor = options.after;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LedgerEvent> {
    const signal = this.options.signal;
    while (!signal?.aborted) {
      try {
        yield* this.connect();
      } catch (error) {
        if (signal?.aborted) return;
        if (!(error instanceof TypeError || error instanceof ReconnectError)) throw error;
        this.failures += 1;
        if (this.failures >= this.client.retry.attempts) throw new TransportFailedError(error.name);
        try {
          await sleep(backoffDelay(this.client.retry, this.failures - 1), signal);
        } catch {
          return; // stopped while waiting
        }
      }
    }
  }

  private async *connect(): AsyncGenerator<LedgerEvent> {
    const connection = new AbortController();
    const stop = (): void => connection.abort();
    this.options.signal?.addEventListener("abort", stop, { once: true });
    const idleMs = this.options.idleTimeoutMs ?? 120_000;
    let idle: NodeJS.Timeout | undefined;
    let silent = false;
    const arm = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        silent = true;
        connection.abort();
      }, idleMs);
    };
    try {
      arm();
      const headers = this.client.requestHeaders({ Accept: "text/event-stream" });
      if (this.cursor !== undefined) headers[LAST_EVENT_ID] = this.cursor;
      const query = { kind: this.options.kinds ?? [], type: this.options.types ?? [] };
      const response = await this.client.fetchFunction(this.client.url(STREAM_PATH, query), {
        headers,
        signal: connection.signal,
      });
      if (RETRY_STATUSES.has(response.status)) {
        await response.body?.cancel();
        throw new ReconnectError(`status ${response.status}`);
      }
      if (!response.ok || response.body === null) {
        throw errorFor(response.status, await response.json().catch(() => null));
      }
      const parser = new SseParser();
      let pending = "";
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        arm();
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        const lines = pending.split(/\r\n|\r|\n/);
        pending = lines.pop() ?? "";
        for (const line of lines) {
          const data = parser.feed(line);
          if (data === null) continue;
          const event = JSON.parse(data) as LedgerEvent;
          this.cursor = event.cursor;
          this.failures = 0;
          yield event;
        }
      }
    } catch (error) {
      // An abort we caused: silence is a dead link (reconnect); a stop ends the iteration.
      if (silent) throw new ReconnectError("idle");
      throw error;
    } finally {
      clearTimeout(idle);
      this.options.signal?.removeEventListener("abort", stop);
      connection.abort();
    }
  }
}
