import { Button, Code, Text } from '@radix-ui/themes';
import { useState } from 'react';

/**
 * An id shown in full (it wraps on a narrow window rather than being cut) with a button that
 * copies it, so a run or session id can be pasted into a log search or an API call.
 */
export function CopyId({ id, what }: { id: string; what: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = () => {
    // The clipboard needs a secure context (https or localhost); elsewhere it says it failed.
    navigator.clipboard
      .writeText(id)
      .then(() => setCopied('yes'))
      .catch(() => setCopied('failed'));
  };
  // The button's text stays "Copy" (its accessible name must contain what it shows); the
  // outcome is a status beside it, which a screen reader announces.
  return (
    <span className="copy-id">
      <Code variant="ghost">{id}</Code>{' '}
      <Button
        type="button"
        size="1"
        variant="soft"
        color="gray"
        onClick={copy}
        aria-label={`Copy ${what} ${id}`}
      >
        Copy
      </Button>
      <Text role="status" size="1" color={copied === 'failed' ? 'red' : 'green'}>
        {copied === 'yes' && ' Copied'}
        {copied === 'failed' && ' select and copy it by hand'}
      </Text>
    </span>
  );
}
