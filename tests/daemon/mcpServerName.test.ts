import { describe, expect, it } from 'vitest';
import { defaultServerName } from '../../daemon/mcp/serverName.ts';

describe('the name of a server started without --name', () => {
  it.each([
    // A launcher's name would be every server's it starts: the package it runs is the server's.
    ['npx -y @modelcontextprotocol/server-github', 'server-github'],
    ['npx --yes @acme/notes-mcp@1.2.3', 'notes-mcp'],
    ['npx mcp-server-kubernetes', 'mcp-server-kubernetes'],
    ['/usr/local/bin/npx -y ssh-mcp@latest', 'ssh-mcp'],
    ['uvx mcp-server-fetch', 'mcp-server-fetch'],
    ['uvx mcp-server-git==0.6.2', 'mcp-server-git'],
    ['npm exec -y @acme/db-mcp', 'db-mcp'],
    ['pnpm dlx files-mcp', 'files-mcp'],
    ['pipx run mcp-server-time', 'mcp-server-time'],
    ['uv tool run mcp-server-time', 'mcp-server-time'],
    // An interpreter's name likewise: the script it runs is.
    ['node dist/notes.js', 'notes'],
    ['python3 -u servers/weather.py', 'weather'],
    ['deno run --allow-net calendar.ts', 'calendar'],
    ['uv run mail_server.py', 'mail_server'],
    // Anything else is its own program.
    ['/opt/mcp/github-server --stdio', 'github-server'],
    ['npm start', 'npm'],
    ['npx', 'npx'],
    ['node', 'node'],
  ])('`%s` is %s', (command, name) => {
    expect(defaultServerName(command.split(' '))).toBe(name);
  });
});
