/**
 * The follower's SSE reading and resumption, against a scripted server on loopback: framing
 * (heartbeats, multi-line data, CRLF), reconnecting with `Last-Event-ID` after a dropped
 * connection or a 503, and refusals that end the iteration.
 */

import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { test } from "node:test";

import {
  FactledgerClient,
  type LedgerEvent,
  PermissionDeniedError,
  SseParser,
  TransportFailedError,
} from "../src/index.js";
import { type Answer, json, scripted } from "./loopback.js";

const FAST = { attempts: 3, backoffMs: 1, maxBackoffMs: 5, totalMs: 30_000 };

function event(position: number): LedgerEvent {
  return {
    cursor: `c${position}`,
    type: "registered",
    subject_id: "3f2c1a4e-9b7d-4e21-8a0c-6d1f2b3c4d5e",
    subject_kind: "lead",
    version: 1,
    timestamp: "2026-03-01T10:00:00+00:00",
    content: true,
    payload: {},
  };
}

function frame(position: number): string {
  return `id: c${position}\nevent: registered\ndata: ${JSON.stringify(event(position))}\n\n`;
}

/** A stream that sends these events (after a heartbeat), then drops the connection. */
function streamThenDrop(...positions: number[]): Answer {
  return (_request, response: ServerResponse) => {
    response.writeHead(200, { "Content-Type": "text/event-stream" });
    response.write(": heartbeat\n\n");
    response.end(positions.map(frame).join(""), () => response.socket?.destroy());
  };
}

async function take(follower: AsyncIterable<LedgerEvent>, count: number): Promise<LedgerEvent[]> {
  const taken: LedgerEvent[] = [];
  for await (const one of follower) {
    taken.push(one);
    if (taken.length === count) break;
  }
  return taken;
}

test("the parser skips heartbeats and joins multi-line data", () => {
  const parser = new SseParser();
  const lines = [": ping", "", "id: 4", "event: x", "data: {\"a\":", "data:1}", "", ""];
  assert.deepEqual(
    lines.map((line) => parser.feed(line)).filter((data) => data !== null),
    ['{"a":\n1}'],
  );
});

test("a dropped stream is resumed from the last event yielded", async () => {
  const server = await scripted([streamThenDrop(1, 2), json(503, { error: "Unavailable", detail: "d" }), streamThenDrop(3)]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    const follower = client.followEvents({ types: ["registered"], kinds: ["lead"] });
    const cursors = (await take(follower, 3)).map((one) => one.cursor);
    assert.deepEqual(cursors, ["c1", "c2", "c3"]);
    assert.equal(follower.cursor, "c3");
    assert.deepEqual(
      server.requests.map((request) => request.headers["last-event-id"]),
      [undefined, "c2", "c2"],
    );
    assert.equal(server.requests[0]?.url, "/v1/events/stream?kind=lead&type=registered");
    assert.equal(server.requests[0]?.headers.accept, "text/event-stream");
  } finally {
    await server.close();
  }
});

test("a follower resumes after a given cursor", async () => {
  const server = await scripted([streamThenDrop(8)]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await take(client.followEvents({ after: "c7" }), 1);
    assert.equal(server.requests[0]?.headers["last-event-id"], "c7");
  } finally {
    await server.close();
  }
});

test("CRLF framing and events split across chunks", async () => {
  const body = frame(5).replaceAll("\n", "\r\n");
  const server = await scripted([
    (_request, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write(body.slice(0, 17));
      setTimeout(() => response.write(body.slice(17)), 20);
    },
  ]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    assert.deepEqual(await take(client.followEvents(), 1), [event(5)]);
  } finally {
    await server.close();
  }
});

test("a refusal ends the iteration with its error", async () => {
  const server = await scripted([json(403, { error: "PermissionDeniedError", detail: "agents may not follow" })]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await assert.rejects(take(client.followEvents(), 1), PermissionDeniedError);
  } finally {
    await server.close();
  }
});

test("the follower gives up after the policy's failures in a row", async () => {
  const unavailable = json(503, { error: "Unavailable", detail: "d" });
  const server = await scripted([unavailable, unavailable, unavailable]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await assert.rejects(take(client.followEvents(), 1), TransportFailedError);
    assert.equal(server.requests.length, FAST.attempts);
  } finally {
    await server.close();
  }
});

test("a silent connection is replaced", async () => {
  const server = await scripted([
    (_request, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write(": heartbeat\n\n"); // then nothing, with the connection open
    },
    streamThenDrop(1),
  ]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    const follower = client.followEvents({ idleTimeoutMs: 100 });
    assert.deepEqual((await take(follower, 1)).map((one) => one.cursor), ["c1"]);
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});
