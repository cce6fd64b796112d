import { useEffect, useState } from 'react';

/** The dashboard's pages, addressed by the URL hash (so /admin/ serves every page). */
export type Route =
  | { page: 'sessions' }
  | { page: 'session'; id: string }
  | { page: 'analytics' }
  | { page: 'schedules' }
  | { page: 'playground' }
  | { page: 'system' };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  if (parts[0] === 'sessions' && parts[1])
    return { page: 'session', id: decodeURIComponent(parts[1]) };
  if (parts[0] === 'system') return { page: 'system' };
  if (parts[0] === 'analytics') return { page: 'analytics' };
  if (parts[0] === 'schedules') return { page: 'schedules' };
  if (parts[0] === 'playground') return { page: 'playground' };
  return { page: 'sessions' };
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'sessions':
      return '#/sessions';
    case 'session':
      return `#/sessions/${encodeURIComponent(route.id)}`;
    case 'analytics':
      return '#/analytics';
    case 'schedules':
      return '#/schedules';
    case 'playground':
      return '#/playground';
    case 'system':
      return '#/system';
  }
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
