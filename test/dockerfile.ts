/**
 * The root Dockerfile read statically (no Docker engine here): which instructions make the image of
 * `docker build --build-arg SERVICE=<name> .`. A small model of BuildKit's rules, enough for that file:
 * ARGs before the first FROM expand in FROM lines; in a stage, an argument expands in the lines after the
 * stage's own `ARG` for it (in RUN, as the shell does); `FROM <stage>` continues that stage; the image is
 * the last stage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './support';

export const DOCKERFILE = path.join(ROOT, 'Dockerfile');

export interface Stage {
  /** What the stage starts from (build arguments expanded): an image, or an earlier stage's name. */
  from: string;
  name?: string;
  /** The stage's instructions after its FROM, build arguments expanded where declared. */
  instructions: string[];
}

/** Dockerfile instructions, continuation lines joined, comments dropped. */
export function instructions(file = DOCKERFILE): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
}

/** The stages of the Dockerfile built with these build arguments (an unset one expands to nothing). */
export function stages(buildArgs: Record<string, string>, file = DOCKERFILE): Stage[] {
  const expand = (line: string, declared: Set<string>) =>
    line.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
      const name = (braced ?? bare)!;
      return declared.has(name) ? (buildArgs[name] ?? '') : whole;
    });
  const global = new Set<string>();
  const result: Stage[] = [];
  let declared = new Set<string>();
  for (const line of instructions(file)) {
    if (line.startsWith('FROM ')) {
      const from = /^FROM\s+(\S*)(?:\s+AS\s+(\S+))?\s*$/i.exec(expand(line, global));
      if (!from) throw new Error(`unexpected FROM line: ${line}`);
      result.push({ from: from[1], name: from[2]?.toLowerCase(), instructions: [] });
      declared = new Set();
      continue;
    }
    const arg = /^ARG\s+(\w+)/.exec(line);
    if (arg) (result.length ? declared : global).add(arg[1]);
    if (result.length) result[result.length - 1].instructions.push(expand(line, declared));
  }
  return result;
}

export interface ServiceImage {
  /** The external image the final image starts from. */
  base: string;
  /** The stages the final image is made of, from the one on `base` to the last. */
  chain: Stage[];
  /** Their instructions in order: what the final image's layers and settings come from. */
  instructions: string[];
  /** Any stage by name (e.g. the one `COPY --from=build` reads). */
  stage(name: string): Stage | undefined;
}

/** The image of `docker build --build-arg SERVICE=<service> .` */
export function serviceImage(service: string, file = DOCKERFILE): ServiceImage {
  const all = stages({ SERVICE: service }, file);
  const chain: Stage[] = [];
  // a FROM names only a stage defined above it
  for (let i = all.length - 1; i >= 0;) {
    const stage = all[i];
    chain.unshift(stage);
    i = all.slice(0, i).findLastIndex((s) => s.name === stage.from.toLowerCase());
  }
  return {
    base: chain[0].from,
    chain,
    instructions: chain.flatMap((s) => s.instructions),
    stage: (name) => all.find((s) => s.name === name.toLowerCase()),
  };
}
