import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../config';
import { loadMcpServers } from './runtime';

describe('COGNITION_MCP_SERVERS_FILE at startup', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cognition-mcp-file-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the servers, and none without the variable', async () => {
    const file = join(dir, 'mcp.yaml');
    writeFileSync(
      file,
      'servers:\n  - {name: docs, url: "https://mcp.example/mcp", agents: [default]}\n',
    );
    expect(await loadMcpServers(file)).toEqual([
      {
        server: { name: 'docs', url: 'https://mcp.example/mcp', headers: {}, allow_private: false },
        agents: ['default'],
      },
    ]);
    expect(await loadMcpServers(null)).toEqual([]);
  });

  it('refuses to start with every problem of the file listed, or an unreadable file', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: [
          { name: 'a', url: 'ftp://x' },
          { name: 'b', command: '' },
        ],
      }),
    );
    const bad = await loadMcpServers(file).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as ConfigError).problems).toEqual([
      expect.stringMatching(/^COGNITION_MCP_SERVERS_FILE: servers\.0\.url: /),
      expect.stringMatching(/^COGNITION_MCP_SERVERS_FILE: servers\.1\.command: /),
    ]);
    const missing = await loadMcpServers(join(dir, 'nope.yaml')).catch((e: unknown) => e);
    expect((missing as ConfigError).problems[0]).toMatch(
      /^COGNITION_MCP_SERVERS_FILE: cannot read/,
    );
  });
});
