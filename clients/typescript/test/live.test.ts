/**
 * The client against a live `factledger serve` (started by tests/e2e/test_typescript_client.py,
 * which passes its URL and tokens in the environment): the story of one subject, errors as
 * typed exceptions, and the event stream followed, stopped and resumed.
 */

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AuthenticationFailedError,
  FactledgerClient,
  InvalidRequestError,
  type LedgerEvent,
  NotFoundError,
  PermissionDeniedError,
  boolean,
  items,
  text,
} from "../src/index.js";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") throw new Error(`${name} is not set: run these tests through pytest`);
  return value;
}

const url = required("FACTLEDGER_URL");
const ref = required("FACTLEDGER_SUBJECT_REF");
const service = new FactledgerClient(url, { token: required("FACTLEDGER_SERVICE_TOKEN") });
const agent = new FactledgerClient(url, { token: required("FACTLEDGER_AGENT_TOKEN") });
const reviewer = new FactledgerClient(url, { token: required("FACTLEDGER_REVIEWER_TOKEN") });

async function take(follower: AsyncIterable<LedgerEvent>, count: number): Promise<LedgerEvent[]> {
  const taken: LedgerEvent[] = [];
  if (count === 0) return taken;
  for await (const event of follower) {
    taken.push(event);
    if (taken.length === count) break;
  }
  return taken;
}

test("a subject's story: session, stated proposal, review, profile", async () => {
  const registered = await service.registerSubject("lead", ref, { idempotencyKey: `ts-register-${ref}` });
  const again = await service.registerSubject("lead", ref, { idempotencyKey: `ts-register-${ref}` });
  assert.deepEqual(again, registered);
  assert.equal((await agent.whoami()).subject_id, registered.subject_id);

  await agent.startSession("ts-1", "chat");
  // The subject's words come from the channel that heard them (the service's token).
  const said = "We moved to Supplier B in March.";
  const kept = await service.appendMessage("ts-1", "subject", said, { subject: registered.subject_id });
  assert.equal(kept.index, 0);
  const transcript = await agent.sessionMessages("ts-1");
  assert.deepEqual(
    transcript.messages.map((m) => [m.role, m.text]),
    [["subject", "We moved to Supplier B in March."]],
  );
  const ended = await agent.endSession("ts-1", {
    proposals: [
      {
        field: "supplier",
        origin: "stated",
        value: text("Supplier B"),
        evidence: { session_id: "ts-1", message_index: 0, quote: "Supplier B" },
      },
    ],
  });
  assert.equal(ended.message_count, 1);
  assert.equal(ended.proposals[0]?.status, "pending");
  const changeId = ended.proposals[0]?.change_id ?? assert.fail("no proposal");

  const decision = await reviewer.approve(registered.subject_id, changeId, { note: "checked" });
  assert.equal(decision.status, "confirmed");
  const profile = await agent.profile();
  assert.equal(profile.fields.supplier?.display, "Supplier B");
  const history = await agent.history("supplier");
  assert.equal(history.entries.length, 1);
  assert.equal(typeof history.entries[0]?.said_at, "string");

  // Both clocks: the value was said and approved just now, so long ago there was nothing.
  const asSaid = await agent.profile({ asOf: "2001-01-01T00:00:00Z" });
  assert.equal(asSaid.clock, "said");
  assert.deepEqual(asSaid.fields, {});
  await assert.rejects(agent.profile({ asOf: "2001-01-01T00:00:00Z", clock: "known" }), NotFoundError);
  const since = await agent.diffAt("2001-01-01T00:00:00Z", new Date().toISOString(), { clock: "known" });
  assert.deepEqual(since.changes.map((change) => change.field), ["supplier"]);
});

test("the agent asks about a change; the subject's yes, relayed by the channel, confirms it", async () => {
  const subject = (await agent.whoami()).subject_id ?? assert.fail("the agent token names no subject");
  await agent.startSession("ts-ask-0", "voice");
  await service.appendMessage("ts-ask-0", "subject", "We run twelve vans.", { subject });
  const proposed = await agent.endSession("ts-ask-0", {
    proposals: [
      {
        field: "fleet",
        origin: "stated",
        value: text("twelve vans"),
        evidence: { session_id: "ts-ask-0", message_index: 0, quote: "twelve vans" },
      },
    ],
  });
  const changeId = proposed.proposals[0]?.change_id ?? assert.fail("no proposal");

  await agent.startSession("ts-ask-1", "voice");
  await agent.appendMessage("ts-ask-1", "agent", "Twelve vans, is that right?", { asks: changeId });
  await service.appendMessage("ts-ask-1", "subject", "Yes, that's right.", { subject });
  const ended = await agent.endSession("ts-ask-1");
  assert.deepEqual(
    (ended.decided ?? []).map((d) => [d.change_id, d.status, d.relayed_by?.kind]),
    [[changeId, "confirmed", "system"]],
  );
});

test("a command retried with its key acts once", async () => {
  const draft = { field: "budget_holder", origin: "inferred" as const, value: boolean(true) };
  const first = await agent.propose(draft, { idempotencyKey: `ts-propose-${ref}` });
  const second = await agent.propose(draft, { idempotencyKey: `ts-propose-${ref}` });
  assert.deepEqual(second, first);
  const pending = await reviewer.pending();
  assert.equal(pending.items.filter((item) => item.change_id === first.change_id).length, 1);
});

test("the review queue filters, counts and decides many changes once per key", async () => {
  const draft = { field: "queue_probe", origin: "inferred" as const, value: boolean(true) };
  const proposed = await agent.propose(draft, { idempotencyKey: `ts-queue-${ref}` });
  const page = await reviewer.pending({ field: "queue_probe", limit: 1 });
  assert.equal(page.total, 1);
  assert.equal(page.items[0]?.change_id, proposed.change_id);
  const groups = await reviewer.pendingGroups({ field: "queue_probe" });
  assert.equal(groups.groups[0]?.count, 1);
  const changes = [{ subject_id: proposed.subject_id, change_id: proposed.change_id }];
  const body = { decision: "reject" as const, reason: "a probe", changes };
  const first = await reviewer.decidePending(body, { idempotencyKey: `ts-decide-${ref}` });
  const again = await reviewer.decidePending(body, { idempotencyKey: `ts-decide-${ref}` });
  assert.deepEqual([first.decided, again.decided], [1, 0]);
  assert.equal((await reviewer.pending({ field: "queue_probe" })).total, 0);
});

test("recall and context answer in the API's shapes", async () => {
  const answer = await agent.recall("which supplier do they use?");
  assert.ok(Array.isArray(answer.notes));
  assert.equal(typeof answer.prompt, "string");
  const context = await agent.context("suppliers");
  assert.ok(context.profile.some((note) => note.text.includes("Supplier B")));
});

test("errors arrive as typed exceptions naming the field", async () => {
  await assert.rejects(agent.recall(""), (error: unknown) => {
    assert.ok(error instanceof InvalidRequestError);
    assert.equal(error.status, 422);
    assert.equal(error.field, "query");
    return true;
  });
  await assert.rejects(agent.approve("me", "00000000-0000-4000-8000-000000000000"), PermissionDeniedError);
  await assert.rejects(service.lookupSubject("lead", "nobody-here"), NotFoundError);
  const stranger = new FactledgerClient(url, { token: "not-a-jwt" });
  await assert.rejects(stranger.whoami(), AuthenticationFailedError);
});

test("the event stream is followed, stopped and resumed without a gap or a duplicate", async () => {
  const refs = ["ts-follow-1", "ts-follow-2", "ts-follow-3"];
  for (const other of refs) await service.registerSubject("lead", other);
  const all = await take(service.followEvents({ types: ["registered"] }), 1 + refs.length);
  const first = service.followEvents({ types: ["registered"] });
  const head = await take(first, 2);
  const rest = await take(service.followEvents({ types: ["registered"], after: first.cursor }), all.length - 2);
  const cursors = [...head, ...rest].map((event) => event.cursor);
  assert.deepEqual(cursors, all.map((event) => event.cursor));
  assert.equal(new Set(cursors).size, cursors.length);
  assert.ok(all.every((event) => event.type === "registered"));
});

test("a follower stopped by its signal ends its iteration", async () => {
  const stop = new AbortController();
  const follower = service.followEvents({ types: ["erased"], signal: stop.signal }); // none here
  const seen: LedgerEvent[] = [];
  setTimeout(() => stop.abort(), 200);
  for await (const event of follower) seen.push(event);
  assert.deepEqual(seen, []);
});

test("forgetting one item of a list keeps the others (ADR 0160)", async () => {
  const listed = await agent.propose({ field: "tools", origin: "inferred", operation: "append", value: items("Jira", "Trello") });
  await reviewer.approve(listed.subject_id, listed.change_id);
  await assert.rejects(agent.forgetField("tools", "the subject asked", { items: ["Asana"] }), InvalidRequestError);
  const done = await agent.forgetField("tools", "the subject asked", { items: ["Trello"] });
  assert.equal(done.field, "tools");
  const profile = await agent.profile();
  assert.deepEqual(profile.fields.tools?.value, items("Jira"));
});
