import type { AgentView } from '@cognition/contracts';
import { describe, expect, it } from 'vitest';
import { definitionOf } from './agent-form';

const stored: AgentView = {
  name: 'lister',
  description: 'Lists files.',
  mode: 'primary',
  tools: ['ls', 'execute'],
  model: null,
  temperature: 0.2,
  context: null,
  interrupt_on: { execute: { allowed: ['approve', 'reject'] } },
  mcp_servers: [
    { name: 'fs', command: 'mcp-fs', args: ['.'], env_set: true, env_names: ['TOKEN'] },
  ],
  skills: null,
  expose: { mcp: true, a2a: false, ag_ui: true },
  system_prompt: 'You list files.',
  file: null,
  source: 'api',
  read_only: false,
  version: 3,
  created_at: null,
  updated_at: null,
};

describe('definitionOf', () => {
  it('builds a new agent from the form alone, every decision allowed on the tools it asks before', () => {
    const values = {
      name: ' lister ',
      description: 'Lists.',
      model: '',
      tools: 'ls, , execute',
      interrupt_on: 'execute',
      system_prompt: 'Hi',
    };
    expect(definitionOf(values, null)).toEqual({
      name: 'lister',
      description: 'Lists.',
      tools: ['ls', 'execute'],
      system_prompt: 'Hi',
      interrupt_on: { execute: true },
    });
  });

  it('carries over what the form does not show when editing, MCP secrets left for the server to keep', () => {
    const values = {
      name: 'lister',
      description: 'Lists more.',
      model: 'gpt-4o',
      tools: 'ls, execute, read_file',
      interrupt_on: 'execute, read_file',
      system_prompt: 'You list files.',
    };
    expect(definitionOf(values, stored)).toEqual({
      name: 'lister',
      description: 'Lists more.',
      mode: 'primary',
      model: 'gpt-4o',
      temperature: 0.2,
      expose: { mcp: true, a2a: false, ag_ui: true },
      mcp_servers: [{ name: 'fs', command: 'mcp-fs', args: ['.'] }],
      tools: ['ls', 'execute', 'read_file'],
      interrupt_on: { execute: { allowed: ['approve', 'reject'] }, read_file: true },
      system_prompt: 'You list files.',
    });
  });
});
