import type Joi from 'joi';
import { errors } from './errors';

/** Validates with joi; the first problem becomes 400 `required` or `invalid_parameter` naming the field. */
export function validate<T>(schema: Joi.Schema<T>, value: unknown): T {
  const { value: result, error } = schema.validate(value, { abortEarly: true, convert: true, stripUnknown: false });
  if (!error) return result;
  const detail = error.details[0];
  const attribute = detail.path.length ? detail.path.join('.') : String(detail.context?.key ?? '');
  if (detail.type === 'any.required' || (detail.type === 'string.empty' && attribute)) throw errors.required(attribute);
  throw errors.invalidParameter(attribute || 'body', detail.message.replace(/"/g, ''));
}
