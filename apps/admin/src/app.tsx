import { createCognitionClient } from '@cognition/client';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { Credentials } from './credentials';
import { clearCredentials, loadCredentials, saveCredentials } from './credentials';
import { ErrorView, Loading } from './components/common/states';
import { SessionPage } from './pages/session-page';
import { SessionsPage } from './pages/sessions-page';
import { SignInPage } from './pages/sign-in-page';
import { AnalyticsPage } from './pages/analytics-page';
import { SchedulesPage } from './pages/schedules-page';
import { PlaygroundPage } from './pages/playground-page';
import { SystemPage } from './pages/system-page';
import { hrefOf, useRoute } from './route';
import { errorCode, TRPCProvider, useTRPC } from './trpc';

/** Codes of a refused first call (no key, a wrong key, missing scope headers): sign in. */
const SIGN_IN_CODES = new Set(['UNAUTHORIZED', 'FORBIDDEN', 'VALIDATION_ERROR']);

export function App() {
  const [credentials, setCredentials] = useState<Credentials>(() => loadCredentials());
  // One client and one cache per set of credentials: nothing of another key's data survives.
  const { queryClient, client } = useMemo(
    () => ({
      queryClient: new QueryClient({
        defaultOptions: { queries: { retry: false, refetchOnWindowFocus: true } },
      }),
      client: createCognitionClient({
        url: `${window.location.origin}/trpc`,
        ...(credentials.apiKey !== null ? { apiKey: credentials.apiKey } : {}),
        scopes: credentials.scopes,
      }),
    }),
    [credentials],
  );
  const signIn = (next: Credentials) => {
    saveCredentials(next);
    setCredentials(next);
  };
  const signOut = () => {
    clearCredentials();
    setCredentials({ apiKey: null, scopes: {} });
  };
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={client} queryClient={queryClient}>
        {/* Remounted per credentials: a query hook keeps the client it was first rendered with. */}
        <Shell
          key={JSON.stringify(credentials)}
          credentials={credentials}
          onSignIn={signIn}
          onSignOut={signOut}
        />
      </TRPCProvider>
    </QueryClientProvider>
  );
}

function Shell(props: {
  credentials: Credentials;
  onSignIn: (credentials: Credentials) => void;
  onSignOut: () => void;
}) {
  const trpc = useTRPC();
  const route = useRoute();
  // One cheap call tells whether these credentials may read sessions at all.
  const probe = useQuery(trpc.sessions.list.queryOptions({ limit: 1 }));
  if (probe.isPending) return <Loading what="Connecting" />;
  if (probe.isError && SIGN_IN_CODES.has(errorCode(probe.error) ?? '')) {
    return (
      <SignInPage
        initial={props.credentials}
        problem={probe.error.message}
        onSignIn={props.onSignIn}
      />
    );
  }
  if (probe.isError) return <ErrorView error={probe.error} />;
  return (
    <div className="shell">
      <header className="topbar">
        <strong className="brand">Cognition</strong>
        <nav aria-label="Pages">
          <a
            href={hrefOf({ page: 'sessions' })}
            aria-current={
              route.page === 'sessions' || route.page === 'session' ? 'page' : undefined
            }
          >
            Sessions
          </a>
          <a
            href={hrefOf({ page: 'playground' })}
            aria-current={route.page === 'playground' ? 'page' : undefined}
          >
            Playground
          </a>
          <a
            href={hrefOf({ page: 'analytics' })}
            aria-current={route.page === 'analytics' ? 'page' : undefined}
          >
            Analytics
          </a>
          <a
            href={hrefOf({ page: 'schedules' })}
            aria-current={route.page === 'schedules' ? 'page' : undefined}
          >
            Schedules
          </a>
          <a
            href={hrefOf({ page: 'system' })}
            aria-current={route.page === 'system' ? 'page' : undefined}
          >
            System
          </a>
        </nav>
        <span className="who">
          {props.credentials.apiKey !== null ? 'signed in with an API key' : 'open server'}
          {Object.entries(props.credentials.scopes).map(([k, v]) => ` · ${k}=${v}`)}
        </span>
        {props.credentials.apiKey !== null && (
          <button type="button" onClick={props.onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <main>
        {route.page === 'sessions' && <SessionsPage />}
        {route.page === 'session' && <SessionPage id={route.id} />}
        {route.page === 'playground' && <PlaygroundPage />}
        {route.page === 'analytics' && <AnalyticsPage />}
        {route.page === 'schedules' && <SchedulesPage />}
        {route.page === 'system' && <SystemPage />}
      </main>
    </div>
  );
}
