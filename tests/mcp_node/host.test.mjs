// `/mcp` as a host built on the official Node SDK meets it: it finds where to sign in from a
// 401, connects with a bearer token (its stream GET answered 405 at once), reads the server's
// version and the tools' annotations, and checks each answer against the tool's output schema
// (the SDK validates structured content itself). The Python test that runs this
// (tests/e2e/test_mcp_transports.py) starts the server and passes it in the environment.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  discoverOAuthProtectedResourceMetadata,
  extractResourceMetadataUrl,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const BASE = process.env.FACTLEDGER_URL;
const TOKEN = process.env.FACTLEDGER_AGENT_TOKEN;
const MCP = new URL(`${BASE}/mcp`);

async function connected() {
  const transport = new StreamableHTTPClientTransport(MCP, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  const client = new Client({ name: "factledger-node-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

function body(result) {
  return JSON.parse(result.content[0].text);
}

test("a 401 names the metadata, which names where to sign in", async () => {
  const refused = await fetch(MCP, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(refused.status, 401);
  const named = extractResourceMetadataUrl(refused);
  assert.equal(named.href, `${BASE}/.well-known/oauth-protected-resource/mcp`);

  const metadata = await discoverOAuthProtectedResourceMetadata(MCP, {
    resourceMetadataUrl: named,
  });
  assert.equal(metadata.resource, MCP.href);
  assert.deepEqual(metadata.authorization_servers, [process.env.FACTLEDGER_SIGN_IN]);
  // Without the 401's hint the SDK finds the same document at the well-known path.
  assert.deepEqual(await discoverOAuthProtectedResourceMetadata(MCP), metadata);
});

test("a stream GET is a 405 naming POST, at once", async () => {
  const response = await fetch(MCP, {
    headers: { Authorization: `Bearer ${TOKEN}`, Accept: "text/event-stream" },
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST");
});

test("the tools state their hints and schemas, and answers match them", async () => {
  const client = await connected();
  try {
    assert.deepEqual(client.getServerVersion(), {
      name: "factledger",
      version: process.env.FACTLEDGER_VERSION,
    });
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.forget.annotations.destructiveHint, true);
    assert.equal(byName.forget.annotations.idempotentHint, true);
    assert.equal(byName.recall.annotations.readOnlyHint, true);
    assert.equal(byName.get_context.annotations.readOnlyHint, true);
    assert.equal(byName.get_profile.annotations.readOnlyHint, true);
    assert.equal(byName.record_message.annotations.destructiveHint, false);
    for (const tool of tools) {
      assert.equal(tool.outputSchema?.type, "object", tool.name);
    }

    const context = await client.callTool({ name: "get_context", arguments: { topic: "vans" } });
    assert.ok(!context.isError);
    assert.deepEqual(context.structuredContent, body(context));
    assert.equal(typeof context.structuredContent.prompt, "string");

    const turn = await client.callTool({ name: "recall", arguments: { query: "vans" } });
    assert.ok(Array.isArray(turn.structuredContent.notes));

    const both = await client.callTool({
      name: "forget",
      arguments: { field: "fleet", memory_id: "m-1", reason: "the subject asked" },
    });
    assert.equal(both.isError, true);
    assert.equal(both.structuredContent, undefined);
    assert.equal(both._meta["factledger/status"], 422);
    assert.equal(body(both).field, "memory_id");
    assert.match(body(both).detail, /not both/);
  } finally {
    await client.close();
  }
});
