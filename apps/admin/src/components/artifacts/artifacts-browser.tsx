import { Button, Card, Code, Flex, Heading, Table, Text } from '@radix-ui/themes';
import type { Artifact, ArtifactType } from '@cognition/contracts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { hrefOf } from '../../route';
import { useTRPC } from '../../trpc';
import { previewOf, sizeText } from './artifact-content';
import { QueryView } from '../common/states';
import { DataTable, Pager, SelectField } from '../common/ui';

const PAGE_SIZE = 20;
const TYPES: ArtifactType[] = ['artifact', 'memory', 'policy', 'contract', 'eval', 'scratch'];

/**
 * The artifacts the key may see (its scope's), filtered by type and paged by the server; one
 * opened shows its versions, and any version's content.
 */
export function ArtifactsBrowser() {
  const trpc = useTRPC();
  const [type, setType] = useState<ArtifactType | ''>('');
  const [offset, setOffset] = useState(0);
  const [openId, setOpenId] = useState<string | null>(null);
  const list = useQuery({
    ...trpc.artifacts.list.queryOptions({
      limit: PAGE_SIZE,
      offset,
      ...(type !== '' ? { type } : {}),
    }),
    placeholderData: (previous) => previous,
  });
  return (
    <section aria-labelledby="artifacts-title">
      <Heading as="h2" id="artifacts-title" size="4">
        Artifacts
      </Heading>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <Flex mb="3">
          <SelectField
            id="artifact-type"
            label="Type"
            name="artifactType"
            value={type}
            options={[
              { value: '' as const, label: 'any' },
              ...TYPES.map((t) => ({ value: t, label: t })),
            ]}
            onChange={(value) => {
              setType(value);
              setOffset(0);
            }}
          />
        </Flex>
      </form>
      <QueryView
        query={list}
        loading="Loading artifacts"
        isEmpty={(d) => d.artifacts.length === 0}
        empty="No artifacts."
      >
        {(d) => (
          <>
            <ArtifactTable artifacts={d.artifacts} openId={openId} onOpen={setOpenId} />
            <Pager
              label="Pages of artifacts"
              offset={offset}
              shown={d.artifacts.length}
              total={d.total}
              pageSize={PAGE_SIZE}
              onOffset={setOffset}
            />
          </>
        )}
      </QueryView>
      {openId && <ArtifactVersions key={openId} id={openId} />}
    </section>
  );
}

function ArtifactTable(props: {
  artifacts: Artifact[];
  openId: string | null;
  onOpen: (id: string) => void;
}) {
  return (
    <DataTable columns={['Name', 'Type', 'Visibility', 'Version', 'Size', 'Session', 'Updated']}>
      {props.artifacts.map((artifact) => (
        <Table.Row key={artifact.id}>
          <Table.Cell>
            <Button
              type="button"
              size="1"
              variant={artifact.id === props.openId ? 'solid' : 'soft'}
              aria-expanded={artifact.id === props.openId}
              onClick={() => props.onOpen(artifact.id)}
            >
              {artifact.name}
            </Button>
          </Table.Cell>
          <Table.Cell>{artifact.type}</Table.Cell>
          <Table.Cell>{artifact.visibility}</Table.Cell>
          <Table.Cell>v{artifact.version}</Table.Cell>
          <Table.Cell>{sizeText(artifact.size)}</Table.Cell>
          <Table.Cell>
            {artifact.sessionId ? (
              <a href={hrefOf({ page: 'session', id: artifact.sessionId })}>
                …{artifact.sessionId.slice(-8)}
              </a>
            ) : (
              '—'
            )}
          </Table.Cell>
          <Table.Cell>
            <time dateTime={artifact.updatedAt.toISOString()}>
              {artifact.updatedAt.toLocaleString()}
            </time>
          </Table.Cell>
        </Table.Row>
      ))}
    </DataTable>
  );
}

/** One artifact's versions (oldest first, as kept) and the content of the one chosen. */
function ArtifactVersions({ id }: { id: string }) {
  const trpc = useTRPC();
  const versions = useQuery(trpc.artifacts.versions.queryOptions({ id }));
  const [shown, setShown] = useState<number | null>(null);
  const latest = versions.data?.at(-1)?.version ?? null;
  const version = shown ?? latest;
  const content = useQuery({
    ...trpc.artifacts.get.queryOptions({ id, ...(version !== null ? { version } : {}) }),
    enabled: version !== null,
  });
  return (
    <Card className="artifact-detail" mt="3">
      <Heading as="h3" size="3">
        Versions
      </Heading>
      <QueryView
        query={versions}
        loading="Loading versions"
        isEmpty={(d) => d.length === 0}
        empty="No versions kept."
      >
        {(d) => (
          <ol className="versions">
            {d.map((v) => (
              <li key={v.version}>
                <Button
                  type="button"
                  size="1"
                  variant={v.version === version ? 'solid' : 'soft'}
                  aria-pressed={v.version === version}
                  onClick={() => setShown(v.version)}
                >
                  v{v.version}
                </Button>{' '}
                <Text size="2">
                  {sizeText(v.size)} · <Code title={v.sha256}>{v.sha256.slice(0, 12)}</Code> ·{' '}
                  {v.createdBy} · {v.createdAt.toLocaleString()}
                </Text>
              </li>
            ))}
          </ol>
        )}
      </QueryView>
      {version !== null && (
        <QueryView
          query={content}
          loading={`Loading version ${version}`}
          isEmpty={() => false}
          empty=""
        >
          {(a) => {
            const preview = previewOf(a);
            return (
              <figure>
                <Text as="div" size="2" weight="medium" asChild>
                  <figcaption>
                    {a.name}, version {a.version} ({a.contentType})
                  </figcaption>
                </Text>
                {preview.kind === 'binary' ? (
                  <Text as="p" size="2" color="gray" className="state">
                    Binary content ({sizeText(preview.size)}, {preview.contentType}): not shown.
                  </Text>
                ) : (
                  <>
                    <pre aria-label={`Content of version ${a.version}`}>{preview.text}</pre>
                    {preview.hiddenChars > 0 && (
                      <Text as="p" size="2" color="gray" className="state">
                        {preview.hiddenChars} more characters not shown (read them through the API).
                      </Text>
                    )}
                  </>
                )}
              </figure>
            );
          }}
        </QueryView>
      )}
    </Card>
  );
}
