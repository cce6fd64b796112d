import { thrownBy, match } from '../testing/test-runtime';
import { parseMcpServersFile } from './servers-file';

describe('COGNITION_MCP_SERVERS_FILE', () => {
  it('reads YAML (and JSON) servers, with the agents that get each', () => {
    const yaml = [
      'servers:',
      '  - name: github',
      '    url: https://mcp.example.com/mcp',
      '    headers: {Authorization: Bearer x}',
      '  - name: files',
      '    command: npx',
      '    args: [mcp-files]',
      '    agents: [default]',
    ].join('\n');
    expect(parseMcpServersFile(yaml)).toEqual([
      {
        server: {
          name: 'github',
          url: 'https://mcp.example.com/mcp',
          headers: { Authorization: 'Bearer x' },
          allow_private: false,
        },
        agents: null,
      },
      {
        server: { name: 'files', command: 'npx', args: ['mcp-files'], env: {} },
        agents: ['default'],
      },
    ]);
    expect(
      parseMcpServersFile(
        '{"servers": [{"name": "a", "url": "http://127.0.0.1:1/mcp", "allow_private": true}]}',
      ),
    ).toEqual([
      match.objectContaining({ server: match.objectContaining({ allow_private: true }) }),
    ]);
    expect(parseMcpServersFile('')).toEqual([]);
  });

  it('names every problem', () => {
    const text = [
      'servers:',
      '  - {name: "bad__name", command: x}',
      '  - {name: web, url: "ftp://x", agents: []}',
      '  - {name: twice, command: a}',
      '  - {name: twice, command: b, colour: red}',
    ].join('\n');
    expect(thrownBy(() => parseMcpServersFile(text))).toMatchObject({
      code: 'VALIDATION_ERROR',
      issues: [
        { path: 'servers.0.name', message: match.containing('__') },
        { path: 'servers.1.agents', message: match.anyString() },
        { path: 'servers.1.url', message: match.anyString() },
        { path: 'servers.3', message: match.containing('colour') },
      ],
    });
    expect(thrownBy(() => parseMcpServersFile('servers: [a'))).toMatchObject({
      issues: [{ path: '(file)' }],
    });
    expect(thrownBy(() => parseMcpServersFile('mcp_servers: []'))).toMatchObject({
      issues: [
        { path: 'servers', message: match.containing('expected array') },
        { path: '(root)', message: match.containing('mcp_servers') },
      ],
    });
  });
});
