/** `pnpm --silent manage …`: prints one JSON document on stdout and exits 0, or a message on stderr and exits 1. */
import { parseArgs } from 'node:util';
import { CliError, createAdminClient } from './admin-client';
import { commands } from './commands';

function usage(): string {
  return ['Usage: pnpm --silent manage <command>', '', ...Object.values(commands).map((c) => `  ${c.usage}`)].join('\n');
}

export async function runCli(argv: string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  const name = `${argv[0] ?? ''} ${argv[1] ?? ''}`;
  const command = commands[name];
  if (!command) throw new CliError(argv.length ? `Unknown command: ${argv.slice(0, 2).join(' ')}\n\n${usage()}` : usage());
  let parsed;
  try {
    parsed = parseArgs({ args: argv.slice(2), options: command.options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new CliError(`${(err as Error).message}\nUsage: pnpm manage ${command.usage}`);
  }
  const missing = (command.required ?? []).filter((k) => parsed.values[k] === undefined);
  if (missing.length) throw new CliError(`Missing ${missing.map((m) => `--${m}`).join(', ')}\nUsage: pnpm manage ${command.usage}`);
  const expected = command.positionals ?? [];
  if (parsed.positionals.length !== expected.length)
    throw new CliError(`Expected ${expected.length ? expected.join(' ') : 'no positional arguments'}\nUsage: pnpm manage ${command.usage}`);
  return command.run(createAdminClient(env), parsed.values, parsed.positionals);
}

if (require.main === module) {
  runCli(process.argv.slice(2), process.env).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    },
    (err: unknown) => {
      process.stderr.write(`error: ${err instanceof CliError ? err.message : (err as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
