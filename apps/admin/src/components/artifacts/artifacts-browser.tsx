import type { Artifact, ArtifactType } from '@cognition/contracts';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { hrefOf } from '../../route';
import { useTRPC } from '../../trpc';
import { previewOf, sizeText } from './artifact-content';
import { QueryView, TableHead } from '../common/states';

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
      <h2 id="artifacts-title">Artifacts</h2>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Type
          <select
            name="artifactType"
            value={type}
            onChange={(e) => {
              setType(e.target.value as ArtifactType | '');
              setOffset(0);
            }}
          >
            <option value="">any</option>
            {TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
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
            <nav className="pager" aria-label="Pages of artifacts">
              <button
                type="button"
                disabled={offset === 0}
                onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
              >
                Previous
              </button>
              <span>
                {offset + 1}–{offset + d.artifacts.length} of {d.total}
              </span>
              <button
                type="button"
                disabled={offset + PAGE_SIZE >= d.total}
                onClick={() => setOffset(offset + PAGE_SIZE)}
              >
                Next
              </button>
            </nav>
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
    <div className="table-wrap">
      <table>
        <TableHead
          columns={['Name', 'Type', 'Visibility', 'Version', 'Size', 'Session', 'Updated']}
        />
        <tbody>
          {props.artifacts.map((artifact) => (
            <tr key={artifact.id} aria-selected={artifact.id === props.openId}>
              <td>
                <button
                  type="button"
                  className="link"
                  aria-expanded={artifact.id === props.openId}
                  onClick={() => props.onOpen(artifact.id)}
                >
                  {artifact.name}
                </button>
              </td>
              <td>{artifact.type}</td>
              <td>{artifact.visibility}</td>
              <td>v{artifact.version}</td>
              <td>{sizeText(artifact.size)}</td>
              <td>
                {artifact.sessionId ? (
                  <a href={hrefOf({ page: 'session', id: artifact.sessionId })}>
                    …{artifact.sessionId.slice(-8)}
                  </a>
                ) : (
                  '—'
                )}
              </td>
              <td>
                <time dateTime={artifact.updatedAt.toISOString()}>
                  {artifact.updatedAt.toLocaleString()}
                </time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
    <div className="artifact-detail">
      <h3>Versions</h3>
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
                <button
                  type="button"
                  aria-pressed={v.version === version}
                  onClick={() => setShown(v.version)}
                >
                  v{v.version}
                </button>{' '}
                {sizeText(v.size)} · <code title={v.sha256}>{v.sha256.slice(0, 12)}</code> ·{' '}
                {v.createdBy} · {v.createdAt.toLocaleString()}
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
                <figcaption>
                  {a.name}, version {a.version} ({a.contentType})
                </figcaption>
                {preview.kind === 'binary' ? (
                  <p className="state">
                    Binary content ({sizeText(preview.size)}, {preview.contentType}): not shown.
                  </p>
                ) : (
                  <>
                    <pre aria-label={`Content of version ${a.version}`}>{preview.text}</pre>
                    {preview.hiddenChars > 0 && (
                      <p className="state">
                        {preview.hiddenChars} more characters not shown (read them through the API).
                      </p>
                    )}
                  </>
                )}
              </figure>
            );
          }}
        </QueryView>
      )}
    </div>
  );
}
