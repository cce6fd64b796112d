import { createCognitionClient } from '@cognition/client';
import { Button, Flex, TabNav, Text } from '@radix-ui/themes';
import { QueryClient, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useMemo, useState } from 'react';
import type { Credentials } from './credentials';
import { clearCredentials, loadCredentials, saveCredentials } from './credentials';
import { ErrorView, Loading } from './components/common/states';
import { SessionPage } from './pages/session-page';
import { SessionsPage } from './pages/sessions-page';
import { SignInPage } from './pages/sign-in-page';
import type { Route } from './route';
import { hrefOf, useRoute } from './route';

// Pages other than the sessions list and a session load when first opened (the analytics page
// brings recharts, the playground and system pages their forms): a smaller first download.
const AnalyticsPage = lazy(() =>
  import('./pages/analytics-page').then((m) => ({ default: m.AnalyticsPage })),
);
const SchedulesPage = lazy(() =>
  import('./pages/schedules-page').then((m) => ({ default: m.SchedulesPage })),
);
const PlaygroundPage = lazy(() =>
  import('./pages/playground-page').then((m) => ({ default: m.PlaygroundPage })),
);
const SystemPage = lazy(() =>
  import('./pages/system-page').then((m) => ({ default: m.SystemPage })),
);
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
  if (probe.isPending)
    return (
      <main className="bare">
        <Loading what="Connecting" />
      </main>
    );
  if (probe.isError && SIGN_IN_CODES.has(errorCode(probe.error) ?? '')) {
    return (
      <SignInPage
        initial={props.credentials}
        problem={probe.error.message}
        onSignIn={props.onSignIn}
      />
    );
  }
  if (probe.isError)
    return (
      <main className="bare">
        <ErrorView error={probe.error} />
      </main>
    );
  const link = (page: Exclude<Route['page'], 'session'>, label: string, also?: Route['page']) => (
    <TabNav.Link href={hrefOf({ page })} active={route.page === page || route.page === also}>
      {label}
    </TabNav.Link>
  );
  return (
    <div className="shell">
      <header className="topbar">
        <Flex align="center" gap="3" wrap="wrap" px="4" pt="2">
          <Text size="4" weight="bold" className="brand">
            Cognition
          </Text>
          <Text size="2" color="gray" className="who">
            {props.credentials.apiKey !== null ? 'signed in with an API key' : 'open server'}
            {Object.entries(props.credentials.scopes).map(([k, v]) => ` · ${k}=${v}`)}
          </Text>
          {props.credentials.apiKey !== null && (
            <Button type="button" variant="soft" color="gray" size="1" onClick={props.onSignOut}>
              Sign out
            </Button>
          )}
        </Flex>
        <TabNav.Root aria-label="Pages" className="pages-nav">
          {link('sessions', 'Sessions', 'session')}
          {link('playground', 'Playground')}
          {link('analytics', 'Analytics')}
          {link('schedules', 'Schedules')}
          {link('system', 'System')}
        </TabNav.Root>
      </header>
      <main className="page">
        <Suspense fallback={<Loading what="Loading the page" />}>
          {route.page === 'sessions' && <SessionsPage />}
          {route.page === 'session' && <SessionPage id={route.id} />}
          {route.page === 'playground' && <PlaygroundPage />}
          {route.page === 'analytics' && <AnalyticsPage />}
          {route.page === 'schedules' && <SchedulesPage />}
          {route.page === 'system' && <SystemPage />}
        </Suspense>
      </main>
    </div>
  );
}
