// A test client for memtool's MCP server, built on the official TypeScript
// MCP SDK. Usage:
//
//   node client.mjs stdio COMMAND [ARG...]   starts the server as a child process
//   node client.mjs http URL                 reaches a streamable HTTP server;
//                                            $MCP_TOKEN, if set, is sent as a bearer token
//
// It connects, then writes one JSON line with the server's instructions,
// tools and prompts. Then, for each JSON line {"tool": NAME, "arguments": {...}}
// on stdin, it calls the tool and writes one JSON line:
// {"sent": the arguments as sent, "result": the CallToolResult} or
// {"sent": ..., "error": the protocol error's message}.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
} else if (mode === "http") {
  const headers = {};
  if (process.env.MCP_TOKEN) {
    headers.Authorization = "Bearer " + process.env.MCP_TOKEN;
  }
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error("usage: node client.mjs stdio COMMAND [ARG...] | http URL");
  process.exit(2);
}

const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

const client = new Client({ name: "memtool-tsclient", version: "1.0.0" });
await client.connect(transport);
const prompts = await client.listPrompts();
const prompt = await client.getPrompt({ name: "memory_protocol", arguments: { task: "test task" } });
out({
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools: (await client.listTools()).tools,
  prompts: prompts.prompts,
  prompt,
});

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) {
    continue;
  }
  const call = JSON.parse(line);
  const sent = call.arguments === undefined ? null : JSON.stringify(call.arguments);
  try {
    const result = await client.callTool({ name: call.tool, arguments: call.arguments });
    out({ sent, result });
  } catch (e) {
    out({ sent, error: String(e && e.message) });
  }
}
await client.close();
