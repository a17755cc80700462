import Joi from 'joi';

/** Paging of every admin list: `limit` (1-1000, default 100) and the `cursor` a previous page returned. */
export const pageQuery = {
  limit: Joi.number().integer().min(1).max(1000).default(100),
  cursor: Joi.string().max(500),
};

/** A list's `cursor` parameter: what its pages' next_cursor look like (`base` may normalise it first). */
export const pageCursor = (pattern: RegExp, base: Joi.StringSchema = Joi.string()): Joi.StringSchema =>
  base.pattern(pattern).messages({ 'string.pattern.base': 'cursor must be the next_cursor of a previous page' });

/**
 * One page of an admin list read with `limit + 1` rows: the first `limit` rows (as JSON) under `key`,
 * and `next_cursor`, the cursor of the last of them when there are more, else null.
 */
export function listPage<T, C>(
  key: string,
  rows: readonly T[],
  limit: number,
  json: (row: T) => unknown,
  cursorOf: (row: T) => C,
): Record<string, unknown> {
  const page = rows.slice(0, limit);
  return { [key]: page.map(json), next_cursor: rows.length > limit ? cursorOf(page[page.length - 1]) : null };
}
