import type { NextFunction, Request, Response } from 'express';
import Joi from 'joi';
import { AppError } from '@attest/common';
import { isValidAddress } from './address';

/** Fields and checks the app API's request bodies share. */

/** An address field: lower case or a valid EIP-55 checksum; the messages name the field. */
export const address = (name: string) =>
  Joi.string()
    .pattern(/^0x[0-9a-fA-F]{40}$/)
    .custom((value: string, helpers) => (isValidAddress(value) ? value : helpers.error('address.checksum')))
    .required()
    .description('Lower case, or with a valid EIP-55 checksum')
    .messages({
      'string.pattern.base': `${name} must be an address: 0x followed by 40 hexadecimal digits`,
      'address.checksum': `${name} has mixed case but not a valid EIP-55 checksum; send it all lower case or correctly checksummed`,
    });

/** A chain name as configured in CHAIN_TOKENS (compared in lower case). */
export const chainField = Joi.string()
  .trim()
  .lowercase()
  .max(50)
  .required()
  .description('A chain name configured in CHAIN_TOKENS, e.g. worldchain');

/** A token code (compared in upper case); each use says whether it is required and what it names. */
export const tokenCode = Joi.string().trim().uppercase().max(12);

/** 400 invalid_content_type unless the body is application/json. */
export const requireJson = (req: Request, _res: Response, next: NextFunction) =>
  next(
    req.is('application/json')
      ? undefined
      : new AppError('invalid_content_type', 400, 'Invalid content type. Only application/json is supported.'),
  );
