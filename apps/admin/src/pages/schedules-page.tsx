import { Heading, Text } from '@radix-ui/themes';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ErrorView, QueryView } from '../components/common/states';
import { FiresList, SchedulesTable } from '../components/schedules/schedules-table';
import { useTRPC } from '../trpc';

const REFRESH_MS = 2000;

/** One schedule's last runs, fetched when its row is opened. */
function ScheduleFires({ id }: { id: string }) {
  const trpc = useTRPC();
  const fires = useQuery({
    ...trpc.schedules.runs.queryOptions({ id, limit: 10 }),
    refetchInterval: REFRESH_MS,
  });
  return (
    <QueryView query={fires} loading="Loading runs" isEmpty={() => false} empty={null}>
      {(data) => <FiresList fires={data} />}
    </QueryView>
  );
}

/**
 * The schedules the key may see (docs/schedules.md): each in words with its next time in the
 * viewer's zone, enable/disable, trigger now, and its last runs.
 */
export function SchedulesPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery({
    ...trpc.schedules.list.queryOptions({ limit: 100 }),
    refetchInterval: REFRESH_MS,
  });
  const [pendingId, setPendingId] = useState<string | null>(null);
  const settled = {
    onSettled: async () => {
      setPendingId(null);
      await queryClient.invalidateQueries(trpc.schedules.pathFilter());
    },
  };
  const update = useMutation(trpc.schedules.update.mutationOptions(settled));
  const trigger = useMutation(trpc.schedules.trigger.mutationOptions(settled));
  const failed = update.error ?? trigger.error;
  return (
    <section aria-labelledby="schedules-title">
      <Heading as="h1" id="schedules-title" size="6">
        Schedules
      </Heading>
      {failed && <ErrorView error={failed} />}
      <QueryView
        query={list}
        loading="Loading schedules"
        isEmpty={(data) => data.items.length === 0}
        empty="No schedules yet: create one with POST /schedules, schedules.create or a LangGraph cron."
      >
        {(data) => (
          <>
            <Text as="p" size="2" color="gray" mb="3">
              {data.total} schedule{data.total === 1 ? '' : 's'}; times in your zone (
              {Intl.DateTimeFormat().resolvedOptions().timeZone}).
            </Text>
            <SchedulesTable
              schedules={data.items}
              pendingId={pendingId}
              onSetEnabled={(schedule, enabled) => {
                setPendingId(schedule.id);
                update.mutate({ id: schedule.id, enabled });
              }}
              onTrigger={(schedule) => {
                setPendingId(schedule.id);
                trigger.mutate({ id: schedule.id });
              }}
              fires={(schedule) => <ScheduleFires id={schedule.id} />}
            />
          </>
        )}
      </QueryView>
    </section>
  );
}
