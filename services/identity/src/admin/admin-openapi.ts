import type { JsonSchema } from '@attest/common';

// What the admin API's component schemas (each beside its routes) share; admin-document.ts gathers them.

/** A reference to a component schema of the admin document. */
export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const strings: JsonSchema = { type: 'array', items: { type: 'string' } };

export const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  additionalProperties: false,
  properties,
});
