/**
 * A small real MCP server for the tests (stdio, two tools, one resource, one prompt), built on the official
 * SDK: the MCP gate is tested against it.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const notes = new Map([['1', 'buy milk']]);
const server = new McpServer({ name: 'notes', version: '1.0.0' });

server.tool('read_note', 'Reads a note', { id: z.string() }, async ({ id }) => ({
  content: [{ type: 'text', text: notes.get(id) ?? 'no such note' }],
}));
server.tool('delete_note', 'Deletes a note', { id: z.string() }, async ({ id }) => {
  notes.delete(id);
  return { content: [{ type: 'text', text: `deleted ${id}` }] };
});
server.resource('note', 'note://1', async (uri) => ({
  contents: [{ uri: uri.href, text: notes.get('1') ?? '' }],
}));

server.prompt('summarize', 'Summarizes a note', { id: z.string() }, ({ id }) => ({
  messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${notes.get(id) ?? ''}` } }],
}));

await server.connect(new StdioServerTransport());
