/** Reading the parts of a Markdown file that tests run: marked shell blocks and table commands. */

const marker = (name: string) => `<!-- ${name} -->`;

/** The text after `<!-- name -->`, which must be there exactly once. */
function afterMarker(markdown: string, name: string): string {
  const at = markdown.indexOf(marker(name));
  if (at < 0) throw new Error(`README.md has no ${marker(name)}`);
  if (markdown.indexOf(marker(name), at + 1) >= 0) throw new Error(`README.md has ${marker(name)} twice`);
  return markdown.slice(at + marker(name).length);
}

/** The fenced ```sh block that follows `<!-- name -->` (only blank lines between them). */
export function markedBlock(markdown: string, name: string): string {
  const block = /^\s*\n```sh\n([\s\S]*?)\n```\n/.exec(afterMarker(markdown, name));
  if (!block) throw new Error(`${marker(name)} in README.md is not followed by a \`\`\`sh block`);
  return block[1];
}

/**
 * The table that follows `<!-- name -->`: for each row whose second cell has an inline `curl …`
 * command, the row's label (its first cell, up to a parenthesis) and that command.
 */
export function markedTableCommands(markdown: string, name: string): { label: string; command: string }[] {
  const lines = afterMarker(markdown, name).trimStart().split('\n');
  const end = lines.findIndex((l) => !l.startsWith('|'));
  const table = end < 0 ? lines : lines.slice(0, end);
  if (table.length < 3) throw new Error(`${marker(name)} in README.md is not followed by a table`);
  return table.slice(2).flatMap((row) => {
    const [, first, second] = row.split('|').map((c) => c.trim());
    const command = /`(curl [^`]+)`/.exec(second)?.[1];
    return command ? [{ label: first.replace(/\s*\(.*$/, ''), command }] : [];
  });
}
