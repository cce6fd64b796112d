import { useState } from 'react';
import type { Credentials } from '../credentials';
import { parseScopes } from '../credentials';

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
    <main className="sign-in">
      <h1>Sign in to Cognition</h1>
      <p className="state error" role="alert">
        {props.problem}
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          props.onSignIn({ apiKey: apiKey.trim() || null, scopes: parseScopes(scopes) });
        }}
      >
        <label>
          API key
          <input
            type="password"
            name="apiKey"
            autoComplete="off"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
          />
        </label>
        <label>
          Scopes (when scoping is on), e.g. <code>user=alice, project=p1</code>
          <input name="scopes" value={scopes} onChange={(e) => setScopes(e.target.value)} />
        </label>
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
