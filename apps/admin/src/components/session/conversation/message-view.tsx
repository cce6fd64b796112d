import { Badge, Card, Code, Text } from '@radix-ui/themes';
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
    <Card
      asChild
      className={`message ${message.role}`}
      variant={message.role === 'user' ? 'surface' : 'classic'}
    >
      <li>
        <Text as="div" size="1" color="gray">
          <Badge
            highContrast
            color={message.role === 'user' ? 'indigo' : message.role === 'tool' ? 'green' : 'gray'}
          >
            {message.role}
          </Badge>
          {message.modelUsed && <span> · {message.modelUsed}</span>}
          {message.tokenCount !== null && <span> · {message.tokenCount} tokens</span>}
          <time dateTime={message.createdAt.toISOString()}>
            {' '}
            · {message.createdAt.toLocaleTimeString()}
          </time>
        </Text>
        {message.role === 'tool' ? (
          <details>
            <summary>
              Tool result {message.toolCallId && <Code variant="ghost">{message.toolCallId}</Code>}
            </summary>
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
              Tool call <Code variant="ghost">{call.name}</Code>
            </summary>
            <pre>{JSON.stringify(call.args, null, 2)}</pre>
          </details>
        ))}
        {actions}
      </li>
    </Card>
  );
}
