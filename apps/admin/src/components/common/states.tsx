import { Flex, Spinner, Text } from '@radix-ui/themes';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage } from '../../trpc';
import { ErrorCallout } from './ui';

export function Loading({ what }: { what: string }) {
  return (
    <Flex align="center" gap="2" className="state" role="status" aria-live="polite">
      <Spinner size="1" />
      <Text size="2" color="gray">
        {what}…
      </Text>
    </Flex>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <Text as="p" size="2" color="gray" className="state empty">
      {children}
    </Text>
  );
}

export function ErrorView({ error }: { error: unknown }) {
  return <ErrorCallout>{errorMessage(error)}</ErrorCallout>;
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
