import type { AdminClient } from './admin-client';

export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export interface Option {
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** One line for `--help`. */
  description: string;
  /** The placeholder shown in the usage, e.g. URI. */
  value?: string;
}

export interface Command {
  /** One line for `--help`. */
  summary: string;
  options: Record<string, Option>;
  positionals?: string[];
  required?: string[];
  run(client: AdminClient, values: Values, positionals: string[]): Promise<unknown>;
}

export const str = (values: Values, key: string) => values[key] as string | undefined;
/** A flag given as an empty string clears the field (null). */
export const nullable = (values: Values, key: string) => (values[key] === '' ? null : str(values, key));
export const path = (...segments: string[]) => segments.map(encodeURIComponent).join('/');

export const pageOptions: Record<string, Option> = {
  limit: { type: 'string', value: 'N', description: 'how many per page (1-1000, default 100)' },
  cursor: { type: 'string', value: 'CURSOR', description: 'the next_cursor of the previous page' },
};

/** `noun verb` usage line: positionals, required flags, then optional ones in brackets. */
export function usageOf(name: string, command: Command): string {
  const flags = Object.entries(command.options).map(([flag, o]) => {
    const text = `--${flag}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
    const repeated = o.multiple ? ` [${text} ...]` : '';
    return (command.required ?? []).includes(flag) ? `${text}${repeated}` : `[${text}]${repeated}`;
  });
  return [name, ...(command.positionals ?? []), ...flags].join(' ');
}
