/**
 * Retries, against a scripted server on loopback: which answers are retried, that a command
 * keeps its idempotency key on every try, and when the client gives up.
 */

import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";

import {
  ConflictError,
  FactledgerClient,
  IDEMPOTENCY_HEADER,
  InvalidRequestError,
  ServerUnavailableError,
  TransportFailedError,
} from "../src/index.js";
import { json, scripted } from "./loopback.js";

const FAST = { attempts: 4, backoffMs: 1, maxBackoffMs: 5, totalMs: 30_000 };
const SUBJECT = { subject_id: "3f2c1a4e-9b7d-4e21-8a0c-6d1f2b3c4d5e", kind: "lead", external_ref: "r", profile_version: 0 };
const UNAVAILABLE = { error: "BackendUnavailableError", detail: "the ledger is unavailable" };
const IN_PROGRESS = { error: "RequestInProgressError", detail: "the first try is still running" };

test("a command retried after 503, 502 and a key in progress keeps its key throughout", async () => {
  const server = await scripted([
    json(503, UNAVAILABLE),
    json(502, UNAVAILABLE),
    json(409, IN_PROGRESS),
    json(201, SUBJECT),
  ]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    assert.deepEqual(await client.registerSubject("lead", "r"), SUBJECT);
    const keys = server.requests.map((request) => request.headers[IDEMPOTENCY_HEADER.toLowerCase()]);
    assert.equal(keys.length, 4);
    assert.match(String(keys[0]), /^[0-9a-f]{32}$/);
    assert.ok(keys.every((key) => key === keys[0]));
    assert.ok(server.requests.every((request) => request.headers.authorization === "Bearer t"));
  } finally {
    await server.close();
  }
});

test("the caller's key is the one sent", async () => {
  const server = await scripted([json(503, UNAVAILABLE), json(201, SUBJECT)]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await client.registerSubject("lead", "r", { idempotencyKey: "crm-import-7" });
    assert.deepEqual(
      server.requests.map((request) => request.headers["idempotency-key"]),
      ["crm-import-7", "crm-import-7"],
    );
  } finally {
    await server.close();
  }
});

test("reads carry no key", async () => {
  const server = await scripted([json(200, { notes: [], excerpts: [], degraded: null, elapsed_ms: 1, prompt: "" })]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await client.recall("suppliers");
    assert.equal(server.requests[0]?.headers["idempotency-key"], undefined);
    assert.equal(server.requests[0]?.url, "/v1/subjects/me/recall");
  } finally {
    await server.close();
  }
});

test("a refusal is not retried", async () => {
  const server = await scripted([
    json(422, { error: "ValidationError", detail: "query: too short", field: "query" }),
    json(409, { error: "ConcurrencyError", detail: "the profile changed" }),
  ]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await assert.rejects(client.recall(""), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError);
      assert.equal(error.field, "query");
      return true;
    });
    await assert.rejects(client.forgetField("supplier", "asked"), ConflictError);
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});

test("after the policy's attempts the last answer is the error", async () => {
  const server = await scripted(Array.from({ length: FAST.attempts }, () => json(503, UNAVAILABLE)));
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    await assert.rejects(client.whoami(), (error: unknown) => {
      assert.ok(error instanceof ServerUnavailableError);
      assert.equal(error.error, "BackendUnavailableError");
      return true;
    });
    assert.equal(server.requests.length, FAST.attempts);
  } finally {
    await server.close();
  }
});

test("the server's Retry-After replaces the backoff", async () => {
  const server = await scripted([json(503, UNAVAILABLE, { "Retry-After": "0" }), json(200, SUBJECT)]);
  try {
    // A backoff this long would outlast the test's timeout: only Retry-After lets it pass.
    const slow = { attempts: 2, backoffMs: 600_000, maxBackoffMs: 600_000, totalMs: 600_000 };
    const client = new FactledgerClient(server.url, { token: "t", retry: slow });
    assert.deepEqual(await client.getSubject(), SUBJECT);
  } finally {
    await server.close();
  }
});

test("an unreachable server ends in TransportFailedError after the retries", { timeout: 30_000 }, async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const client = new FactledgerClient(`http://127.0.0.1:${port}`, { token: "t", retry: FAST });
  await assert.rejects(client.whoami(), (error: unknown) => {
    assert.ok(error instanceof TransportFailedError);
    assert.equal(error.status, 0);
    return true;
  });
});

test("a dropped connection is retried with the same key", async () => {
  const server = await scripted([(request) => request.socket.destroy(), json(201, SUBJECT)]);
  try {
    const client = new FactledgerClient(server.url, { token: "t", retry: FAST });
    assert.deepEqual(await client.registerSubject("lead", "r"), SUBJECT);
    const keys = server.requests.map((request) => request.headers["idempotency-key"]);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
  } finally {
    await server.close();
  }
});
