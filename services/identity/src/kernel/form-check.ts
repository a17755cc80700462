import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type Joi from 'joi';
import { AppError, errors } from '@attest/common';

/** What is wrong with a form field: absent or empty, given more than once, or not an allowed value. */
export type FieldProblem = 'missing' | 'repeated' | 'invalid';

export interface FieldFailure {
  name: string;
  problem: FieldProblem;
  /** joi's sentence, e.g. `grant_type must be [authorization_code]`. */
  message: string;
}

/** The field names of a form schema, in the order they are declared (and checked). */
export const fieldNames = (schema: Joi.ObjectSchema): string[] => Object.keys(schema.describe().keys ?? {});

/**
 * Checks form (or query) fields against their joi schemas, one by one in the order given (by default the
 * schema's own order), and returns the first failure. An empty value counts as absent, as it always has
 * on these forms; fields the schema does not name are not looked at (OAuth ignores unknown parameters).
 */
export function firstFailure(
  schema: Joi.ObjectSchema,
  source: unknown,
  names: readonly string[] = fieldNames(schema),
): FieldFailure | null {
  return firstFieldFailure(
    names.map((name) => [name, schema.extract(name)]),
    source,
  );
}

/** firstFailure with each field's schema extracted beforehand (checkForm does it once, not per request). */
function firstFieldFailure(fields: readonly (readonly [string, Joi.Schema])[], source: unknown): FieldFailure | null {
  const values = (source ?? {}) as Record<string, unknown>;
  for (const [name, fieldSchema] of fields) {
    const raw = values[name];
    const value = raw === '' ? undefined : raw;
    // no per-call options: joi would merge them into its preferences on every call (abortEarly is its default)
    const { error } = fieldSchema.validate(value);
    if (!error) continue;
    const detail = error.details[0];
    const problem: FieldProblem = Array.isArray(value)
      ? 'repeated'
      : detail.type === 'any.required'
        ? 'missing'
        : 'invalid';
    return { name, problem, message: detail.message.replace(/^"value"/, name) };
  }
  return null;
}

/**
 * A field's value as its schema reads it (trimmed where the schema trims), or undefined when it is absent,
 * empty or fails the schema (given twice, not an allowed value, too long…).
 */
export function checkedValue(schema: Joi.ObjectSchema, source: unknown, name: string): string | undefined {
  const raw = ((source ?? {}) as Record<string, unknown>)[name];
  if (raw === '' || raw === undefined) return undefined;
  const { value, error } = schema.extract(name).validate(raw) as { value: unknown; error?: Joi.ValidationError };
  return error || typeof value !== 'string' ? undefined : value;
}

/** A field given twice, as every OAuth endpoint here has always refused it (RFC 6749 §3.1, §3.2). */
export const repeatedField = (name: string) =>
  new AppError('invalid_request', 400, `The ${name} parameter must be given once.`, name);

/** The error most endpoints give: `invalid_request` for a repeat, `required`, or `invalid_parameter`, naming the field. */
export function fieldError({ name, problem, message }: FieldFailure): AppError {
  if (problem === 'repeated') return repeatedField(name);
  if (problem === 'missing') return errors.required(name);
  return errors.invalidParameter(name, `${message}.`);
}

/**
 * A step that checks the named fields of the request body with the form's joi schema. `answer` turns a
 * failure into the error the endpoint gives for that field (fieldError unless it says otherwise).
 */
export function checkForm(
  schema: Joi.ObjectSchema,
  names: readonly string[] = fieldNames(schema),
  answer: (failure: FieldFailure) => AppError = fieldError,
): RequestHandler {
  // extracted once (a name the schema does not document fails at start-up)
  const fields = names.map((name) => [name, schema.extract(name)] as const);
  return (req: Request, _res: Response, next: NextFunction) => {
    const failure = firstFieldFailure(fields, req.body);
    next(failure ? answer(failure) : undefined);
  };
}
