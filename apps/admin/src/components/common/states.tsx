import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage } from '../../trpc';

export function Loading({ what }: { what: string }) {
  return (
    <p className="state" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="state empty">{children}</p>;
}

export function ErrorView({ error }: { error: unknown }) {
  return (
    <p className="state error" role="alert">
      {errorMessage(error)}
    </p>
  );
}

/** A query's three states and its empty case, the same way on every page. */
export function QueryView<T, E>(props: {
  query: UseQueryResult<T, E>;
  loading: string;
  isEmpty: (data: T) => boolean;
  empty: ReactNode;
  children: (data: T) => ReactNode;
}) {
  const { query } = props;
  if (query.isPending) return <Loading what={props.loading} />;
  if (query.isError) return <ErrorView error={query.error} />;
  if (props.isEmpty(query.data)) return <Empty>{props.empty}</Empty>;
  return <>{props.children(query.data)}</>;
}

/** A table's header row: one column header per name. */
export function TableHead({ columns }: { columns: string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}
