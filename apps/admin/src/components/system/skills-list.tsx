import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../../trpc';
import { QueryView, TableHead } from '../common/states';

/**
 * The server workspace's skills as the next turn of an agent will see them (`skills.list`),
 * with the SKILL.md files that were skipped and why, so an operator sees a broken skill here
 * rather than wondering why no agent uses it.
 */
export function SkillsList() {
  const trpc = useTRPC();
  const skills = useQuery(trpc.skills.list.queryOptions());
  return (
    <section aria-labelledby="skills-title">
      <h2 id="skills-title">Skills</h2>
      <QueryView
        query={skills}
        loading="Loading skills"
        isEmpty={(d) => d.skills.length === 0 && d.problems.length === 0}
        empty="No skills: add .cognition/skills/<name>/SKILL.md to the server's workspace."
      >
        {(d) => (
          <>
            {d.skills.length > 0 && (
              <div className="table-wrap">
                <table>
                  <TableHead columns={['Name', 'Description', 'Files']} />
                  <tbody>
                    {d.skills.map((skill) => (
                      <tr key={skill.name}>
                        <td>
                          <code title={skill.path}>{skill.name}</code>
                        </td>
                        <td>{skill.description}</td>
                        <td>{skill.files.length === 0 ? '—' : skill.files.join(', ')}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {d.problems.length > 0 && (
              <>
                <h3>Skipped</h3>
                <ul className="problems">
                  {d.problems.map((problem) => (
                    <li key={problem.path}>
                      <code>{problem.path}</code>: {problem.message}
                    </li>
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
