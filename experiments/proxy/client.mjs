// A real MCP client library driving the witness proxy: the official
// TypeScript SDK's Client over its stdio transport, pinned in package.json.
//
//   node client.mjs CALLS.json COMMAND [ARGS...]
//
// CALLS.json is [{"tool": NAME, "arguments": {...}}, ...]. The client
// connects (initialize), lists the tools, makes every call in order and
// prints {"tools": [...names], "results": [...CallToolResult]} on stdout.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [callsFile, command, ...args] = process.argv.slice(2);
const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "mcp-witness-sdk-test", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const call of calls) {
  results.push(await client.callTool({ name: call.tool, arguments: call.arguments }));
}
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), results }) + "\n");
