/** A scripted HTTP server on loopback: each request gets the next scripted answer. */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Answer = (request: IncomingMessage, response: ServerResponse) => void;

export interface Scripted {
  url: string;
  requests: IncomingMessage[];
  close(): Promise<void>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return (_request, response) => {
    response.writeHead(status, { "Content-Type": "application/json", ...headers });
    response.end(JSON.stringify(body));
  };
}

export async function scripted(answers: Answer[]): Promise<Scripted> {
  const requests: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    const answer = answers[requests.length - 1];
    if (answer === undefined) json(500, { error: "ScriptEnded", detail: "no more answers" })(request, response);
    else answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
