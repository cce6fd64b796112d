import { exposedOver } from './agent';
import { BUILTIN_AGENTS } from './agent';
import { parseAgentDefinition, parseAgentFile } from './load-agents';

/** Issue 30: `expose` says which open protocols offer an agent (all unless left out). */
describe('agent definitions: expose', () => {
  it('offers an agent over every protocol unless its definition leaves one out', () => {
    const open = parseAgentFile('/w/open.md', '---\ndescription: Open.\n---\n\nHi.\n');
    expect(['mcp', 'a2a', 'ag_ui'].map((p) => exposedOver(open, p as 'mcp'))).toEqual([
      true,
      true,
      true,
    ]);
    const hidden = parseAgentFile(
      '/w/hidden.md',
      '---\ndescription: Hidden.\nexpose: { mcp: false }\n---\n\nHi.\n',
    );
    expect(hidden.expose).toEqual({ mcp: false, a2a: true, ag_ui: true });
    expect(exposedOver(hidden, 'mcp')).toBe(false);
    expect(exposedOver(hidden, 'a2a')).toBe(true);
    expect(BUILTIN_AGENTS.every((agent) => exposedOver(agent, 'mcp'))).toBe(true);
  });

  it('never offers a subagent', () => {
    const helper = parseAgentFile('/w/h.md', '---\ndescription: H.\nmode: subagent\n---\n\nHi.\n');
    expect(exposedOver(helper, 'mcp')).toBe(false);
  });

  it('refuses an unknown protocol or a non-boolean, naming the field', () => {
    const result = parseAgentDefinition(
      { description: 'X', system_prompt: 'Y', expose: { mcp: 'no', smtp: true } },
      { source: 'api', name: 'x' },
    );
    expect('issues' in result && result.issues.map((i) => i.path).sort()).toEqual([
      'expose',
      'expose.mcp',
    ]);
  });
});
