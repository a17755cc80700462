import type { RequestHandler } from 'express';
import { AppError } from '@attest/common';

export const invalidContentType = () =>
  new AppError(
    'invalid_content_type',
    400,
    'Invalid content type. Only application/x-www-form-urlencoded is supported.',
  );

/** Content-Type must be application/x-www-form-urlencoded (parameters such as charset allowed). */
export const requireFormContentType: RequestHandler = (req, _res, next) => {
  next(req.is('application/x-www-form-urlencoded') ? undefined : invalidContentType());
};

/** CORS for endpoints browsers call directly (no cookies involved). */
export function openCors(methods: string, headers = 'Authorization, Content-Type'): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res
        .set({
          'Access-Control-Allow-Methods': methods,
          'Access-Control-Allow-Headers': headers,
          'Access-Control-Max-Age': '600',
          Allow: `${methods}, OPTIONS`,
        })
        .status(204)
        .end();
      return;
    }
    next();
  };
}

export const noStore: RequestHandler = (_req, res, next) => {
  res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  next();
};
