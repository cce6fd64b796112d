// @vitest-environment jsdom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '@cognition/client';
import { MessageView } from './message-view';

afterEach(cleanup);

function message(overrides: Partial<Message>): Message {
  return {
    id: 'm1',
    sessionId: 's1',
    role: 'assistant',
    content: '',
    toolCalls: [],
    toolCallId: null,
    tokenCount: 12,
    modelUsed: 'gpt-4o-mini',
    parentId: null,
    metadata: {},
    createdAt: new Date('2026-11-25T10:00:00Z'),
    ...overrides,
  };
}

describe('MessageView', () => {
  it('renders markdown, and HTML in a message as text, never as markup', () => {
    const { container } = render(
      <ul>
        <MessageView
          message={message({
            content: '**bold** <img src=x onerror="alert(1)"><script>alert(2)</script>',
          })}
        />
      </ul>,
    );
    expect(container.querySelector('.markdown strong')?.textContent).toBe('bold');
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('script')).toBeNull();
    expect(screen.getByText(/gpt-4o-mini/)).toBeTruthy();
    expect(screen.getByText(/12 tokens/)).toBeTruthy();
  });

  it('folds tool calls and tool results, opened from the keyboard-focusable summary', () => {
    const { container } = render(
      <ul>
        <MessageView
          message={message({ toolCalls: [{ id: 'c1', name: 'execute', args: { command: 'ls' } }] })}
        />
        <MessageView
          message={message({ id: 'm2', role: 'tool', toolCallId: 'c1', content: 'a.txt' })}
        />
      </ul>,
    );
    const details = container.querySelectorAll('details');
    expect(details).toHaveLength(2);
    expect([...details].every((d) => !d.open)).toBe(true);
    fireEvent.click(screen.getByText('execute'));
    expect(screen.getByText(/"command": "ls"/)).toBeTruthy();
    expect(screen.getByText('a.txt')).toBeTruthy();
  });
});
