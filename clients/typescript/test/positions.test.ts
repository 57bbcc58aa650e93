/**
 * Read-your-writes with standbys: the client keeps the latest `Factledger-Position` the
 * service answered and sends it on every later call and stream connection, against a
 * scripted server on loopback.
 */

import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { test } from "node:test";

import { FactledgerClient, laterPosition, POSITION_HEADER } from "../src/index.js";
import { json, scripted } from "./loopback.js";

const SUBJECT = { subject_id: "3f2c1a4e-9b7d-4e21-8a0c-6d1f2b3c4d5e", kind: "lead", external_ref: "r", profile_version: 0 };
const SENT = POSITION_HEADER.toLowerCase();

function positioned(position: string | null): ReturnType<typeof json> {
  return json(200, SUBJECT, position === null ? {} : { [POSITION_HEADER]: position });
}

test("the latest position rides on every later call", async () => {
  // An older position answered late (another request) and a malformed one change nothing.
  const answers = ["0/16B3748", "1/0", null, "0/FFFFFFFF", "junk", null];
  const server = await scripted(answers.map(positioned));
  try {
    const client = new FactledgerClient(server.url, { token: "t" });
    assert.equal(client.position, undefined);
    for (let i = 0; i < answers.length; i++) await client.getSubject();
    assert.equal(client.position, "1/0");
    assert.deepEqual(
      server.requests.map((request) => request.headers[SENT]),
      [undefined, "0/16B3748", "1/0", "1/0", "1/0", "1/0"],
    );
  } finally {
    await server.close();
  }
});

test("a write's position is sent on the next read, and another client can start from it", async () => {
  const server = await scripted([
    json(201, SUBJECT, { [POSITION_HEADER]: "A/10" }),
    positioned(null),
    positioned(null),
  ]);
  try {
    const writer = new FactledgerClient(server.url, { token: "t" });
    await writer.registerSubject("lead", "r");
    await writer.getSubject();
    const reader = new FactledgerClient(server.url, { token: "t", position: writer.position });
    await reader.getSubject();
    assert.deepEqual(
      server.requests.map((request) => request.headers[SENT]),
      [undefined, "A/10", "A/10"],
    );
  } finally {
    await server.close();
  }
});

test("the event stream connects with the position", async () => {
  const stream = (_request: unknown, response: ServerResponse): void => {
    response.writeHead(200, { "Content-Type": "text/event-stream" });
    const event = { cursor: "c1", type: "registered", subject_id: SUBJECT.subject_id, subject_kind: "lead", version: 1, timestamp: null, content: true, payload: {} };
    response.end(`id: c1\nevent: registered\ndata: ${JSON.stringify(event)}\n\n`);
  };
  const server = await scripted([json(201, SUBJECT, { [POSITION_HEADER]: "2/AB" }), stream]);
  try {
    const client = new FactledgerClient(server.url, { token: "t" });
    await client.registerSubject("lead", "r");
    for await (const event of client.followEvents()) {
      assert.equal(event.cursor, "c1");
      break;
    }
    assert.equal(server.requests[1]?.headers[SENT], "2/AB");
  } finally {
    await server.close();
  }
});

test("positions compare as write-ahead-log positions, not as text", () => {
  assert.equal(laterPosition("9/FF", "10/0"), "10/0");
  assert.equal(laterPosition("10/0", "9/FF"), "10/0");
  assert.equal(laterPosition("0/A", "0/9"), "0/A");
  assert.equal(laterPosition(undefined, "not-a-position"), undefined);
  assert.equal(laterPosition("1/0", null), "1/0");
});
