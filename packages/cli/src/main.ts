/** `pnpm --silent manage …`: prints one JSON document on stdout and exits 0, or a message on stderr and exits 1. */
import { parseArgs } from 'node:util';
import { CliError, createAdminClient } from './admin-client';
import { usageOf, type Command } from './command';
import { commands, NOUN_SUMMARIES } from './commands';

/** Help text, printed as it is (not as JSON) and exit 0. */
export class HelpText {
  constructor(readonly text: string) {}
}

const HEADER = 'Usage: pnpm --silent manage <noun> <verb> [arguments]   (--help after a noun or a command for more)';
const byNoun = (noun: string) => Object.entries(commands).filter(([name]) => name.split(' ')[0] === noun);

function overview(): string {
  const lines = Object.entries(NOUN_SUMMARIES).flatMap(([noun, summary]) => [
    `${noun} — ${summary}`,
    ...byNoun(noun).map(([name, c]) => `  ${name.padEnd(28)} ${c.summary}`),
  ]);
  return [
    HEADER,
    '',
    ...lines,
    '',
    'Admin URLs: <SERVICE>_ADMIN_URL or loopback on <SERVICE>_ADMIN_PORT; token: ADMIN_TOKEN or DATA_DIR/admin-token.',
  ].join('\n');
}

function nounHelp(noun: string): string {
  return [
    `${noun} — ${NOUN_SUMMARIES[noun]}`,
    '',
    ...byNoun(noun).flatMap(([name, c]) => [`  pnpm manage ${usageOf(name, c)}`, `      ${c.summary}`]),
  ].join('\n');
}

function commandHelp(name: string, command: Command): string {
  const options = Object.entries(command.options).map(([flag, o]) => {
    const left = `--${flag}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
    const notes = [(command.required ?? []).includes(flag) ? 'required' : '', o.multiple ? 'repeatable' : '']
      .filter(Boolean)
      .join(', ');
    return `  ${left.padEnd(36)} ${o.description}${notes ? ` (${notes})` : ''}`;
  });
  return [
    `Usage: pnpm manage ${usageOf(name, command)}`,
    '',
    command.summary,
    ...(options.length ? ['', 'Options:', ...options] : []),
  ].join('\n');
}

const wantsHelp = (argv: string[]) => argv.includes('--help') || argv.includes('-h');

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  const [noun = '', verb = ''] = argv;
  const name = `${noun} ${verb}`;
  const command = commands[name];
  if (!command) {
    if (noun === '--help' || noun === '-h' || noun === 'help') return new HelpText(overview());
    if (NOUN_SUMMARIES[noun] && (verb === '' || wantsHelp(argv.slice(1, 2))))
      return verb === '' ? Promise.reject(new CliError(nounHelp(noun))) : new HelpText(nounHelp(noun));
    throw new CliError(argv.length ? `Unknown command: ${argv.slice(0, 2).join(' ')}\n\n${overview()}` : overview());
  }
  if (wantsHelp(argv.slice(2))) return new HelpText(commandHelp(name, command));
  let parsed;
  try {
    parsed = parseArgs({ args: argv.slice(2), options: command.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\nUsage: pnpm manage ${usageOf(name, command)}`);
  }
  const missing = (command.required ?? []).filter((k) => parsed.values[k] === undefined);
  if (missing.length)
    throw new CliError(
      `Missing ${missing.map((m) => `--${m}`).join(', ')}\nUsage: pnpm manage ${usageOf(name, command)}`,
    );
  const expected = command.positionals ?? [];
  if (parsed.positionals.length !== expected.length)
    throw new CliError(
      `Expected ${expected.length ? expected.join(' ') : 'no positional arguments'}\nUsage: pnpm manage ${usageOf(name, command)}`,
    );
  return command.run(createAdminClient(env), parsed.values, parsed.positionals);
}

if (require.main === module) {
  runCli(process.argv.slice(2), process.env).then(
    (result) => {
      process.stdout.write(result instanceof HelpText ? `${result.text}\n` : `${JSON.stringify(result)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`error: ${err instanceof CliError ? err.message : (err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
