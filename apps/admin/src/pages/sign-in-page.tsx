import { Button, Card, Code, Flex, Heading, Text, TextField } from '@radix-ui/themes';
import { useState } from 'react';
import type { Credentials } from '../credentials';
import { parseScopes } from '../credentials';
import { ErrorCallout } from '../components/common/ui';

/** Shown when the server refuses the current credentials: an API key and optional scopes. */
export function SignInPage(props: {
  initial: Credentials;
  problem: string;
  onSignIn: (credentials: Credentials) => void;
}) {
  const [apiKey, setApiKey] = useState(props.initial.apiKey ?? '');
  const [scopes, setScopes] = useState(
    Object.entries(props.initial.scopes)
      .map(([k, v]) => `${k}=${v}`)
      .join(', '),
  );
  return (
    <main className="bare sign-in">
      <Card size="3" style={{ maxWidth: '30rem', margin: '10vh auto 0' }}>
        <Flex direction="column" gap="4">
          <Heading as="h1" size="6">
            Sign in to Cognition
          </Heading>
          <ErrorCallout>{props.problem}</ErrorCallout>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              props.onSignIn({ apiKey: apiKey.trim() || null, scopes: parseScopes(scopes) });
            }}
          >
            <Flex direction="column" gap="3">
              <Flex direction="column" gap="1">
                <Text as="label" htmlFor="sign-in-key" size="2" weight="medium">
                  API key
                </Text>
                <TextField.Root
                  id="sign-in-key"
                  type="password"
                  name="apiKey"
                  autoComplete="off"
                  value={apiKey}
                  onChange={(e) => setApiKey(e.target.value)}
                />
              </Flex>
              <Flex direction="column" gap="1">
                <Text as="label" htmlFor="sign-in-scopes" size="2" weight="medium">
                  Scopes (when scoping is on), e.g. <Code>user=alice, project=p1</Code>
                </Text>
                <TextField.Root
                  id="sign-in-scopes"
                  name="scopes"
                  value={scopes}
                  onChange={(e) => setScopes(e.target.value)}
                />
              </Flex>
              <Button type="submit">Sign in</Button>
            </Flex>
          </form>
        </Flex>
      </Card>
    </main>
  );
}
