import type Joi from 'joi';
import { errors } from './errors';

/**
 * Validates with joi; the first problem becomes 400 `required` or `invalid_parameter` naming the field.
 * joi's defaults are what is wanted (stop at the first problem, convert, keep unknown keys), so no
 * options are passed: options given per call are merged into joi's preferences on every call, which
 * the profile of the lookups showed.
 */
export function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  const { value: result, error } = schema.validate(value);
  if (!error) return result;
  const detail = error.details[0];
  const attribute = detail.path.length ? detail.path.join('.') : String(detail.context?.key ?? '');
  if (detail.type === 'any.required' || (detail.type === 'string.empty' && attribute)) throw errors.required(attribute);
  throw errors.invalidParameter(attribute || 'body', detail.message.replace(/"/g, ''));
}

/** A query parameter as one trimmed-non-empty string; a parameter sent twice is refused naming it. */
export function queryParam(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw errors.invalidParameter(name, `${name} must be given once.`);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
