/**
 * Splits a Markdown file into its YAML frontmatter (between `---` lines at the very top) and
 * its body (trimmed); null when the file does not start with frontmatter. Shared by agent files
 * and SKILL.md files so both accept exactly the same layout.
 */
export function splitFrontmatter(text: string): { frontmatter: string; body: string } | null {
  const match = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) return null;
  return { frontmatter: match[1] ?? '', body: (match[2] ?? '').trim() };
}
