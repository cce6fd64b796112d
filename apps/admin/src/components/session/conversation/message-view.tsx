import type { Message } from '@cognition/client';
import type { ReactNode } from 'react';
import Markdown from 'react-markdown';

/**
 * One message. Content is rendered as markdown by react-markdown, which builds React elements and
 * never injects HTML, so a message cannot script the dashboard. Tool calls and tool results fold.
 * `actions` (e.g. feedback on an answer) follow the content.
 */
export function MessageView({ message, actions }: { message: Message; actions?: ReactNode }) {
  return (
    <li className={`message ${message.role}`}>
      <header>
        <strong>{message.role}</strong>
        {message.modelUsed && <span> · {message.modelUsed}</span>}
        {message.tokenCount !== null && <span> · {message.tokenCount} tokens</span>}
        <time dateTime={message.createdAt.toISOString()}>
          {' '}
          · {message.createdAt.toLocaleTimeString()}
        </time>
      </header>
      {message.role === 'tool' ? (
        <details>
          <summary>Tool result {message.toolCallId && <code>{message.toolCallId}</code>}</summary>
          <pre>{message.content}</pre>
        </details>
      ) : (
        <div className="markdown">
          <Markdown>{message.content}</Markdown>
        </div>
      )}
      {message.toolCalls.map((call) => (
        <details key={call.id}>
          <summary>
            Tool call <code>{call.name}</code>
          </summary>
          <pre>{JSON.stringify(call.args, null, 2)}</pre>
        </details>
      ))}
      {actions}
    </li>
  );
}
