// @vitest-environment jsdom
import type { AgentEventOf } from '@cognition/client';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DecisionForm, parseArgs } from './decision-form';

afterEach(cleanup);

const interrupt: AgentEventOf<'interrupt'> = {
  type: 'interrupt',
  run_id: 'r1',
  tool_calls: [
    { id: 'c1', name: 'execute', args: { command: 'ls' }, allowed: ['approve', 'edit', 'reject'] },
    { id: 'c2', name: 'write_file', args: { path: 'a' }, allowed: ['approve', 'reject'] },
  ],
  allowed: { c1: ['approve', 'edit', 'reject'], c2: ['approve', 'reject'] },
};

function renderForm(problem: string | null = null) {
  const onDecide = vi.fn();
  render(
    <DecisionForm interrupt={interrupt} pending={false} problem={problem} onDecide={onDecide} />,
  );
  return onDecide;
}

describe('DecisionForm', () => {
  it('offers only the decisions each call allows and sends one decision per call', () => {
    const onDecide = renderForm();
    const second = screen.getByRole('radiogroup', { name: 'Decision on write_file' });
    expect(second.querySelectorAll('input')).toHaveLength(2);
    fireEvent.click(screen.getAllByRole('radio', { name: 'Reject' })[1] as HTMLElement);
    fireEvent.change(screen.getByLabelText('Message to the model (optional)'), {
      target: { value: ' not that file ' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Send decision' }));
    expect(onDecide).toHaveBeenCalledWith([
      { tool_call_id: 'c1', type: 'approve' },
      { tool_call_id: 'c2', type: 'reject', message: 'not that file' },
    ]);
  });

  it('sends edited arguments, and refuses a text that is not a JSON object on its field', () => {
    const onDecide = renderForm();
    fireEvent.click(screen.getByRole('radio', { name: 'Edit' }));
    const args = screen.getAllByLabelText('Arguments (JSON)')[0] as HTMLTextAreaElement;
    fireEvent.change(args, { target: { value: '["ls"]' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send decision' }));
    expect(onDecide).not.toHaveBeenCalled();
    expect(args.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('alert').textContent).toBe('Arguments must be a JSON object');

    fireEvent.change(args, { target: { value: '{"command": "pwd"}' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send decision' }));
    expect(onDecide).toHaveBeenCalledWith([
      { tool_call_id: 'c1', type: 'edit', args: { command: 'pwd' } },
      { tool_call_id: 'c2', type: 'approve' },
    ]);
  });

  it('shows the server’s refusal under the form', () => {
    renderForm('Run is not waiting for a decision');
    expect(screen.getByRole('alert').textContent).toBe('Run is not waiting for a decision');
  });
});

describe('parseArgs', () => {
  it('takes a JSON object and names what else it got', () => {
    expect(parseArgs('{"a": 1}')).toEqual({ args: { a: 1 } });
    expect(parseArgs('null')).toEqual({ problem: 'must be a JSON object' });
    const broken = parseArgs('{');
    expect('problem' in broken && broken.problem.startsWith('not JSON: ')).toBe(true);
  });
});
