import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { signJws } from '../src/kernel/jws';
import type { KeyAlg } from '../src/kernel/key-store';

const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const payload = {
  iss: 'https://id.example',
  sub: 'pairwise-sub',
  aud: 'app',
  nonce: 'n-0S6',
  iat: 1_800_000_000,
  exp: 1_800_000_300,
};

function keysOf(alg: KeyAlg): { privateKey: KeyObject; publicKey: KeyObject } {
  return alg === 'ES256' ? ec : rsa;
}

describe('signJws: the compact JWS of the tokens we issue', () => {
  it('signs RS256 exactly as jsonwebtoken did (PKCS#1 v1.5 is deterministic): same header, payload and signature', () => {
    const ours = signJws({ alg: 'RS256', typ: 'at+jwt', kid: 'k1' }, payload, rsa.privateKey);
    const theirs = jwt.sign(payload, rsa.privateKey, {
      algorithm: 'RS256',
      keyid: 'k1',
      header: { alg: 'RS256', typ: 'at+jwt' },
    });
    expect(ours).toBe(theirs);
  });

  it.each<KeyAlg>(['RS256', 'PS256', 'ES256'])(
    '%s: jsonwebtoken verifies it with the public key and reads the header',
    (alg) => {
      const { privateKey, publicKey } = keysOf(alg);
      const token = signJws({ alg, typ: 'JWT', kid: `kid-${alg}` }, payload, privateKey);
      const verified = jwt.verify(token, publicKey, {
        algorithms: [alg],
        complete: true,
        clockTimestamp: 1_800_000_010,
      });
      expect(verified.header).toEqual({ alg, typ: 'JWT', kid: `kid-${alg}` });
      expect(verified.payload).toEqual(payload);
      if (alg === 'ES256') expect(Buffer.from(token.split('.')[2], 'base64url')).toHaveLength(64);
    },
  );

  it('a different key, or a changed payload, does not verify', () => {
    const token = signJws({ alg: 'RS256', typ: 'JWT', kid: 'k1' }, payload, rsa.privateKey);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(() => jwt.verify(token, other.publicKey, { algorithms: ['RS256'], clockTimestamp: 1_800_000_010 })).toThrow(
      'invalid signature',
    );
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...payload, sub: 'someone-else' })).toString('base64url')}.${signature}`;
    expect(() => jwt.verify(forged, rsa.publicKey, { algorithms: ['RS256'], clockTimestamp: 1_800_000_010 })).toThrow(
      'invalid signature',
    );
  });

  it('members that are undefined are left out of the payload, as JSON leaves them out', () => {
    const token = signJws({ alg: 'RS256', typ: 'JWT', kid: 'k1' }, { sub: 'a', at_hash: undefined }, rsa.privateKey);
    expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString())).toEqual({ sub: 'a' });
  });
});
