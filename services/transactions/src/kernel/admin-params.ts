import Joi from 'joi';

/** An app id in an admin path, query or body. */
export const APP_ID = Joi.string()
  .pattern(/^app_[0-9a-f]{32}$/)
  .messages({ 'string.pattern.base': '{{#label}} must be app_ followed by 32 hexadecimal digits' });

/** The `{app_id}` of the admin API's /apps/{app_id}/… paths, so an error names app_id. */
export const appIdParams = Joi.object({ app_id: APP_ID.required() });
