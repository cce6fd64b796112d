import { Code, Heading, Table, Text } from '@radix-ui/themes';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '../../trpc';
import { QueryView } from '../common/states';
import { DataTable } from '../common/ui';

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
      <Heading as="h2" id="skills-title" size="4">
        Skills
      </Heading>
      <QueryView
        query={skills}
        loading="Loading skills"
        isEmpty={(d) => d.skills.length === 0 && d.problems.length === 0}
        empty="No skills: add .cognition/skills/<name>/SKILL.md to the server's workspace."
      >
        {(d) => (
          <>
            {d.skills.length > 0 && (
              <DataTable columns={['Name', 'Description', 'Files']}>
                {d.skills.map((skill) => (
                  <Table.Row key={skill.name}>
                    <Table.Cell>
                      <Code title={skill.path}>{skill.name}</Code>
                    </Table.Cell>
                    <Table.Cell>{skill.description}</Table.Cell>
                    <Table.Cell>
                      {skill.files.length === 0 ? '—' : skill.files.join(', ')}
                    </Table.Cell>
                  </Table.Row>
                ))}
              </DataTable>
            )}
            {d.problems.length > 0 && (
              <>
                <Heading as="h3" size="3">
                  Skipped
                </Heading>
                <Text as="div" size="2">
                  <ul className="problems">
                    {d.problems.map((problem) => (
                      <li key={problem.path}>
                        <Code>{problem.path}</Code>: <Text color="red">{problem.message}</Text>
                      </li>
                    ))}
                  </ul>
                </Text>
              </>
            )}
          </>
        )}
      </QueryView>
    </section>
  );
}
